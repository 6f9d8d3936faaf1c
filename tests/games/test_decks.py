"""Deck files and lists go through one set of checks, and every problem names its line or entry."""

from __future__ import annotations

import pytest

from games import decks
from games.base import ConfigError

WORDS = ("one", "two", "three", "four")


def test_text_and_lists_give_the_same_decks() -> None:
    assert decks.parse_keywords("# mine\napple\n\nriver\n", minimum=2) == decks.parse_keywords(["apple", "river"], minimum=2)
    assert decks.parse_pairs("sun, moon\n") == decks.parse_pairs([["sun", "moon"]]) == (("sun", "moon"),)
    assert decks.parse_cards("Numbers: one, two, three, four", size=4) == decks.parse_cards([["Numbers", WORDS]], size=4)


@pytest.mark.parametrize(
    ("parse", "raw", "options", "message"),
    [
        (decks.parse_keywords, "apple\n# note\n\nApple\n", {"minimum": 1}, "line 4: 'Apple' repeats line 1"),
        (decks.parse_keywords, ["apple", 7], {"minimum": 1}, "entry 2: a keyword must be a word"),
        (decks.parse_keywords, "apple\nriver\n", {"minimum": 3}, "needs at least 3 keywords, this one has 2"),
        (decks.parse_keywords, "x" * 41, {"minimum": 1}, "line 1: keyword 'xxxx"),
        (decks.parse_pairs, "sun, moon\nsun moon\n", {}, "line 2: expected two words"),
        (decks.parse_pairs, "sun, moon\nMoon, Sun\n", {}, "line 2: pair 'Moon'/'Sun' repeats line 1"),
        (decks.parse_pairs, "tea, Tea\n", {}, "line 1: the two words of a pair must differ"),
        (decks.parse_cards, "Numbers one two\n", {"size": 4}, "line 1: expected 'Category: word, word, ...'"),
        (decks.parse_cards, "Numbers: one, two\n", {"size": 4}, "line 1: card 'Numbers' has 2 words; a card needs 4"),
        (decks.parse_cards, "Numbers: one, two, One, four\n", {"size": 4}, "line 1: card 'Numbers' repeats a word (one)"),
        (decks.parse_cards, "A: " + ", ".join(WORDS) + "\na: " + ", ".join(WORDS), {"size": 4}, "line 2: category 'a' repeats card of line 1"),
        (decks.parse_cards, 42, {"size": 4}, "file text or a list"),
    ],
)
def test_malformed_decks_name_the_line(parse, raw, options, message) -> None:  # noqa: ANN001
    with pytest.raises(decks.DeckError) as info:
        parse(raw, **options)
    assert message in str(info.value)


def test_a_players_deck_problem_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="custom deck: line 1"):
        decks.custom(decks.parse_pairs, "just one word\n")


def test_bundled_decks_load() -> None:
    assert len(decks.keywords()) >= 500 and len(decks.pairs()) >= 150 and len(decks.cards()) >= 80
    assert all(len(words) == 16 for _, words in decks.cards())

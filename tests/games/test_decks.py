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


# --------------------------------------------------------------------------- external decks

PAIR_LIST = """villager_word, spy_word
BERT, GPT
apple, pear
"ice cream, vanilla", frozen yogurt
tea\tcoffee
"""


def test_a_published_word_pair_list_is_a_spy_deck() -> None:
    from games.spy import GAME as SPY

    pairs = decks.parse_pairs(PAIR_LIST)
    assert pairs == (("BERT", "GPT"), ("apple", "pear"), ("ice cream, vanilla", "frozen yogurt"), ("tea", "coffee"))
    cfg = SPY.make_config("spygame", deck=PAIR_LIST)
    s, _ = SPY.new(cfg, 4, 3)
    assert {s.villager_word, s.spy_word} in [set(p) for p in pairs]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("villager_word, spy_word\nBERT, GPT\napple\n", "line 3: expected two words"),
        ("BERT, GPT\napple, pear, plum\n", "line 2: expected two words"),
        ("BERT, GPT\nsun, \n", "line 2: empty word"),
        ("BERT, GPT\ngpt, bert\n", "line 2: pair 'gpt'/'bert' repeats line 1"),
    ],
)
def test_a_malformed_pair_list_names_the_line(text: str, message: str) -> None:
    from games.spy import GAME as SPY

    with pytest.raises(ConfigError, match=f"custom deck: {message}"):
        SPY.make_config("classic", deck=text)


def norms(categories: dict[str, int], extra: str = "") -> str:
    """A category-norms CSV of our own: ``n`` words per category, word k produced 100 - k times,
    written in shuffled order so the ranking must come from the frequencies."""
    rows = ["Category,Word,Frequency,Study"]
    for cat, n in categories.items():
        for k in reversed(range(n)):
            rows.append(f"{cat},{cat.lower()}{k:02d},{100 - k},b&c")
    return "\n".join(rows) + "\n" + extra


def test_category_norms_become_cards_of_the_most_frequent_words() -> None:
    from games.chameleon import GAME as CHAMELEON

    text = norms({"Birds": 20, "Tools": 16, "Fruit": 12})
    sneak = decks.parse_cards(text, size=12)
    assert [c for c, _ in sneak] == ["Birds", "Tools", "Fruit"]
    assert sneak[0][1] == tuple(f"birds{k:02d}" for k in range(12))  # most frequent first, the rest left out
    with pytest.raises(decks.DeckError, match="category 'Fruit' has 12 words; a card needs the 16 most frequent"):
        decks.parse_cards(text, size=16)
    cfg = CHAMELEON.make_config("sneak", deck=text)
    s, _ = CHAMELEON.new(cfg, 4, 2)
    assert s.card in [w for _, w in sneak] and len(s.card) == 12
    classic = CHAMELEON.make_config("classic", deck=norms({"Birds": 20, "Tools": 16}))
    assert all(len(words) == 16 for _, words in classic.deck or ())


def test_ties_keep_the_file_order() -> None:
    text = "category,word,frequency\n" + "".join(f"Odd,w{i},5\n" for i in range(14))
    assert decks.parse_cards(text, size=12)[0][1] == tuple(f"w{i}" for i in range(12))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("Birds,sparrow\n", "line 22: expected 4 columns"),
        ("Birds,sparrow,often,b&c\n", "line 22: frequency must be a number of at least 0, not 'often'"),
        ("Birds,sparrow,-3,b&c\n", "line 22: frequency must be a number"),
        ("Birds,sparrow,nan,b&c\n", "line 22: frequency must be a number"),
        ("Birds,BIRDS03,4,b&c\n", "line 22: 'BIRDS03' repeats line"),
        (",sparrow,4,b&c\n", "line 22: empty category"),
    ],
)
def test_malformed_norms_rows_are_named(extra: str, message: str) -> None:
    with pytest.raises(decks.DeckError, match=message):
        decks.parse_cards(norms({"Birds": 20}, extra), size=12)


def test_a_norms_header_without_the_columns_is_refused() -> None:
    with pytest.raises(decks.DeckError, match="missing frequency"):
        decks.parse_norms("category,word,count\nBirds,robin,3\n", size=12)


def test_a_card_of_400000_words_or_a_huge_line_is_refused_at_once() -> None:
    """Such a card once took minutes (a quadratic duplicate check) before any answer."""
    from games.decks import MAX_CARD_WORDS, MAX_LINE_CHARS, DeckError, parse_cards, parse_keywords, parse_pairs

    words = [f"w{i}" for i in range(400_000)]
    with pytest.raises(DeckError, match=f"at most {MAX_CARD_WORDS}"):
        parse_cards([("Huge", words)], size=12)
    for parse, text in ((parse_cards, "Huge: " + ", ".join(words)), (parse_keywords, "x" * 1_000_000),
                        (parse_pairs, "a, " + "b" * 1_000_000)):
        with pytest.raises(DeckError, match=f"at most {MAX_LINE_CHARS}") as err:
            parse(text)
        assert len(str(err.value)) < 200

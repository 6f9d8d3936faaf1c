"""Just One's configuration: seats, the round of cards, the word bank, the config and the deal as data."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from games import deals, decks
from games.base import ConfigError, Seat, one_of, whole_number
from games.text import fold

MIN_SEATS, MAX_SEATS = 3, 7
CARDS = 13
TARGET = 7
CLUE_MAX_CHARS = 30
GUESS_MAX_WORDS, GUESS_MAX_CHARS = 2, 30
PASS = "pass"
"""The guess that skips a card (the timeout action of a guess): only the card is lost."""
WORDS_FILE = "justone_words.txt"


class Variant(StrEnum):
    CLASSIC = "classic"  # the published game: 13 cards, one try per card


class Role(StrEnum):
    """A seat's part in a game: every seat guesses some cards and gives clues for the others."""

    PLAYER = "player"


class Side(StrEnum):
    TABLE = "table"  # cooperative: the whole table wins or loses together


class Phase(StrEnum):
    CLUES = "clues"
    GUESS = "guess"
    OVER = "over"


# --------------------------------------------------------------------------- word bank


def parse_words(raw: str | list[object] | tuple[object, ...], *, minimum: int = CARDS) -> tuple[str, ...]:
    """A word list (file text, one word a line, or a list): distinct single words of letters."""
    words = decks.parse_keywords(raw, minimum=minimum)
    for i, w in enumerate(words, start=1):
        if not fold(w).isalpha():
            raise decks.DeckError(f"word {i}: {w!r} is not a single word of letters")
        if fold(w) == PASS:
            raise decks.DeckError(f"word {i}: {PASS!r} is how a guesser skips a card, not a word to guess")
    return words


@cache
def bundled_words() -> tuple[str, ...]:
    return parse_words(decks.bundled(WORDS_FILE))


# --------------------------------------------------------------------------- the deal


@dataclass(frozen=True, slots=True)
class JustOneDeal:
    """A Just One deal: ``{"words": [a word per card, in play order], "first": seat}``; either
    key may be left out to draw it from the seed. ``first`` is the first card's guesser."""

    words: tuple[str, ...] | None = None
    first: Seat | None = None


DEAL_KEYS = ("words", "first")


def parse_deal(raw: object, cards: int) -> JustOneDeal:
    if isinstance(raw, JustOneDeal):
        raw = {"words": raw.words, "first": raw.first}
    given = deals.mapping(raw, DEAL_KEYS)
    words = None
    if given.get("words") is not None:
        listed = given["words"]
        if not isinstance(listed, (list, tuple)) or len(listed) != cards:
            raise deals.error(f"words must be a list of {cards} words, one per card")
        words = tuple(deals.word(f"word {i}", w) for i, w in enumerate(listed, start=1))
        for i, w in enumerate(words, start=1):
            if not fold(w).isalpha() or fold(w) == PASS:
                raise deals.error(f"word {i} must be a single word of letters")
            if any(deals.same(w, earlier) for earlier in words[: i - 1]):
                raise deals.error(f"word {i} is dealt twice")
    first = None if given.get("first") is None else deals.seat("first", given["first"])
    return JustOneDeal(words, first)


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class JustOneConfig:
    """A validated Just One configuration; build it with ``GAME.make_config``.

    ``cards``: cards in the round (13, the published game; fewer for a short game);
    ``target``: cards the table must find to win together (default 7, or every card of a
    shorter round; the published scoring calls 7-8 "a good start" and 9-10 "you're in the team")."""

    variant: Variant = Variant.CLASSIC
    cards: int = CARDS
    target: int | None = None
    deck: tuple[str, ...] | None = None
    """The word bank: None plays the bundled one; otherwise the custom words themselves, so replay is exact."""
    deal: JustOneDeal | None = None


def validate(cfg: JustOneConfig) -> JustOneConfig:
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        cards=whole_number("cards", cfg.cards, 1, CARDS),
        deck=None if cfg.deck is None else decks.custom(parse_words, cfg.deck),
    )
    target = min(TARGET, cfg.cards) if cfg.target is None else whole_number("target", cfg.target, 0, cfg.cards)
    cfg = dataclasses.replace(cfg, target=target)
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=parse_deal(cfg.deal, cfg.cards))
    if len(word_bank(cfg)) < cfg.cards:
        raise ConfigError(f"the word bank needs at least {cfg.cards} words")
    return cfg


def target(cfg: JustOneConfig) -> int:
    """Cards the table must find (``validate`` always sets it)."""
    return min(TARGET, cfg.cards) if cfg.target is None else cfg.target


def check_seats(cfg: JustOneConfig, seats: int) -> None:
    """What a deal can only be checked against once the table's size is known."""
    if cfg.deal is not None and cfg.deal.first is not None:
        deals.in_range("first", (cfg.deal.first,), seats)


def word_bank(cfg: JustOneConfig) -> tuple[str, ...]:
    return bundled_words() if cfg.deck is None else cfg.deck

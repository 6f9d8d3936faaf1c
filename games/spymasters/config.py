"""Spymasters configuration: teams, cards, the word bank and deals as data.

Everything here is checked once, when a config is made: a custom word list, the guessing
rule and a deal (``cfg.deal``). What can only be checked against the table (the seats of
the dealt spymasters) is checked when the game is dealt (``check_seats``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache

from games import deals, decks
from games.base import ConfigError, Seat, one_of
from games.text import fold

MIN_SEATS, MAX_SEATS = 4, 8
BOARD_SIZE = 25
COLUMNS = 5  # the board is drawn in rows of five (a 5x5 grid)
STARTING_WORDS, OTHER_WORDS, BYSTANDERS, ASSASSINS = 9, 8, 7, 1
CLUE_MAX_CHARS = 30
WORDS_FILE = "spymasters_words.txt"


class Team(StrEnum):
    RED = "red"
    BLUE = "blue"

    @property
    def other(self) -> Team:
        return Team.BLUE if self is Team.RED else Team.RED


class Card(StrEnum):
    """What a word is on the key: a team's word, an innocent bystander or the assassin."""

    RED = "red"
    BLUE = "blue"
    BYSTANDER = "bystander"
    ASSASSIN = "assassin"

    @classmethod
    def of(cls, team: Team) -> Card:
        return cls(team.value)


class Role(StrEnum):
    SPYMASTER = "spymaster"
    GUESSER = "guesser"


class Variant(StrEnum):
    CLASSIC = "classic"  # the party game: 25 words, 9/8/7/1, one spymaster a team


class Guessing(StrEnum):
    """How a team with several guessers makes each guess."""

    VOTE = "vote"  # every guesser votes at once; the most-voted pick is played
    CAPTAIN = "captain"  # the team's lowest-seated guesser decides alone


TEAMS: tuple[Team, Team] = (Team.RED, Team.BLUE)


def team_of(seat: Seat) -> Team:
    """Teams sit alternately: even seats are red, odd seats blue (the table's seating is drawn)."""
    return Team.RED if seat % 2 == 0 else Team.BLUE


def seats_of(team: Team, seats: int) -> tuple[Seat, ...]:
    return tuple(s for s in range(seats) if team_of(s) is team)


# --------------------------------------------------------------------------- word bank


def parse_words(raw: str | Sequence[object], *, minimum: int = BOARD_SIZE) -> tuple[str, ...]:
    """A word list (file text, one word a line, or a list): distinct single words of letters."""
    words = decks.parse_keywords(raw, minimum=minimum)
    for i, w in enumerate(words, start=1):
        if not fold(w).isalpha():
            raise decks.DeckError(f"word {i}: {w!r} is not a single word of letters")
    return words


@cache
def bundled_words() -> tuple[str, ...]:
    return parse_words(decks.bundled(WORDS_FILE))


# --------------------------------------------------------------------------- deals


@dataclass(frozen=True, slots=True)
class Deal:
    """A Spymasters deal: ``{"words": [25 words], "key": [25 of red/blue/bystander/assassin],
    "starting": "red"|"blue", "spymasters": [red seat, blue seat]}``; any key may be left out
    to draw it from the seed. A key must hold 9 words of the starting team, 8 of the other, 7
    bystanders and 1 assassin; a key without ``starting`` names the starting team by its 9."""

    words: tuple[str, ...] | None = None
    key: tuple[Card, ...] | None = None
    starting: Team | None = None
    spymasters: tuple[Seat, Seat] | None = None


DEAL_KEYS = ("words", "key", "starting", "spymasters")


def key_counts(starting: Team) -> dict[Card, int]:
    return {Card.of(starting): STARTING_WORDS, Card.of(starting.other): OTHER_WORDS,
            Card.BYSTANDER: BYSTANDERS, Card.ASSASSIN: ASSASSINS}


def _parse_words(raw: object) -> tuple[str, ...]:
    if not isinstance(raw, (list, tuple)) or len(raw) != BOARD_SIZE:
        raise deals.error(f"words must be a list of {BOARD_SIZE} words")
    words = tuple(deals.word(f"word {i}", w) for i, w in enumerate(raw, start=1))
    for i, w in enumerate(words, start=1):
        if not fold(w).isalpha():
            raise deals.error(f"word {i} ({w!r}) must be a single word of letters")
        if any(deals.same(w, earlier) for earlier in words[: i - 1]):
            raise deals.error(f"word {i} ({w!r}) is on the board twice")
    return words


def _parse_key(raw: object, starting: Team | None) -> tuple[tuple[Card, ...], Team]:
    if not isinstance(raw, (list, tuple)) or len(raw) != BOARD_SIZE:
        raise deals.error(f"key must be a list of {BOARD_SIZE} cards")
    names = ", ".join(c.value for c in Card)
    key = []
    for i, c in enumerate(raw, start=1):
        if not isinstance(c, str) or c not in {m.value for m in Card}:
            raise deals.error(f"key entry {i} must be one of {names}, not {c!r}")
        key.append(Card(c))
    nines = [t for t in TEAMS if key.count(Card.of(t)) == STARTING_WORDS]
    start = starting if starting is not None else (nines[0] if nines else Team.RED)
    want = key_counts(start)
    if any(key.count(card) != n for card, n in want.items()):
        counts = ", ".join(f"{n} {card.value}" for card, n in want.items())
        raise deals.error(f"a key with {start.value} starting holds {counts}")
    return tuple(key), start


def parse_deal(raw: object) -> Deal:
    if isinstance(raw, Deal):
        raw = {f: getattr(raw, f) for f in DEAL_KEYS}
    given = deals.mapping(raw, DEAL_KEYS)
    starting = None
    if given.get("starting") is not None:
        try:
            starting = Team(given["starting"])
        except ValueError:
            raise deals.error(f"starting must be red or blue, not {given['starting']!r}") from None
    words = None if given.get("words") is None else _parse_words(given["words"])
    key = None
    if given.get("key") is not None:
        key, starting = _parse_key(given["key"], starting)
    spymasters = None
    if given.get("spymasters") is not None:
        pair = deals.seats("spymasters", given["spymasters"])
        if len(pair) != 2:
            raise deals.error("spymasters is a list of two seats: red's, then blue's")
        for team, seat in zip(TEAMS, pair, strict=True):
            if team_of(seat) is not team:
                raise deals.error(f"seat {seat} sits on the {team_of(seat).value} team; "
                                  f"{team.value}'s spymaster must be an {'even' if team is Team.RED else 'odd'} seat")
        spymasters = (pair[0], pair[1])
    return Deal(words, key, starting, spymasters)


def check_seats(cfg: SpymastersConfig, seats: int) -> None:
    """What a deal can only be checked against once the table's size is known."""
    if not MIN_SEATS <= seats <= MAX_SEATS:
        raise ConfigError(f"Spymasters needs {MIN_SEATS} to {MAX_SEATS} players, not {seats}")
    if cfg.deal is not None and cfg.deal.spymasters is not None:
        deals.in_range("spymasters", cfg.deal.spymasters, seats)


# --------------------------------------------------------------------------- config


@dataclass(frozen=True, slots=True)
class SpymastersConfig:
    """A validated Spymasters configuration; build it with ``GAME.make_config``."""

    variant: Variant = Variant.CLASSIC
    guessing: Guessing = Guessing.VOTE
    deck: tuple[str, ...] | None = None
    """The word bank: None plays the bundled one; otherwise the custom words themselves, so replay is exact."""
    deal: Deal | None = None


def validate(cfg: SpymastersConfig) -> SpymastersConfig:
    cfg = dataclasses.replace(
        cfg,
        variant=one_of(Variant, "variant", cfg.variant),
        guessing=one_of(Guessing, "guessing", cfg.guessing),
        deck=None if cfg.deck is None else decks.custom(parse_words, cfg.deck),
    )
    if cfg.deal is not None:
        cfg = dataclasses.replace(cfg, deal=parse_deal(cfg.deal))
    return cfg


def word_bank(cfg: SpymastersConfig) -> tuple[str, ...]:
    return bundled_words() if cfg.deck is None else cfg.deck

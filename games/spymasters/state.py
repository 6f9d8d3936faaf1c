"""Spymasters state: the frozen records a game is made of, and the questions rules ask of them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Any

from games.base import Event, Seat
from games.spymasters.config import TEAMS, Card, Guessing, SpymastersConfig, Team, seats_of

STOP = "_stop"
"""The option id of "stop guessing" (board words are letters only, so it names no word)."""
PASS = "_pass"
"""The timeout action of a guesser: a vote for nothing; a turn nobody votes in ends."""


class Phase(Enum):
    CLUE = "clue"  # the spymaster writes a clue word
    NUMBER = "number"  # the spymaster says how many words it points to
    GUESS = "guess"  # the guessers pick words one at a time
    OVER = "over"


class TurnEnd(StrEnum):
    """Why a team's turn ended."""

    STOPPED = "stopped"  # the guessers chose to stop (or nobody voted)
    LIMIT = "limit"  # number + 1 words guessed
    BYSTANDER = "bystander"
    OPPONENT = "opponent"  # the other team's word
    ASSASSIN = "assassin"  # the game is lost
    FINISHED = "finished"  # the last word of a team was found: the game is over


class Ending(StrEnum):
    ALL_FOUND = "all_found"  # a team's words were all revealed (possibly by the other team)
    ASSASSIN = "assassin"  # the guessing team picked the assassin and lost


@dataclass(frozen=True, slots=True)
class Guess:
    """One revealed word: which team guessed it, and the votes that chose it (voter, pick)."""

    team: Team
    word: str
    card: Card
    votes: tuple[tuple[Seat, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"team": self.team.value, "word": self.word, "card": self.card.value,
                "votes": [{"seat": s, "pick": p} for s, p in self.votes]}


@dataclass(frozen=True, slots=True)
class ClueRecord:
    """One clue and what came of it. ``hidden`` are the board indices unrevealed when it was given."""

    turn: int
    team: Team
    spymaster: Seat
    clue: str
    number: int
    hidden: tuple[int, ...]
    guesses: tuple[Guess, ...] = ()
    ended: TurnEnd | None = None

    @property
    def found(self) -> int:
        """Own words the team found on this clue."""
        own = Card.of(self.team)
        return sum(1 for g in self.guesses if g.card is own)

    def to_json(self) -> dict[str, Any]:
        return {"turn": self.turn, "team": self.team.value, "spymaster": self.spymaster, "clue": self.clue,
                "number": self.number, "guesses": [g.to_json() for g in self.guesses], "found": self.found,
                "ended": None if self.ended is None else self.ended.value}


@dataclass(frozen=True, slots=True)
class SpymastersState:
    config: SpymastersConfig
    seats: int
    seed: int
    words: tuple[str, ...]
    key: tuple[Card, ...]
    starting: Team
    spymasters: tuple[Seat, Seat]
    """Red's spymaster, then blue's."""
    phase: Phase
    turn: Team
    turn_no: int
    revealed: tuple[int, ...]
    """Board indices in the order they were revealed."""
    pending: str | None
    """The clue word the spymaster has written, waiting for its number (the spymaster's only)."""
    clue: ClueRecord | None
    """The clue being guessed."""
    votes: tuple[tuple[Seat, str], ...]
    """The open vote on the next guess: (guesser, option id or PASS)."""
    history: tuple[ClueRecord, ...]
    winner: Team | None
    ending: Ending | None
    log: tuple[Event, ...]


# --------------------------------------------------------------------------- questions


def spymaster(s: SpymastersState, team: Team) -> Seat:
    return s.spymasters[TEAMS.index(team)]


def guessers(s: SpymastersState, team: Team) -> tuple[Seat, ...]:
    return tuple(x for x in seats_of(team, s.seats) if x != spymaster(s, team))


def voters(s: SpymastersState) -> tuple[Seat, ...]:
    """The seats that make the current team's guesses: all its guessers, or its captain alone."""
    team = guessers(s, s.turn)
    return team[:1] if s.config.guessing is Guessing.CAPTAIN else team


def is_spymaster(s: SpymastersState, seat: Seat) -> bool:
    return seat in s.spymasters


def hidden(s: SpymastersState) -> tuple[int, ...]:
    """Board indices not yet revealed, in board order."""
    shown = set(s.revealed)
    return tuple(i for i in range(len(s.words)) if i not in shown)


def remaining(s: SpymastersState, team: Team) -> int:
    card = Card.of(team)
    return sum(1 for i in hidden(s) if s.key[i] is card)


def guesses_left(s: SpymastersState) -> int:
    """Guesses the team may still make on the current clue (the number plus one)."""
    if s.clue is None:
        return 0
    return s.clue.number + 1 - len(s.clue.guesses)


def words_by_card(words: tuple[str, ...], key: tuple[Card, ...]) -> Mapping[Card, list[str]]:
    return {card: [w for w, c in zip(words, key, strict=True) if c is card] for card in Card}

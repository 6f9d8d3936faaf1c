"""Just One state: the frozen records a game is made of, and the questions the rules ask of them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from games.base import Event, Seat
from games.justone.config import JustOneConfig, Phase


class Outcome(StrEnum):
    """What became of a card."""

    FOUND = "found"  # the guesser named the word: the card scores
    WRONG = "wrong"  # a wrong guess: the card is lost, and the next card with it
    PASSED = "passed"  # the guesser skipped: only this card is lost
    DISCARDED = "discarded"  # lost to the wrong guess before it, never played


class Why(StrEnum):
    """Why a clue was removed before the guesser saw it."""

    DUPLICATE = "duplicate"  # another clue-giver wrote the same word (after normalisation)
    INVALID = "invalid"  # it names the secret word or a form of it


@dataclass(frozen=True, slots=True)
class Clue:
    seat: Seat
    text: str
    removed: Why | None = None

    def to_json(self) -> dict[str, object]:
        return {"seat": self.seat, "clue": self.text, "removed": self.removed.value if self.removed else None}


@dataclass(frozen=True, slots=True)
class CardRecord:
    """One card as it was played (or discarded)."""

    card: int  # 1-based position in the round
    word: str
    guesser: Seat | None  # None: discarded unplayed
    clues: tuple[Clue, ...]
    guess: str | None
    outcome: Outcome

    def to_json(self) -> dict[str, object]:
        return {"card": self.card, "word": self.word, "guesser": self.guesser, "clues": [c.to_json() for c in self.clues],
                "guess": self.guess, "outcome": self.outcome.value}


@dataclass(frozen=True, slots=True)
class JustOneState:
    config: JustOneConfig
    seats: int
    seed: int
    words: tuple[str, ...]  # one per card, in play order
    first: Seat  # the first card's guesser
    phase: Phase
    card: int  # index into ``words`` of the card in play
    guesser: Seat
    clues: tuple[Clue, ...]  # this card's clues, in the order they were written
    history: tuple[CardRecord, ...]
    penalty: int  # a wrong guess on the last card costs one found card
    log: tuple[Event, ...]

    @property
    def word(self) -> str:
        return self.words[self.card]

    @property
    def givers(self) -> tuple[Seat, ...]:
        return tuple(s for s in range(self.seats) if s != self.guesser)

    @property
    def score(self) -> int:
        return max(0, sum(1 for r in self.history if r.outcome is Outcome.FOUND) - self.penalty)

    @property
    def played(self) -> int:
        """Cards played so far (discarded cards are not): the guesser rotates with them."""
        return sum(1 for r in self.history if r.guesser is not None)


def to_act(s: JustOneState) -> frozenset[Seat]:
    """Clue-givers who have not written yet, all at once; then the guesser; nobody once over."""
    if s.phase is Phase.CLUES:
        done = {c.seat for c in s.clues}
        return frozenset(x for x in s.givers if x not in done)
    if s.phase is Phase.GUESS:
        return frozenset({s.guesser})
    return frozenset()


def deal_of(s: JustOneState) -> dict[str, object]:
    """The complete deal: every card's word in play order and the first guesser."""
    return {"words": list(s.words), "first": s.first}

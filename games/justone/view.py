"""The view a Just One seat reads: its typed keys and what each seat may know."""

from __future__ import annotations

from typing import TypedDict

from games.base import Seat
from games.justone.config import Phase, target
from games.justone.state import JustOneState


class ShownClue(TypedDict):
    seat: Seat
    clue: str


class CheckedClue(TypedDict):
    """A clue as the clue-givers see it once all are in: ``removed`` is None, "duplicate" or "invalid"."""

    seat: Seat
    clue: str
    removed: str | None


class PastCard(TypedDict):
    """A card already played (or discarded): everything about it is public."""

    card: int
    word: str
    guesser: Seat | None
    clues: list[CheckedClue]
    guess: str | None
    outcome: str


class JustOneView(TypedDict):
    """``Observation.view`` of Just One: what one seat may know (see ``view_of``)."""

    variant: str
    phase: str
    seats: int
    my_seat: Seat
    cards: int
    target: int
    card: int
    guesser: Seat
    i_guess: bool
    word: str | None
    my_clue: str | None
    written: list[Seat]
    clues: list[ShownClue]
    removed: list[Seat]
    checked: list[CheckedClue]
    history: list[PastCard]
    score: int
    waiting_for: list[Seat]


def view_of(s: JustOneState, seat: Seat, acting: frozenset[Seat]) -> JustOneView:
    """What ``seat`` may know:

    - ``card`` (1-based) of ``cards``, ``target``, the ``guesser`` and ``i_guess``;
    - ``word``: the secret word for its clue-givers, None for the guesser (and once over);
    - ``my_clue``: this seat's clue for the card in play; ``written``: seats whose clue is in;
    - ``clues``: the clues the guesser sees (once all are in), ``removed``: whose were removed;
    - ``checked``: every clue with why it was removed, for the clue-givers only;
    - ``history``: every card played or discarded; ``score``: cards found so far.
    """
    giver = seat != s.guesser and s.phase is not Phase.OVER
    mine = next((c.text for c in s.clues if c.seat == seat), None)
    shown = s.phase is Phase.GUESS
    return {
        "variant": s.config.variant.value,
        "phase": s.phase.value,
        "seats": s.seats,
        "my_seat": seat,
        "cards": s.config.cards,
        "target": target(s.config),
        "card": min(s.card + 1, s.config.cards),
        "guesser": s.guesser,
        "i_guess": seat == s.guesser and s.phase is not Phase.OVER,
        "word": s.word if giver else None,
        "my_clue": mine,
        "written": sorted(c.seat for c in s.clues),
        "clues": [{"seat": c.seat, "clue": c.text} for c in s.clues if shown and c.removed is None],
        "removed": sorted(c.seat for c in s.clues if shown and c.removed is not None),
        "checked": [{"seat": c.seat, "clue": c.text, "removed": c.removed.value if c.removed else None}
                    for c in s.clues if shown and giver],
        "history": [{"card": r.card, "word": r.word, "guesser": r.guesser,
                     "clues": [{"seat": c.seat, "clue": c.text, "removed": c.removed.value if c.removed else None}
                               for c in r.clues],
                     "guess": r.guess, "outcome": r.outcome.value} for r in s.history],
        "score": s.score,
        "waiting_for": sorted(acting),
    }

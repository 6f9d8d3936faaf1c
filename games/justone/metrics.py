"""Just One numbers: each seat's part in a game, and the table's numbers over many games.

Per seat: cards it guessed and found, clues it gave, how many of them reached the guesser,
and how many were removed as duplicates (they cost the table a clue) or as invalid. Over
games: the mean score, the win rate, the share of played cards found, and the shares of
clues removed. Pure functions over finished games' ``Result.details``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from games.base import Result
from games.descriptor import Measured, SeatOutcome
from games.justone.config import Role, Side

if TYPE_CHECKING:
    from games.record import Record


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


def seat_stats(details: Mapping[str, Any], seat: int) -> dict[str, float]:
    played = [c for c in details["played"] if c["guesser"] is not None]
    guessed = [c for c in played if c["guesser"] == seat]
    mine = [clue for c in played for clue in c["clues"] if clue["seat"] == seat]
    return {
        "guessed": float(len(guessed)),
        "found": float(sum(1 for c in guessed if c["outcome"] == "found")),
        "clues_given": float(len(mine)),
        "clues_kept": float(sum(1 for c in mine if c["removed"] is None)),
        "duplicates": float(sum(1 for c in mine if c["removed"] == "duplicate")),
        "invalid": float(sum(1 for c in mine if c["removed"] == "invalid")),
        "score": float(details["score"]),
    }


def read_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Every seat plays for the table: one side, won or lost together."""
    d = result.details
    return [SeatOutcome(seat, Role.PLAYER, Side.TABLE, bool(d["won"]), seat_stats(d, seat)) for seat in range(rec.seats)]


def summarize(measured: Sequence[Measured]) -> dict[str, Any]:
    """The game's numbers over measured games of one variant (``hushtable stats``)."""
    return game_metrics(m.result.details for m in measured)


def game_metrics(games: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    details = list(games)
    n = len(details)
    played = [c for d in details for c in d["played"] if c["guesser"] is not None]
    clues = [clue for c in played for clue in c["clues"]]
    return {
        "games": n,
        "mean_score": _rate(sum(int(d["score"]) for d in details), n),
        "win_rate": _rate(sum(1 for d in details if d["won"]), n),
        "found_rate": _rate(sum(1 for c in played if c["outcome"] == "found"), len(played)),
        "pass_rate": _rate(sum(1 for c in played if c["outcome"] == "passed"), len(played)),
        "duplicate_rate": _rate(sum(1 for c in clues if c["removed"] == "duplicate"), len(clues)),
        "invalid_rate": _rate(sum(1 for c in clues if c["removed"] == "invalid"), len(clues)),
    }

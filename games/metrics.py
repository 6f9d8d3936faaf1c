"""Per-seat outcomes and the papers' metrics over any set of game records.

Pure functions over ``games.record.Record``: every record is replayed through
its engine, so the engine (not a stored summary) decides roles, tokens, votes
and winners. Used by ``hushtable stats`` and by tournament leaderboards.

What a game measures is its own: its descriptor's ``read_seats`` (each seat's role,
side, win and numbers) and ``summarize`` (the papers' metrics over a set of games of
one variant) live in ``games/<game>/metrics.py``. This module replays, groups by game
and variant, and asks the game. A game without them (or without a descriptor at all)
is still measured: every seat a player on its own side, and its games counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from games.base import Result
from games.catalog import find
from games.descriptor import GameDescriptor, Measured, SeatOutcome, SeatRole, Side
from games.record import Record, replay_record

__all__ = [
    "GameNotOver", "Measured", "SeatOutcome", "SeatRole", "Side", "game_metrics", "generic_metrics", "generic_seats",
    "measure", "metrics_of", "rate", "seat_outcomes", "won",
]


class GameNotOver(ValueError):
    """The record stops before the game ends: it has no outcome to measure."""


def measure(rec: Record) -> Measured:
    """Replay a record and read the seats' outcomes; raises GameNotOver or RecordError."""
    _, _, result = replay_record(rec)
    if result is None:
        raise GameNotOver(f"this {rec.game.id} game is not over ({len(rec.actions)} actions)")
    variant = str(rec.config.variant)
    d = find(rec.game.id)
    reader = d.read_seats if d is not None and d.read_seats is not None else generic_seats
    return Measured(rec.game.id, variant, result, tuple(reader(rec, variant, result)))


def seat_outcomes(rec: Record) -> list[SeatOutcome]:
    """Each seat's role, side, win (None on a draw) and numbers, from the replayed game."""
    return list(measure(rec).seats)


def won(result: Result, seat: int) -> bool | None:
    """Whether the seat is among the winners; None when the game is a draw (no winners)."""
    return None if not result.winners else seat in result.winners


def generic_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Every seat a player on its own side, won or lost as the result says (a game that
    declares no seat reader)."""
    return [SeatOutcome(seat, SeatRole.PLAYER, Side.SELF, won(result, seat)) for seat in range(rec.seats)]


def rate(num: float, den: float) -> float | None:
    """A ratio, or None when there is nothing to divide by (no games, no rounds)."""
    return num / den if den else None


def generic_metrics(games: Sequence[Measured]) -> dict[str, Any]:
    """How many games, and how many ended in a draw (a game that declares no summary)."""
    return {"games": len(games), "draw_rate": rate(sum(1 for g in games if not g.result.winners), len(games))}


def _summary(d: GameDescriptor | None, games: Sequence[Measured]) -> dict[str, Any]:
    summarize = d.summarize if d is not None and d.summarize is not None else generic_metrics
    return summarize(games)


def metrics_of(measured: Iterable[Measured]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{game: {variant: metrics}}`` over already replayed games."""
    groups: dict[tuple[str, str], list[Measured]] = {}
    for m in measured:
        groups.setdefault((m.game, m.variant), []).append(m)
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for (game, variant), ms in sorted(groups.items()):
        out.setdefault(game, {})[variant] = _summary(find(game), ms)
    return out


def game_metrics(recs: Iterable[Record]) -> dict[str, dict[str, dict[str, Any]]]:
    """The papers' metrics per game and variant: ``{game: {variant: metrics}}``.

    Every record must be a finished game (GameNotOver otherwise); variants are
    kept apart because their rules (and so their numbers) differ.
    """
    return metrics_of(measure(r) for r in recs)

"""Repository functions for SNEAK evaluations (the ``evaluations`` table).

Writes are idempotent per move, evaluator and settings: ``save_evaluations``
inserts the records whose key (game_id, action_seq, part, evaluator,
settings) is not stored yet and skips the rest, in one transaction, so a
re-run of ``hushtable sneak score`` adds only what is new. The unique
constraint ``uq_evaluations_move`` backs this up against a concurrent writer.

This module uses the Store's public units of work (``write()``/``read()``) so that its writes take
the same write lock (and, for SQLite, ``BEGIN IMMEDIATE``) as every other
write of the bot.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, select

from storage.ports import GameReader, UnitsOfWork
from storage.records import GameLog
from storage.tables import EvaluationRow, GameRow, GameStatus, table_of, utcnow

_evaluations = table_of(EvaluationRow)

Key = tuple[int, int, int, str, str]
"""(game_id, action_seq, part, evaluator, settings digest)"""

@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One evaluation to store; metrics in [0, 1], None when the judgement failed (``error`` says why)."""

    game_id: int
    action_seq: int
    part: int
    game: str
    evaluator: str
    settings: str
    settings_json: dict[str, Any]
    instance: dict[str, Any]
    decoys: Sequence[str]
    perm_seed: int
    ally_probs: Sequence[float] | None
    cham_probs: Sequence[float] | None
    utility: float | None
    leakage: float | None
    soft: float | None
    binary: float | None
    error: str | None = None
    metric: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> Key:
        return (self.game_id, self.action_seq, self.part, self.evaluator, self.settings)


def _values(r: EvaluationRecord, now: datetime) -> dict[str, Any]:
    return {
        "game_id": r.game_id, "action_seq": r.action_seq, "part": r.part, "game": r.game, "evaluator": r.evaluator,
        "settings": r.settings, "settings_json": dict(r.settings_json), "instance": dict(r.instance),
        "decoys": list(r.decoys), "perm_seed": r.perm_seed,
        "ally_probs": list(r.ally_probs) if r.ally_probs is not None else None,
        "cham_probs": list(r.cham_probs) if r.cham_probs is not None else None,
        "utility": r.utility, "leakage": r.leakage, "soft": r.soft, "binary": r.binary, "error": r.error,
        "metric": dict(r.metric), "created_at": now,
    }  # fmt: skip


async def save_evaluations(store: UnitsOfWork, records: Sequence[EvaluationRecord]) -> int:
    """Insert the records not stored yet (by key); returns how many were inserted."""
    if not records:
        return 0
    game_ids = sorted({r.game_id for r in records})
    now = utcnow()
    async with store.write() as conn:
        rows = await conn.execute(
            sa.select(_evaluations.c.game_id, _evaluations.c.action_seq, _evaluations.c.part, _evaluations.c.evaluator,
                      _evaluations.c.settings).where(_evaluations.c.game_id.in_(game_ids))
        )
        have: set[Key] = {(r[0], r[1], r[2], r[3], r[4]) for r in rows.all()}
        fresh: dict[Key, EvaluationRecord] = {}
        for r in records:
            if r.key not in have and r.key not in fresh:
                fresh[r.key] = r
        if fresh:
            await conn.execute(sa.insert(_evaluations), [_values(r, now) for r in fresh.values()])
        return len(fresh)


async def scored_keys(store: UnitsOfWork, game_ids: Iterable[int]) -> set[Key]:
    """Keys already stored for these games."""
    ids = sorted(set(game_ids))
    if not ids:
        return set()
    async with store.read() as s:
        q = select(EvaluationRow).where(col(EvaluationRow.game_id).in_(ids))
        return {(r.game_id, r.action_seq, r.part, r.evaluator, r.settings) for r in (await s.exec(q)).all()}


async def evaluations(
    store: UnitsOfWork,
    *,
    game_ids: Iterable[int] | None = None,
    evaluators: Iterable[str] | None = None,
    since: datetime | None = None,
) -> list[EvaluationRow]:
    """Stored evaluations (of these games / evaluators / games created since), oldest first."""
    async with store.read() as s:
        q = select(EvaluationRow)
        if game_ids is not None:
            q = q.where(col(EvaluationRow.game_id).in_(sorted(set(game_ids))))
        if evaluators is not None:
            q = q.where(col(EvaluationRow.evaluator).in_(sorted(set(evaluators))))
        if since is not None:
            q = q.join(GameRow, col(GameRow.id) == col(EvaluationRow.game_id)).where(col(GameRow.created_at) >= since)
        q = q.order_by(col(EvaluationRow.game_id), col(EvaluationRow.action_seq), col(EvaluationRow.part),
                       col(EvaluationRow.id))
        return list((await s.exec(q)).all())


async def games_to_score(store: GameReader, *, games: Sequence[str], game_id: int | None = None,
                         since: datetime | None = None) -> list[GameLog]:
    """Finished games of ``games`` (the ids of the games whose descriptors declare clue scoring),
    one game or those created at or after ``since``."""
    if game_id is not None:
        row = await store.game(game_id)
        if row is None or row.game not in games or row.status != GameStatus.FINISHED.value:
            return []
        return [await store.load_game(game_id)]
    rows = await store.games(status=GameStatus.FINISHED, since=since)
    return [await store.load_game(r.id) for r in rows if r.id is not None and r.game in games]


def evaluation_json(r: EvaluationRow) -> dict[str, Any]:
    """One stored evaluation as the export writes it (``hushtable.game/1``'s ``evaluations`` list)."""
    return {
        "action_seq": r.action_seq, "part": r.part, "game": r.game, "evaluator": r.evaluator, "settings": r.settings,
        "settings_json": r.settings_json, "instance": r.instance, "decoys": r.decoys, "perm_seed": r.perm_seed,
        "ally_probs": r.ally_probs, "cham_probs": r.cham_probs, "utility": r.utility, "leakage": r.leakage,
        "soft": r.soft, "binary": r.binary, "error": r.error, "metric": r.metric,
        "created_at": r.created_at.isoformat() if r.created_at else None,
    }  # fmt: skip


async def evaluations_json(store: UnitsOfWork, game_id: int) -> list[dict[str, Any]]:
    """A game's stored evaluations, JSON-ready (no personal data: the instance holds no speaker)."""
    return [evaluation_json(r) for r in await evaluations(store, game_ids=[game_id])]

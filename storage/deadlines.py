"""Deadlines of human turns: pending until they fire (done) or the seat acts (cancelled).

A deadline fires once: ``finish_deadline`` is a conditional pending → done, and only
the caller that gets True acts on it.
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col, select

from storage.database import Database
from storage.tables import DeadlineRow, DeadlineState, inserted_id, table_of, utcnow

_deadlines = table_of(DeadlineRow)


async def cancel_pending(conn: AsyncConnection, game_id: int, seat: int | None = None) -> int:
    """Cancel a game's (or one seat's) pending deadlines inside the caller's write transaction."""
    cond = [_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING]
    if seat is not None:
        cond.append(_deadlines.c.seat == seat)
    res = await conn.execute(sa.update(_deadlines).where(*cond).values(state=DeadlineState.CANCELLED))
    return int(res.rowcount)


class DeadlineRepository:
    """Set, cancel, list and fire deadlines."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def set_deadline(self, game_id: int, seat: int, due_at: datetime) -> int:
        """A pending deadline for a seat; any earlier pending one for that seat is cancelled."""
        async with self._db.write() as conn:
            await cancel_pending(conn, game_id, seat)
            res = await conn.execute(
                sa.insert(_deadlines).values(
                    game_id=game_id, seat=seat, due_at=due_at, state=DeadlineState.PENDING, created_at=utcnow()
                )
            )
            return inserted_id(res)

    async def clear_deadlines(self, game_id: int, seat: int | None = None) -> int:
        """Cancel pending deadlines of a game (or one seat of it); returns how many."""
        async with self._db.write() as conn:
            return await cancel_pending(conn, game_id, seat)

    async def pending_deadlines(self) -> list[DeadlineRow]:
        """Pending deadlines, soonest first (re-armed by the bot on start-up)."""
        async with self._db.read() as s:
            q = (
                select(DeadlineRow)
                .where(DeadlineRow.state == DeadlineState.PENDING)
                .order_by(col(DeadlineRow.due_at), col(DeadlineRow.id))
            )
            return list((await s.exec(q)).all())

    async def finish_deadline(self, deadline_id: int) -> bool:
        """Pending → done. True when it was pending (so a deadline fires once)."""
        async with self._db.write() as conn:
            res = await conn.execute(
                sa.update(_deadlines)
                .where(_deadlines.c.id == deadline_id, _deadlines.c.state == DeadlineState.PENDING)
                .values(state=DeadlineState.DONE)
            )
            return res.rowcount == 1

"""Deadlines of human turns: pending until they fire (done) or the seat acts (cancelled).

A deadline fires once: ``finish_deadline`` is a conditional pending → done, and only
the caller that gets True acts on it.

Where several processes share the database, every write of a deadline is made under the
writer's hold on the game (``storage.ownership.guard``, in the same transaction): a process
that lost the game, or whose hold ran out while it was paused, writes nothing (NotOwner).
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col, select

from storage.database import Database
from storage.ownership import Fence, NotOwner, TableLeases, guard
from storage.tables import DeadlineRow, DeadlineState, inserted_id, table_of, utcnow

_deadlines = table_of(DeadlineRow)


def _cancel_statement(game_id: int, seat: int | None) -> sa.Update:
    cond = [_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING]
    if seat is not None:
        cond.append(_deadlines.c.seat == seat)
    return sa.update(_deadlines).where(*cond).values(state=DeadlineState.CANCELLED)


def cancel_pending_in(conn: sa.Connection, game_id: int, seat: int | None = None) -> int:
    """Cancel a game's (or one seat's) pending deadlines inside the caller's write transaction."""
    return int(conn.execute(_cancel_statement(game_id, seat)).rowcount)


async def cancel_pending(conn: AsyncConnection, game_id: int, seat: int | None = None) -> int:
    """``cancel_pending_in`` on an async connection."""
    return int((await conn.execute(_cancel_statement(game_id, seat))).rowcount)


class DeadlineRepository:
    """Set, cancel, list and fire deadlines."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.leases: TableLeases | None = None  # set when several processes share the database

    def _fence(self, game_id: int) -> Fence | None:
        if self.leases is None:
            return None
        fence = self.leases.live_fence(game_id)
        if fence is None:
            raise NotOwner(f"game {game_id} is not held by this process (or its hold ran out): no deadline written")
        return fence

    async def _guard(self, conn: AsyncConnection, game_id: int, fence: Fence | None) -> None:
        if fence is not None:
            await guard(conn, game_id, fence)

    async def set_deadline(self, game_id: int, seat: int, due_at: datetime) -> int:
        """A pending deadline for a seat; any earlier pending one for that seat is cancelled."""
        fence = self._fence(game_id)
        async with self._db.write() as conn:
            await self._guard(conn, game_id, fence)
            await cancel_pending(conn, game_id, seat)
            res = await conn.execute(
                sa.insert(_deadlines).values(
                    game_id=game_id, seat=seat, due_at=due_at, state=DeadlineState.PENDING, created_at=utcnow()
                )
            )
            return inserted_id(res)

    async def clear_deadlines(self, game_id: int, seat: int | None = None) -> int:
        """Cancel pending deadlines of a game (or one seat of it); returns how many."""
        fence = self._fence(game_id)
        async with self._db.write() as conn:
            await self._guard(conn, game_id, fence)
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

    async def pending_for(self, game_ids: list[int]) -> list[DeadlineRow]:
        """Pending deadlines of some games, soonest first (re-armed by the supervisor)."""
        if not game_ids:
            return []
        async with self._db.read() as s:
            q = (
                select(DeadlineRow)
                .where(DeadlineRow.state == DeadlineState.PENDING, col(DeadlineRow.game_id).in_(sorted(game_ids)))
                .order_by(col(DeadlineRow.due_at), col(DeadlineRow.id))
            )
            return list((await s.exec(q)).all())

    async def finish_deadline(self, deadline_id: int, game_id: int | None = None, *, again: bool = False) -> bool:
        """Pending → done. True when it was pending (so a deadline fires once). ``game_id``: the
        deadline's game, whose hold the write is made under where several processes share the
        database (looked up when not given). ``again``: the caller's earlier try failed, perhaps
        after its COMMIT went through (the answer was lost): a deadline found done is then the
        caller's own, and True (the caller still holds the game: nobody else fired it)."""
        if self.leases is not None and game_id is None:
            async with self._db.connect() as c:
                found = (await c.execute(sa.select(_deadlines.c.game_id).where(_deadlines.c.id == deadline_id))).scalar()
            if found is None:
                return False
            game_id = int(found)
        fence = self._fence(game_id) if game_id is not None else None
        async with self._db.write() as conn:
            if game_id is not None:
                await self._guard(conn, game_id, fence)
            res = await conn.execute(
                sa.update(_deadlines)
                .where(_deadlines.c.id == deadline_id, _deadlines.c.state == DeadlineState.PENDING)
                .values(state=DeadlineState.DONE)
            )
            if res.rowcount == 1:
                return True
            if not again:
                return False
            state = (await conn.execute(sa.select(_deadlines.c.state).where(_deadlines.c.id == deadline_id))).scalar()
            return state == DeadlineState.DONE

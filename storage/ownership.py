"""Table ownership across bot processes that share one database: a lease row per running game,
with a fencing token.

Each running game is driven by one process at a time, the holder of its row in
``table_leases``. A holder renews its leases well before they run out; a process that
dies stops renewing, and once its leases have expired any other process takes those
games over (``acquire``), each takeover adding one to the game's token. A turn is logged
only under the game's current token (the turn log checks it in the same transaction that
writes the turn, ``check_fences``), so a process that lost a game while paused cannot log
a turn for it afterwards: no turn is applied twice.

Why lease rows and not PostgreSQL advisory locks: an advisory lock lives on one
connection, so holding hundreds of games means pinning a connection per process for its
whole life, and it carries no token, so a writer cannot prove at commit time that it still
holds the game (a lock lost with a dropped connection goes unnoticed by the coroutine
still playing). A row with a token is checked inside the very transaction that writes the
turn, works on any database and pool, and makes the takeover time a setting (the TTL).

A takeover and a turn never interleave: both lock the game's row first (``FOR UPDATE``),
so a turn committed by the old holder is in the log before the new holder reads it.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from storage.database import Database
from storage.records import GameStateError
from storage.tables import GameRow, GameStatus, TableLeaseRow, table_of, utcnow

_games = table_of(GameRow)
_leases = table_of(TableLeaseRow)


def process_name() -> str:
    """A name for this process among the bot processes of one database: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"


class NotOwner(GameStateError):
    """This process no longer holds the game (another took it over): nothing was written."""


@dataclass(frozen=True, slots=True)
class Fence:
    """The hold a write is made under: this owner, with this token."""

    owner: str
    token: int


def check_fences(conn: sa.Connection, fences: dict[int, Fence]) -> set[int]:
    """Game ids whose lease is not held under the given fence (inside the writer's transaction,
    after the games' rows are locked)."""
    if not fences:
        return set()
    rows = conn.execute(sa.select(_leases.c.game_id, _leases.c.owner, _leases.c.token)
                        .where(_leases.c.game_id.in_(sorted(fences))))
    current = {gid: Fence(owner, int(token)) for gid, owner, token in rows}
    return {gid for gid, fence in fences.items() if current.get(gid) != fence}


def _lock_games(conn: sa.Connection, game_ids: Sequence[int]) -> None:
    if game_ids and conn.dialect.name != "sqlite":  # SQLite's BEGIN IMMEDIATE holds the whole file
        conn.execute(sa.select(_games.c.id).where(_games.c.id.in_(sorted(game_ids))).order_by(_games.c.id)
                     .with_for_update())


class TableLeases:
    """This process's leases on running games: take, renew, release, and the fence of each.

    ``owner`` names this process (unique per process); ``ttl`` is how long a lease lasts
    without renewal, so a dead owner's games are taken over at most about ``ttl`` after its
    last renewal."""

    def __init__(self, db: Database, owner: str, ttl: timedelta) -> None:
        self._db = db
        self.owner = owner
        self.ttl = ttl
        self.held: dict[int, int] = {}  # game id -> token

    def fence(self, game_id: int) -> Fence | None:
        """The fence a write for this game is made under; None when this process does not hold it."""
        token = self.held.get(game_id)
        return None if token is None else Fence(self.owner, token)

    async def take(self, game_id: int, *, now: datetime | None = None) -> int:
        """Hold a game this process just started (or resumes); returns its token. Raises NotOwner
        when another process holds an unexpired lease on it."""
        taken = await self._claim([game_id], now or utcnow(), only_running=False)
        if game_id not in taken:
            raise NotOwner(f"game {game_id} is held by another process")
        return taken[game_id]

    async def acquire(self, game_ids: Iterable[int] | None = None, *, now: datetime | None = None) -> dict[int, int]:
        """Renew this process's leases, then take every running game (of ``game_ids``, or all)
        that nobody holds or whose lease ran out. Returns the games newly taken, with their tokens."""
        now = now or utcnow()
        await self.renew(now=now)
        async with self._db.connect() as conn:
            q = (sa.select(_games.c.id).select_from(_games.outerjoin(_leases, _leases.c.game_id == _games.c.id))
                 .where(_games.c.status == GameStatus.RUNNING,
                        sa.or_(_leases.c.game_id.is_(None), _leases.c.expires_at < now))
                 .order_by(_games.c.id))
            if game_ids is not None:
                q = q.where(_games.c.id.in_(sorted(set(game_ids))))
            candidates = [int(g) for g in (await conn.execute(q)).scalars()]
        if not candidates:
            return {}
        return await self._claim(candidates, now, only_running=True)

    async def renew(self, *, now: datetime | None = None) -> set[int]:
        """Extend every lease this process holds; returns the games it lost (taken over by
        another process after its lease ran out), which it must stop driving."""
        if not self.held:
            return set()
        now = now or utcnow()
        async with self._db.write() as conn:
            res = await conn.execute(
                sa.update(_leases)
                .where(_leases.c.owner == self.owner, _leases.c.game_id.in_(sorted(self.held)))
                .values(expires_at=now + self.ttl)
                .returning(_leases.c.game_id, _leases.c.token))
            kept = {int(g): int(t) for g, t in res.all()}
        lost = {g for g, t in self.held.items() if kept.get(g) != t}
        for g in lost:
            del self.held[g]
        return lost

    def forget(self, game_id: int) -> None:
        """Stop renewing a game that ended (its lease simply runs out; an ended game is never taken)."""
        self.held.pop(game_id, None)

    async def release(self, game_ids: Iterable[int] | None = None) -> None:
        """Give games up at once (a clean stop, an ended game): another process may take them now."""
        ids = sorted(self.held if game_ids is None else set(game_ids) & set(self.held))
        if not ids:
            return
        async with self._db.write() as conn:
            await conn.execute(sa.update(_leases)
                               .where(_leases.c.owner == self.owner, _leases.c.game_id.in_(ids))
                               .values(expires_at=utcnow() - timedelta(seconds=1)))
        for g in ids:
            self.held.pop(g, None)

    async def _claim(self, game_ids: Sequence[int], now: datetime, *, only_running: bool) -> dict[int, int]:
        until = now + self.ttl

        def claim(conn: sa.Connection) -> dict[int, int]:
            _lock_games(conn, game_ids)  # no turn of the old holder is half-way while the token moves
            ids = list(game_ids)
            if only_running:
                ids = [int(g) for g in conn.execute(sa.select(_games.c.id).where(
                    _games.c.id.in_(ids), _games.c.status == GameStatus.RUNNING)).scalars()]
            if not ids:
                return {}
            dialect = conn.dialect.name
            insert: Any = pg_insert if dialect == "postgresql" else sqlite_insert
            stmt = insert(_leases).values([{"game_id": g, "owner": self.owner, "token": 1, "expires_at": until}
                                           for g in ids])
            stmt = stmt.on_conflict_do_update(
                index_elements=[_leases.c.game_id],
                set_={"owner": self.owner, "expires_at": until,
                      "token": sa.case((_leases.c.owner == self.owner, _leases.c.token),
                                       else_=_leases.c.token + 1)},
                where=sa.or_(_leases.c.owner == self.owner, _leases.c.expires_at < now),
            ).returning(_leases.c.game_id, _leases.c.token)
            return {int(g): int(t) for g, t in conn.execute(stmt).all()}

        async with self._db.write() as conn:
            taken = await conn.run_sync(claim)
        self.held.update(taken)
        return taken

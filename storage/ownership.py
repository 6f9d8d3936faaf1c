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

Time: a lease's expiry is computed and compared on the database's clock (``now()``), never
on a process's own, so two hosts whose clocks disagree still agree on who holds a game.
A holder also keeps a local, monotonic account of its hold: a game is *live* for it only
until the start of its last confirmed renewal plus the lease. The database's expiry is
always later than that (the renewal's statement ran after it started), so a process that
was paused past its lease (a long GC, a frozen VM) knows it may no longer drive or send the
moment it wakes, before any round trip tells it.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.database import Database
from storage.records import GameStateError
from storage.tables import GameRow, GameStatus, ProcessRow, TableLeaseRow, table_of

log = logging.getLogger(__name__)

_games = table_of(GameRow)
_leases = table_of(TableLeaseRow)
_processes = table_of(ProcessRow)
LOCK_NOT_AVAILABLE = "55P03"  # PostgreSQL's SQLSTATE for a lock not taken within lock_timeout


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


def db_now(dialect: str, plus: timedelta = timedelta(0)) -> sa.ColumnElement[Any]:
    """The database's clock (plus an interval) as SQL: ``now()`` on PostgreSQL, SQLite's own
    ``strftime('now')`` written the way timestamps are stored there."""
    if dialect == "sqlite":
        # '%f' is seconds with milliseconds; three zeros make the microseconds SQLAlchemy stores.
        return sa.func.strftime("%Y-%m-%d %H:%M:%f000", "now", f"{plus.total_seconds():+.6f} seconds")
    if not plus:
        return sa.func.now()
    return sa.func.now() + sa.cast(sa.literal(plus), sa.Interval)


def _commit_clock(dialect: str) -> sa.ColumnElement[Any]:
    # The instant of the check itself, not the transaction's start: a writer whose transaction
    # began before its lease ran out must not pass the check after it did.
    return sa.func.clock_timestamp() if dialect == "postgresql" else db_now(dialect)


def check_fences(conn: sa.Connection, fences: dict[int, Fence]) -> set[int]:
    """Game ids whose lease is not held under the given fence, or ran out by the database's
    clock (inside the writer's transaction, after the games' rows are locked)."""
    if not fences:
        return set()
    alive = (_leases.c.expires_at > _commit_clock(conn.dialect.name)).label("alive")
    rows = conn.execute(sa.select(_leases.c.game_id, _leases.c.owner, _leases.c.token, alive)
                        .where(_leases.c.game_id.in_(sorted(fences))))
    current = {gid: Fence(owner, int(token)) for gid, owner, token, ok in rows if ok}
    return {gid for gid, fence in fences.items() if current.get(gid) != fence}


def guard_in(conn: sa.Connection, game_id: int, fence: Fence) -> None:
    """Lock a game's row and check the writer still holds it under ``fence``, inside the
    writer's transaction; NotOwner (nothing written) when it does not."""
    _lock_games(conn, [game_id])
    if check_fences(conn, {game_id: fence}):
        raise NotOwner(f"game {game_id} is no longer held by this process: nothing written")


async def guard(conn: AsyncConnection, game_id: int, fence: Fence) -> None:
    """``guard_in`` on an async connection."""
    await conn.run_sync(guard_in, game_id, fence)


def _lock_games(conn: sa.Connection, game_ids: Sequence[int]) -> None:
    if game_ids and conn.dialect.name != "sqlite":  # SQLite's BEGIN IMMEDIATE holds the whole file
        conn.execute(sa.select(_games.c.id).where(_games.c.id.in_(sorted(game_ids))).order_by(_games.c.id)
                     .with_for_update())


class TableLeases:
    """This process's leases on running games: take, renew, release, and the fence of each.

    ``owner`` names this process (unique per process); ``ttl`` is how long a lease lasts
    without renewal, so a dead owner's games are taken over at most about ``ttl`` after its
    last renewal.

    ``clock`` is the local monotonic clock the liveness of each hold is kept on (a test may
    pass its own)."""

    def __init__(self, db: Database, owner: str, ttl: timedelta,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._db = db
        self.owner = owner
        self.ttl = ttl
        self.clock = clock
        self.held: dict[int, int] = {}  # game id -> token
        # What this process tells the others it serves (``bot_processes``), renewed with its leases;
        # None: it tells nothing, and no table is handed back to it without a command.
        self.serves: dict[str, Any] | None = None
        self._confirmed: dict[int, float] = {}  # game id -> local start of its last confirmed renewal

    def fence(self, game_id: int) -> Fence | None:
        """The fence a write for this game is made under; None when this process does not hold it."""
        token = self.held.get(game_id)
        return None if token is None else Fence(self.owner, token)

    def live(self, game_id: int) -> bool:
        """Whether this process may still drive the game and send for it: it holds the game and
        its last confirmed renewal plus the lease has not passed on the local monotonic clock."""
        since = self._confirmed.get(game_id)
        return game_id in self.held and since is not None and self.clock() < since + self.ttl.total_seconds()

    def live_fence(self, game_id: int) -> Fence | None:
        """The fence of a game this process holds and whose hold is still live; else None."""
        return self.fence(game_id) if self.live(game_id) else None

    def confirmed(self, game_id: int, since: float) -> None:
        """The game's hold was written with an expiry one lease after ``since`` (local clock)."""
        if game_id in self.held:
            self._confirmed[game_id] = max(since, self._confirmed.get(game_id, since))

    async def take(self, game_id: int, *, now: datetime | None = None) -> int:
        """Hold a game this process just started (or resumes); returns its token. Raises NotOwner
        when another process holds an unexpired lease on it."""
        taken = await self._claim([game_id], now, only_running=False)
        if game_id not in taken:
            raise NotOwner(f"game {game_id} is held by another process")
        return taken[game_id]

    async def acquire(self, game_ids: Iterable[int] | None = None, *, now: datetime | None = None,
                      renew: bool = True) -> dict[int, int]:
        """Renew this process's leases, then take every running game (of ``game_ids``, or all)
        that nobody holds or whose lease ran out (by the database's clock, or ``now`` when given).
        Returns the games newly taken, with their tokens. ``renew=False``: a renewal task of its
        own keeps the held leases."""
        if renew:
            await self.renew(now=now)
        async with self._db.connect() as conn:
            cutoff = now if now is not None else db_now(conn.dialect.name)
            q = (sa.select(_games.c.id).select_from(_games.outerjoin(_leases, _leases.c.game_id == _games.c.id))
                 .where(_games.c.status == GameStatus.RUNNING,
                        sa.or_(_leases.c.game_id.is_(None), _leases.c.expires_at < cutoff))
                 .order_by(_games.c.id))
            if game_ids is not None:
                q = q.where(_games.c.id.in_(sorted(set(game_ids))))
            candidates = [int(g) for g in (await conn.execute(q)).scalars()]
        if not candidates:
            return {}
        await self._end_stale_sessions(candidates)
        try:
            return await self._claim(candidates, now, only_running=True)
        except sa.exc.DBAPIError as exc:
            if getattr(exc.orig, "sqlstate", None) != LOCK_NOT_AVAILABLE:
                raise
            # An old holder's session still locks a row (frozen right after taking the lock): its
            # session is ended by a later round, and the games are taken then.
            log.info("taking over %s game(s) waits for a stale session to end", len(candidates))
            return {}

    async def _end_stale_sessions(self, game_ids: Sequence[int]) -> None:
        """End the database sessions of these games' expired holders whose transaction began
        before their lease ran out (or has been open longer than a lease). A holder frozen in the
        middle of a write (a pipelined insert waits on its client as an *active* statement, which
        no server timeout ends) keeps the game's row locked: the takeover would wait for it to
        wake, and it would then commit after its lease. Its transaction is rolled back instead,
        as soon as the lease ran out (a live holder renews long before). PostgreSQL only; the
        bot's sessions carry their owner's name."""
        if self._db.plan.is_sqlite:
            return
        async with self._db.writer.begin() as conn:
            await conn.execute(sa.text(
                "SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a JOIN ("
                "  SELECT owner, max(expires_at) AS expires FROM table_leases WHERE game_id = ANY(:ids) "
                "  AND owner <> :me AND expires_at < clock_timestamp() GROUP BY owner) l "
                "ON a.application_name = left(l.owner, 63) WHERE a.datname = current_database() "
                "AND a.pid <> pg_backend_pid() AND (a.xact_start < l.expires "
                "OR a.xact_start < clock_timestamp() - make_interval(secs => :lease))"),
                {"ids": sorted(game_ids), "me": self.owner, "lease": self.ttl.total_seconds()})

    async def renew(self, *, now: datetime | None = None) -> set[int]:
        """Extend every lease this process holds; returns the games it lost (taken over by
        another process after its lease ran out), which it must stop driving.

        On a server database this does not wait for the process's write lock: a renewal must not
        queue behind a group of turns on a loaded machine (the row it updates is its own)."""
        if not self.held and self.serves is None:
            return set()
        ids = sorted(self.held)
        started = self.clock()
        if self._db.plan.is_sqlite:
            async with self._db.write() as conn:
                kept = await self._renew(conn, ids, now)
                await self._beat(conn, now)
        else:
            async with self._db.writer.begin() as conn:
                kept = await self._renew(conn, ids, now)
                await self._beat(conn, now)
        lost = {g for g in ids if g in self.held and kept.get(g) != self.held[g]}
        for g in lost:
            self._drop(g)
        for g in kept:
            self.confirmed(g, started)
        return lost

    async def _beat(self, conn: AsyncConnection, now: datetime | None) -> None:
        """This process's heartbeat row, in the renewal's own transaction and with its expiry: a
        process whose leases ran out is never seen alive by the heartbeat either (a table is not
        handed back to a process that died)."""
        if self.serves is None:
            return
        dialect = conn.dialect.name
        until = now + self.ttl if now is not None else db_now(dialect, self.ttl)
        insert: Any = pg_insert if dialect == "postgresql" else sqlite_insert
        stmt = insert(_processes).values(owner=self.owner, serves=self.serves, expires_at=until)
        await conn.execute(stmt.on_conflict_do_update(index_elements=[_processes.c.owner],
                                                      set_={"serves": self.serves, "expires_at": until}))
        # The rows of processes gone long ago (each start names a new process).
        await conn.execute(sa.delete(_processes).where(
            _processes.c.expires_at < db_now(dialect, -100 * self.ttl)))

    async def peers(self) -> dict[str, dict[str, Any]]:
        """What each other live process serves, by owner: those whose heartbeat has not run out
        by the database's clock."""
        async with self._db.connect() as conn:
            rows = await conn.execute(sa.select(_processes.c.owner, _processes.c.serves).where(
                _processes.c.owner != self.owner, _processes.c.expires_at > db_now(conn.dialect.name)))
            return {str(o): dict(v or {}) for o, v in rows}

    async def take_given(self) -> dict[int, int]:
        """Take the running games another live process handed to this one (``hand_over``): their
        lease row names this process, which does not hold them yet. A game this process starts is
        held before its start returns, with token 1; a hand-over always moves the token on."""
        async with self._db.connect() as conn:
            rows = await conn.execute(
                sa.select(_leases.c.game_id).join(_games, _games.c.id == _leases.c.game_id)
                .where(_leases.c.owner == self.owner, _leases.c.token > 1, _games.c.status == GameStatus.RUNNING,
                       _leases.c.expires_at > db_now(conn.dialect.name)))
            given = sorted(int(g) for g in rows.scalars() if int(g) not in self.held)
        return await self._claim(given, None, only_running=True) if given else {}

    async def _renew(self, conn: AsyncConnection, ids: list[int], now: datetime | None) -> dict[int, int]:
        if not ids:
            return {}
        until = now + self.ttl if now is not None else db_now(conn.dialect.name, self.ttl)
        res = await conn.execute(
            sa.update(_leases)
            .where(_leases.c.owner == self.owner, _leases.c.game_id.in_(ids))
            .values(expires_at=until)
            .returning(_leases.c.game_id, _leases.c.token))
        return {int(g): int(t) for g, t in res.all()}

    def _drop(self, game_id: int) -> None:
        self.held.pop(game_id, None)
        self._confirmed.pop(game_id, None)

    async def holder(self, game_id: int, *, now: datetime | None = None) -> str | None:
        """The process whose unexpired lease holds a game, by the database's clock (None when nobody does)."""
        async with self._db.connect() as conn:
            cutoff = now if now is not None else db_now(conn.dialect.name)
            owner = (await conn.execute(sa.select(_leases.c.owner).where(
                _leases.c.game_id == game_id, _leases.c.expires_at >= cutoff))).scalar()
        return None if owner is None else str(owner)

    def forget(self, game_id: int) -> None:
        """Stop renewing a game that ended (its lease simply runs out; an ended game is never taken)."""
        self._drop(game_id)

    async def release(self, game_ids: Iterable[int] | None = None) -> None:
        """Give games up at once (a clean stop, an ended game): another process may take them now."""
        ids = sorted(self.held if game_ids is None else set(game_ids) & set(self.held))
        if not ids:
            return
        for g in ids:  # nothing is driven or sent for them from here on, whatever the write does
            self._confirmed.pop(g, None)
        async with self._db.write() as conn:
            await conn.execute(sa.update(_leases)
                               .where(_leases.c.owner == self.owner, _leases.c.game_id.in_(ids))
                               .values(expires_at=db_now(conn.dialect.name, -timedelta(seconds=1))))
        for g in ids:
            self._drop(g)

    async def hand_over(self, game_id: int, to: str) -> bool:
        """Give a game this process holds straight to the process ``to`` (token + 1, a fresh lease),
        so that no third process, this one included, takes it in between; this process stops
        holding it either way. False when this process no longer held it."""
        token = self.held.get(game_id)
        self._confirmed.pop(game_id, None)  # nothing is driven or sent for it from here on
        if token is None:
            return False

        def move(conn: sa.Connection) -> bool:
            _lock_games(conn, [game_id])  # no turn of this holder is half-way while the token moves
            res = conn.execute(sa.update(_leases)
                               .where(_leases.c.game_id == game_id, _leases.c.owner == self.owner,
                                      _leases.c.token == token)
                               .values(owner=to, token=_leases.c.token + 1,
                                       expires_at=db_now(conn.dialect.name, self.ttl)))
            return res.rowcount == 1

        try:
            async with self._db.write() as conn:
                return bool(await conn.run_sync(move))
        finally:
            self._drop(game_id)

    async def _claim(self, game_ids: Sequence[int], now: datetime | None, *, only_running: bool) -> dict[int, int]:
        def claim(conn: sa.Connection) -> dict[int, int]:
            dialect = conn.dialect.name
            cutoff = now if now is not None else db_now(dialect)
            until = now + self.ttl if now is not None else db_now(dialect, self.ttl)
            if dialect == "postgresql":  # a frozen old holder's lock is not waited for past a round
                conn.execute(sa.text(f"SET LOCAL lock_timeout = {max(1, int(self.ttl.total_seconds() * 250))}"))
            _lock_games(conn, game_ids)  # no turn of the old holder is half-way while the token moves
            ids = list(game_ids)
            if only_running:
                ids = [int(g) for g in conn.execute(sa.select(_games.c.id).where(
                    _games.c.id.in_(ids), _games.c.status == GameStatus.RUNNING)).scalars()]
            if not ids:
                return {}
            insert: Any = pg_insert if dialect == "postgresql" else sqlite_insert
            stmt = insert(_leases).values([{"game_id": g, "owner": self.owner, "token": 1, "expires_at": until}
                                           for g in ids])
            stmt = stmt.on_conflict_do_update(
                index_elements=[_leases.c.game_id],
                set_={"owner": self.owner, "expires_at": until,
                      "token": sa.case((_leases.c.owner == self.owner, _leases.c.token),
                                       else_=_leases.c.token + 1)},
                where=sa.or_(_leases.c.owner == self.owner, _leases.c.expires_at < cutoff),
            ).returning(_leases.c.game_id, _leases.c.token)
            return {int(g): int(t) for g, t in conn.execute(stmt).all()}

        started = self.clock()
        async with self._db.write() as conn:
            taken = await conn.run_sync(claim)
        self.held.update(taken)
        for g in taken:
            self.confirmed(g, started)
        return taken

"""The game log's async store: one object the bot holds for every read and write.

``Store.open(url)`` makes an async SQLAlchemy engine for any async URL
(``sqlite+aiosqlite:///hushtable.db`` by default, ``postgresql+asyncpg://...``
by configuration alone) and brings the schema to the newest alembic revision.

Writes are few and small, and each one is a single transaction:
``append_turn`` writes an action, its events, its agent calls and the inbound
key that caused it, or nothing at all. A duplicate inbound key (a platform
re-delivering an event) writes nothing and returns False. Sequence numbers of
actions and events run 1.. per game and are taken from ``max(seq)`` inside the
write transaction, so they survive restarts and other processes without a
cache to keep in step.

On SQLite:
- pragmas ``journal_mode=WAL``, ``synchronous=NORMAL``, ``busy_timeout=5000``
  and ``foreign_keys=ON`` are set on every new connection;
- the driver's own transaction handling is switched off and SQLAlchemy emits
  ``BEGIN`` itself, ``BEGIN IMMEDIATE`` for writes, so a write holds the
  database lock from its first read (the seq lookup) to its commit and
  readers in WAL mode go on in parallel;
- writes in this process are serialised by an ``asyncio.Lock`` (the same
  lock is kept on other backends: it is what makes ``max(seq)+1`` safe
  between coroutines without relying on isolation levels);
- an in-memory database (``sqlite+aiosqlite://``) lives on one shared
  connection, so reads then take the write lock too.

Rows handed out are detached SQLModel objects; changing them changes nothing
in the database.

Rooms beside this one: ``storage.engine`` (URL → engine, pragmas, migrations),
``storage.turnlog`` (the group-commit writer behind ``append_turn``) and
``storage.records`` (what callers hand in and get back, and the errors).
This module is the repository: one method per question or write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.runtime.migration import MigrationContext
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, async_sessionmaker
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

# Engines, records and errors live beside the store; they are re-exported here because
# callers have always imported them from storage.store.
from storage.engine import (
    MIGRATIONS_DIR,
    SQLITE_PRAGMAS,
    WRITE_OPTION,
    EnginePlan,
    alembic_config,
    head_revision,
    make_engine,
    make_turn_engine,
    plan_engine,
)
from storage.records import (
    ActionRecord,
    AgentCallRecord,
    DatabaseMissing,
    DatabaseReadOnly,
    EventRecord,
    GameLog,
    GameNotFound,
    GameStateError,
    SchemaOutOfDate,
    SeatRecord,
)
from storage.tables import (
    ENDED,
    ActionRow,
    AgentCallRow,
    DeadlineRow,
    DeadlineState,
    EvaluationRow,
    EventRow,
    GameRow,
    GameStatus,
    InboundRow,
    SeatRow,
    inserted_id,
    table_of,
    utcnow,
)
from storage.turnlog import TurnLog, agent_call_values

__all__ = [
    "MIGRATIONS_DIR",
    "SQLITE_PRAGMAS",
    "ActionRecord",
    "AgentCallRecord",
    "DatabaseMissing",
    "DatabaseReadOnly",
    "EnginePlan",
    "EventRecord",
    "GameLog",
    "GameNotFound",
    "GameStateError",
    "SchemaOutOfDate",
    "SeatRecord",
    "Store",
    "alembic_config",
    "head_revision",
    "make_engine",
    "make_turn_engine",
    "plan_engine",
]

_games = table_of(GameRow)
_seats = table_of(SeatRow)
_events = table_of(EventRow)
_agent_calls = table_of(AgentCallRow)
_inbound = table_of(InboundRow)
_deadlines = table_of(DeadlineRow)
_evaluations = table_of(EvaluationRow)

# Drivers that log every statement with its parameters at DEBUG: rows hold moves and dealt secrets,
# and no log line may carry a secret (issue 9.7), so they never log below WARNING.
_CHATTY_DRIVER_LOGGERS = ("aiosqlite", "asyncpg")


def quiet_driver_logs() -> None:
    for name in _CHATTY_DRIVER_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


# --------------------------------------------------------------------------- the store

def _status_list(status: str | Iterable[str]) -> list[str]:
    return [str(status)] if isinstance(status, str) else [str(s) for s in status]


class Store:
    """Async access to the game log. Make one with ``await Store.open(url)``; close with ``aclose()``."""

    def __init__(self, engine: AsyncEngine, plan: EnginePlan) -> None:
        self.engine = engine
        self.plan = plan
        self._writer = engine.execution_options(**{WRITE_OPTION: True})
        self._sessions = async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)
        self._write_lock = asyncio.Lock()
        self._turnlog = TurnLog(self._writer, make_turn_engine(plan), self._write_lock)
        # One shared connection (in-memory SQLite) cannot hold a read and a write transaction at once.
        self._read_lock: asyncio.Lock | None = self._write_lock if plan.in_memory else None

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(cls, url: str | URL, *, create: bool = True, must_exist: bool = False) -> Store:
        """Connect and bring the schema to the newest migration (``create=False``: only check it is).

        ``must_exist``: a missing SQLite file raises `DatabaseMissing` instead of becoming a new,
        empty log (commands that read a log, such as ``export`` or ``doctor``, use it)."""
        plan = plan_engine(url)
        quiet_driver_logs()
        path = plan.sqlite_file  # a SQLite URI's file is the path after "file:"
        if path is not None:
            if must_exist and not path.is_file():
                raise DatabaseMissing(f"no database at {path} (set HUSHTABLE_DATABASE_URL or pass --database)")
            path.parent.mkdir(parents=True, exist_ok=True)
        store = cls(make_engine(plan), plan)
        try:
            if create:
                await store.migrate()
            else:
                current, head = await store.revision(), head_revision()
                if current != head:
                    raise SchemaOutOfDate(f"database is at revision {current}, code expects {head}; run migrations")
        except BaseException:
            await store.engine.dispose()
            raise
        return store

    async def aclose(self) -> None:
        await self._turnlog.aclose()
        await self.engine.dispose()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def migrate(self, revision: str = "head") -> None:
        """Run ``alembic upgrade`` on this store's own engine and transaction (idempotent)."""
        cfg = alembic_config(self.plan.url)

        def _upgrade(sync_conn: sa.Connection) -> None:
            cfg.attributes["connection"] = sync_conn
            command.upgrade(cfg, revision)

        async with self.write() as conn:
            await conn.run_sync(_upgrade)

    async def revision(self) -> str | None:
        """The alembic revision the database is at (None when never migrated)."""

        def _current(sync_conn: sa.Connection) -> str | None:
            return MigrationContext.configure(sync_conn).get_current_revision()

        async with self._read_lock or contextlib.nullcontext():
            async with self.engine.connect() as conn:
                return await conn.run_sync(_current)

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction (a unit of work): committed when the block ends, rolled back on an error.

        Writes of this process are serialised by one lock; on SQLite the transaction begins with
        ``BEGIN IMMEDIATE``, so it holds the file from its first read to its commit."""
        async with self._write_lock:
            async with self._writer.begin() as conn:
                yield conn

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """One read session; rows it hands out are detached once it ends."""
        async with self._read_lock or contextlib.nullcontext():
            async with self._sessions() as session:
                yield session

    # ------------------------------------------------------------------ games and lobbies

    async def create_game(
        self,
        *,
        game: str,
        variant: str,
        config: Mapping[str, Any],
        platform: str,
        place: str,
        place_name: str,
        host: str,
        lobby: Mapping[str, Any],
        inbound_key: str | None = None,
        tenant: str = "",
    ) -> int | None:
        """A new game in the lobby; returns its id, or None (writing nothing) when
        ``inbound_key`` was seen before. The key is written in the same transaction."""
        values = {
            "tenant": tenant,
            "game": game,
            "variant": variant,
            "config": dict(config),
            "platform": platform,
            "place": place,
            "place_name": place_name,
            "host": host,
            "status": GameStatus.LOBBY.value,
            "lobby": dict(lobby),
            "created_at": utcnow(),
            "rules_version": "",
        }
        async with self.write() as conn:
            # The key is claimed before the game exists (so a repeat writes nothing), then pointed at it.
            if inbound_key is not None and not await self._claim(conn, inbound_key, None):
                return None
            res = await conn.execute(sa.insert(_games).values(values))
            game_id = inserted_id(res)
            if inbound_key is not None:
                await conn.execute(sa.update(_inbound).where(_inbound.c.key == inbound_key).values(game_id=game_id))
            return game_id

    async def update_lobby(
        self,
        game_id: int,
        lobby: Mapping[str, Any],
        *,
        config: Mapping[str, Any] | None = None,
        variant: str | None = None,
        inbound_key: str | None = None,
        host: str | None = None,
        running: bool = False,
    ) -> bool:
        """Replace the lobby (and optionally config, variant and host) of a game still in the lobby;
        with ``running`` of a running game instead (its deadline lives in the lobby).

        With ``inbound_key`` the edit and the key are written in one transaction: False,
        and nothing written, when the key was seen before (a redelivered command).
        """
        values: dict[str, Any] = {"lobby": dict(lobby)}
        if config is not None:
            values["config"] = dict(config)
        if variant is not None:
            values["variant"] = variant
        if host is not None:
            values["host"] = host
        status = GameStatus.RUNNING if running else GameStatus.LOBBY
        async with self.write() as conn:
            if inbound_key is not None and not await self._claim(conn, inbound_key, game_id):
                return False
            res = await conn.execute(
                sa.update(_games)
                .where(_games.c.id == game_id, _games.c.status == status.value)
                .values(values)
            )
            if res.rowcount != 1:
                await self._raise_status(conn, game_id, "edit the lobby of")
        return True

    async def mark_broken(self, game_id: int, reason: str) -> None:
        """A running (or lobby) game whose log no longer replays: status broken, with the reason."""
        async with self.write() as conn:
            await conn.execute(
                sa.update(_games)
                .where(_games.c.id == game_id,
                       _games.c.status.in_([GameStatus.LOBBY.value, GameStatus.RUNNING.value]))
                .values(status=GameStatus.BROKEN.value, status_reason=reason, finished_at=utcnow())
            )
            await conn.execute(
                sa.update(_deadlines)
                .where(_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING.value)
                .values(state=DeadlineState.CANCELLED.value)
            )

    async def count_open_lobbies(self, tenant: str, host: str) -> int:
        """How many lobbies this member hosts in this tenant (the per-user cap)."""
        async with self.read() as s:
            q = select(sa.func.count()).select_from(GameRow).where(
                GameRow.tenant == tenant, GameRow.host == host, GameRow.status == GameStatus.LOBBY.value)
            return int((await s.exec(q)).one())

    async def check_writable(self) -> None:
        """Raise DatabaseReadOnly with a clear sentence when the database refuses writes."""
        try:
            async with self.write() as conn:
                await conn.execute(sa.text("UPDATE alembic_version SET version_num = version_num"))
        except sa.exc.OperationalError as exc:
            if "readonly" in str(exc).lower() or "read-only" in str(exc).lower() or "read only" in str(exc).lower():
                raise DatabaseReadOnly(
                    f"the database {self.plan.url.render_as_string(hide_password=True)} is read-only: "
                    "Hushtable must write every move; fix the file's permissions or the database role") from None
            raise

    async def start_game(
        self,
        game_id: int,
        *,
        seed: int,
        config: Mapping[str, Any],
        seats: Sequence[SeatRecord],
        events: Sequence[EventRecord],
        rules_version: str,
        inbound_key: str | None = None,
    ) -> None:
        """Lobby → running in one transaction: seed and config fixed, roster frozen, deal events 1..n,
        and the inbound key of the command that started it (a redelivery then finds it)."""
        now = utcnow()
        async with self.write() as conn:
            if inbound_key is not None and not await self._claim(conn, inbound_key, game_id):
                raise GameStateError(f"cannot start game {game_id}: the command that starts it was already handled")
            res = await conn.execute(
                sa.update(_games)
                .where(_games.c.id == game_id, _games.c.status == GameStatus.LOBBY.value)
                .values(
                    status=GameStatus.RUNNING.value,
                    seed=seed,
                    config=dict(config),
                    rules_version=rules_version,
                    started_at=now,
                )
            )
            if res.rowcount != 1:
                await self._raise_status(conn, game_id, "start")
            if seats:
                await conn.execute(
                    sa.insert(_seats),
                    [
                        {
                            "game_id": game_id,
                            "seat": s.seat,
                            "kind": str(s.kind),
                            "user_key": s.user_key,
                            "display_name": s.display_name,
                            "agent_spec": s.agent_spec,
                            "joined_at": now,
                        }
                        for s in seats
                    ],
                )
            await self._insert_events(conn, game_id, events, first_seq=1, action_seq=None, now=now)

    async def append_turn(
        self,
        game_id: int,
        *,
        action: ActionRecord,
        events: Sequence[EventRecord],
        inbound_key: str | None,
        agent_calls: Sequence[AgentCallRecord] = (),
    ) -> bool:
        """Log one action with its events and agent calls, all or nothing.

        Returns False, having written nothing, when ``inbound_key`` was seen
        before. Raises GameStateError (writing nothing) when the game is not running.

        Turns that arrive while a write is in progress are committed together in
        the next transaction (group commit): one writer, few round trips, each turn
        still all-or-nothing and answered only once it is durable.
        """
        return await self._turnlog.append(game_id, action, events, inbound_key, agent_calls)

    async def claim_inbound(self, key: str, game_id: int | None = None) -> bool:
        """Record a platform event handled without a turn (join, leave, lobby edits); True when new."""
        async with self.write() as conn:
            return await self._claim(conn, key, game_id)

    async def finish_game(
        self,
        game_id: int,
        *,
        status: GameStatus | str,
        result: Mapping[str, Any] | None,
        events: Sequence[EventRecord] = (),
    ) -> None:
        """Save how a game ended (before anyone announces it); pending deadlines are cancelled.

        ``finished`` needs a running game; ``aborted`` also ends a lobby.
        Final events get the next seqs and no action_seq.
        """
        status = GameStatus(status)
        if status not in ENDED:
            raise ValueError(f"a game ends as finished or aborted, not {status}")
        allowed = [GameStatus.RUNNING.value]
        if status is GameStatus.ABORTED:
            allowed.append(GameStatus.LOBBY.value)
        now = utcnow()
        async with self.write() as conn:
            res = await conn.execute(
                sa.update(_games)
                .where(_games.c.id == game_id, _games.c.status.in_(allowed))
                .values(status=status.value, result=dict(result) if result is not None else None, finished_at=now)
            )
            if res.rowcount != 1:
                await self._raise_status(conn, game_id, f"mark as {status.value}")
            if events:
                last = (
                    await conn.execute(sa.select(sa.func.max(_events.c.seq)).where(_events.c.game_id == game_id))
                ).scalar()
                await self._insert_events(conn, game_id, events, first_seq=(last or 0) + 1, action_seq=None, now=now)
            await conn.execute(
                sa.update(_deadlines)
                .where(_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING.value)
                .values(state=DeadlineState.CANCELLED.value)
            )

    async def mark_announced(self, game_id: int) -> bool:
        """True the first time only: whoever gets True posts the result."""
        async with self.write() as conn:
            res = await conn.execute(
                sa.update(_games)
                .where(
                    _games.c.id == game_id,
                    _games.c.announced_at.is_(None),
                    _games.c.status.in_([s.value for s in ENDED]),
                )
                .values(announced_at=utcnow())
            )
            return res.rowcount == 1

    async def unannounced_finished(self) -> list[GameRow]:
        """Ended games (finished or aborted) whose result was saved but never announced."""
        async with self.read() as s:
            q = (
                select(GameRow)
                .where(col(GameRow.status).in_([x.value for x in ENDED]), col(GameRow.announced_at).is_(None))
                .order_by(col(GameRow.id))
            )
            return list((await s.exec(q)).all())

    # ------------------------------------------------------------------ reading the log

    async def game(self, game_id: int) -> GameRow | None:
        async with self.read() as s:
            return await s.get(GameRow, game_id)

    async def load_game(self, game_id: int) -> GameLog:
        """The game's row, frozen roster, actions and events (by seq). Raises GameNotFound."""
        async with self.read() as s:
            row = await s.get(GameRow, game_id)
            if row is None:
                raise GameNotFound(game_id)
            return (await self._logs(s, [row]))[0]

    async def unfinished_games(self) -> list[GameLog]:
        """Running games, to be replayed on start-up."""
        async with self.read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.RUNNING.value).order_by(col(GameRow.id))
            rows = list((await s.exec(q)).all())
            return await self._logs(s, rows)

    async def open_lobbies(self, platform: str | None = None, *, tenant: str | None = None) -> list[GameRow]:
        async with self.read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.LOBBY.value)
            if platform is not None:
                q = q.where(GameRow.platform == platform)
            if tenant is not None:
                q = q.where(GameRow.tenant == tenant)
            return list((await s.exec(q.order_by(col(GameRow.id)))).all())

    async def lobby_at(self, platform: str, place: str) -> GameRow | None:
        """The newest game in the lobby or running at this place, if any."""
        async with self.read() as s:
            q = (
                select(GameRow)
                .where(
                    GameRow.platform == platform,
                    GameRow.place == place,
                    col(GameRow.status).in_([GameStatus.LOBBY.value, GameStatus.RUNNING.value]),
                )
                .order_by(col(GameRow.id).desc())
                .limit(1)
            )
            return (await s.exec(q)).first()

    async def games(
        self,
        status: str | Iterable[str] | None = None,
        game: str | None = None,
        since: datetime | None = None,
        *,
        finished_since: datetime | None = None,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[GameRow]:
        """Games by status (one or several), game name, created at or after ``since``, finished at
        or after ``finished_since``, tenant; oldest first."""
        async with self.read() as s:
            q = select(GameRow)
            if tenant is not None:
                q = q.where(GameRow.tenant == tenant)
            if status is not None:
                q = q.where(col(GameRow.status).in_(_status_list(status)))
            if game is not None:
                q = q.where(GameRow.game == game)
            if since is not None:
                q = q.where(col(GameRow.created_at) >= since)
            if finished_since is not None:
                q = q.where(col(GameRow.finished_at) >= finished_since)
            q = q.order_by(col(GameRow.id))
            if limit is not None:
                q = q.limit(limit)
            return list((await s.exec(q)).all())

    async def agent_calls(self, game_id: int) -> list[AgentCallRow]:
        async with self.read() as s:
            q = select(AgentCallRow).where(AgentCallRow.game_id == game_id).order_by(col(AgentCallRow.id))
            return list((await s.exec(q)).all())

    async def _logs(self, s: AsyncSession, rows: list[GameRow]) -> list[GameLog]:
        if not rows:
            return []
        ids = [r.id for r in rows]
        seats: dict[int, list[SeatRow]] = defaultdict(list)
        actions: dict[int, list[ActionRow]] = defaultdict(list)
        events: dict[int, list[EventRow]] = defaultdict(list)
        q_seats = select(SeatRow).where(col(SeatRow.game_id).in_(ids)).order_by(col(SeatRow.game_id), col(SeatRow.seat))
        for seat in (await s.exec(q_seats)).all():
            seats[seat.game_id].append(seat)
        q_actions = (
            select(ActionRow).where(col(ActionRow.game_id).in_(ids)).order_by(col(ActionRow.game_id), col(ActionRow.seq))
        )
        for a in (await s.exec(q_actions)).all():
            actions[a.game_id].append(a)
        q_events = select(EventRow).where(col(EventRow.game_id).in_(ids)).order_by(col(EventRow.game_id), col(EventRow.seq))
        for e in (await s.exec(q_events)).all():
            events[e.game_id].append(e)
        return [GameLog(r, seats[r.id], actions[r.id], events[r.id]) for r in rows if r.id is not None]

    # ------------------------------------------------------------------ deadlines

    async def set_deadline(self, game_id: int, seat: int, due_at: datetime) -> int:
        """A pending deadline for a seat; any earlier pending one for that seat is cancelled."""
        async with self.write() as conn:
            await conn.execute(
                sa.update(_deadlines)
                .where(
                    _deadlines.c.game_id == game_id,
                    _deadlines.c.seat == seat,
                    _deadlines.c.state == DeadlineState.PENDING.value,
                )
                .values(state=DeadlineState.CANCELLED.value)
            )
            res = await conn.execute(
                sa.insert(_deadlines).values(
                    game_id=game_id, seat=seat, due_at=due_at, state=DeadlineState.PENDING.value, created_at=utcnow()
                )
            )
            return inserted_id(res)

    async def clear_deadlines(self, game_id: int, seat: int | None = None) -> int:
        """Cancel pending deadlines of a game (or one seat of it); returns how many."""
        cond = [_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING.value]
        if seat is not None:
            cond.append(_deadlines.c.seat == seat)
        async with self.write() as conn:
            res = await conn.execute(sa.update(_deadlines).where(*cond).values(state=DeadlineState.CANCELLED.value))
            return int(res.rowcount)

    async def pending_deadlines(self) -> list[DeadlineRow]:
        """Pending deadlines, soonest first (re-armed by the bot on start-up)."""
        async with self.read() as s:
            q = (
                select(DeadlineRow)
                .where(DeadlineRow.state == DeadlineState.PENDING.value)
                .order_by(col(DeadlineRow.due_at), col(DeadlineRow.id))
            )
            return list((await s.exec(q)).all())

    async def finish_deadline(self, deadline_id: int) -> bool:
        """Pending → done. True when it was pending (so a deadline fires once)."""
        async with self.write() as conn:
            res = await conn.execute(
                sa.update(_deadlines)
                .where(_deadlines.c.id == deadline_id, _deadlines.c.state == DeadlineState.PENDING.value)
                .values(state=DeadlineState.DONE.value)
            )
            return res.rowcount == 1

    # ------------------------------------------------------------------ agent calls and evaluations

    async def log_agent_calls(self, calls: Sequence[AgentCallRecord]) -> None:
        """Agent calls not tied to an appended action (probes, failed attempts); each needs game_id."""
        if not calls:
            return
        for c in calls:
            if c.game_id is None:
                raise ValueError("log_agent_calls needs game_id on every AgentCallRecord")
        now = utcnow()
        async with self.write() as conn:
            await conn.execute(
                sa.insert(_agent_calls),
                [agent_call_values(c, game_id=c.game_id, action_seq=c.action_seq, now=now) for c in calls],
            )

    async def add_evaluation(self, game_id: int, action_seq: int, evaluator: str, metric: Mapping[str, Any]) -> int:
        async with self.write() as conn:
            res = await conn.execute(
                sa.insert(_evaluations).values(
                    game_id=game_id, action_seq=action_seq, evaluator=evaluator, metric=dict(metric), created_at=utcnow()
                )
            )
            return inserted_id(res)

    async def evaluations(self, game_id: int) -> list[EvaluationRow]:
        async with self.read() as s:
            q = select(EvaluationRow).where(EvaluationRow.game_id == game_id).order_by(col(EvaluationRow.id))
            return list((await s.exec(q)).all())

    # ------------------------------------------------------------------ helpers

    async def _insert_events(
        self,
        conn: AsyncConnection,
        game_id: int,
        events: Sequence[EventRecord],
        *,
        first_seq: int,
        action_seq: int | None,
        now: datetime,
    ) -> None:
        if not events:
            return
        await conn.execute(
            sa.insert(_events),
            [
                {
                    "game_id": game_id,
                    "seq": first_seq + i,
                    "action_seq": action_seq,
                    "kind": e.kind,
                    "data": dict(e.data),
                    "audience": e.audience_json,
                    "created_at": now,
                }
                for i, e in enumerate(events)
            ],
        )

    @staticmethod
    async def _claim(conn: AsyncConnection, key: str, game_id: int | None) -> bool:
        """Write an inbound key inside the caller's write transaction; False (nothing written) when seen before.

        One ``INSERT ... ON CONFLICT DO NOTHING`` instead of a select then an insert: the
        database decides, so two processes claiming one key at once cannot both win.
        """
        dialect = conn.dialect.name
        stmt: Any
        if dialect == "postgresql":
            stmt = pg_insert(_inbound).on_conflict_do_nothing(index_elements=[_inbound.c.key])
        elif dialect == "sqlite":
            stmt = sqlite_insert(_inbound).on_conflict_do_nothing(index_elements=[_inbound.c.key])
        else:  # other backends: the plain way, under the write lock
            if (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == key))).first() is not None:
                return False
            stmt = sa.insert(_inbound)
        res = await conn.execute(stmt.values(key=key, game_id=game_id, created_at=utcnow()))
        return bool(res.rowcount == 1)

    async def inbound_seen(self, key: str) -> bool:
        """True when this inbound key was claimed (by a turn or ``claim_inbound``). Reads only."""
        async with self._read_lock or contextlib.nullcontext():
            async with self.engine.connect() as conn:
                return (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == key))).first() is not None

    @staticmethod
    async def _raise_status(conn: AsyncConnection, game_id: int, what: str) -> None:
        status = (await conn.execute(sa.select(_games.c.status).where(_games.c.id == game_id))).scalar()
        if status is None:
            raise GameNotFound(game_id)
        raise GameStateError(f"cannot {what} game {game_id}: it is {status}")


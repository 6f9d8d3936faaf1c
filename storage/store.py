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
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import event as sa_event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, async_sessionmaker, create_async_engine
from sqlalchemy.pool import StaticPool
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from storage.tables import (
    ENDED,
    ActionRow,
    ActionSource,
    AgentCallRow,
    AgentOperation,
    DeadlineRow,
    DeadlineState,
    EvaluationRow,
    EventRow,
    GameRow,
    GameStatus,
    InboundRow,
    SeatKind,
    SeatRow,
    utcnow,
)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

_games: sa.Table = GameRow.__table__  # type: ignore[attr-defined]
_seats: sa.Table = SeatRow.__table__  # type: ignore[attr-defined]
_actions: sa.Table = ActionRow.__table__  # type: ignore[attr-defined]
_events: sa.Table = EventRow.__table__  # type: ignore[attr-defined]
_agent_calls: sa.Table = AgentCallRow.__table__  # type: ignore[attr-defined]
_inbound: sa.Table = InboundRow.__table__  # type: ignore[attr-defined]
_deadlines: sa.Table = DeadlineRow.__table__  # type: ignore[attr-defined]
_evaluations: sa.Table = EvaluationRow.__table__  # type: ignore[attr-defined]

SQLITE_PRAGMAS: tuple[str, ...] = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA busy_timeout=5000",
    "PRAGMA foreign_keys=ON",
)

# Execution option that marks the write engine; the "begin" hook reads it.
_WRITE_OPTION = "hushtable_write"

# The async driver used when a URL names only the backend ("sqlite:///x.db").
_DEFAULT_ASYNC_DRIVER = {"sqlite": "aiosqlite", "postgresql": "asyncpg", "mysql": "aiomysql"}
# Drivers that cannot run under asyncio: refused with a sentence rather than a driver traceback.
_SYNC_DRIVERS = {"pysqlite", "psycopg2", "pg8000", "pymysql", "mysqldb"}


class GameStateError(ValueError):
    """The game is not in a status that allows this write (e.g. a turn for a finished game)."""


class GameNotFound(KeyError):
    """No game has this id."""


# Drivers that log every statement with its parameters at DEBUG: rows hold moves and dealt secrets,
# and no log line may carry a secret (issue 9.7), so they never log below WARNING.
_CHATTY_DRIVER_LOGGERS = ("aiosqlite", "asyncpg")


def quiet_driver_logs() -> None:
    for name in _CHATTY_DRIVER_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


class DatabaseReadOnly(RuntimeError):
    """The database accepts no writes (a read-only file or role)."""


class SchemaOutOfDate(RuntimeError):
    """``Store.open(..., create=False)`` found a database not at the newest migration."""


# --------------------------------------------------------------------------- records written by callers


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """A seat of the frozen roster: a human with a user key, or an AI with an agent spec."""

    seat: int
    kind: SeatKind | str
    display_name: str
    user_key: str | None = None
    agent_spec: str | None = None

    def __post_init__(self) -> None:
        SeatKind(self.kind)


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action as logged: who played it (``actor``: user key or agent spec) and how (``source``)."""

    seat: int
    kind: str
    value: Sequence[str]
    source: ActionSource | str
    actor: str

    def __post_init__(self) -> None:
        ActionSource(self.source)
        if isinstance(self.value, str) or not all(isinstance(v, str) for v in self.value):
            raise ValueError("an action's value is a list of strings")

    @classmethod
    def of(cls, seat: int, action: Any, *, source: ActionSource | str, actor: str) -> ActionRecord:
        """From a ``games.base.Action`` (anything with ``kind`` and ``value``)."""
        return cls(seat, action.kind, tuple(action.value), source, actor)


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event as logged; ``audience_json`` is ``"public"`` or a list of seats (``Audience.to_json()``)."""

    kind: str
    data: Mapping[str, Any]
    audience_json: str | list[int] = "public"

    def __post_init__(self) -> None:
        aud = self.audience_json
        if aud != "public" and not (isinstance(aud, list) and all(isinstance(s, int) for s in aud)):
            raise ValueError(f"audience must be 'public' or a list of seat numbers, not {aud!r}")

    @classmethod
    def of(cls, event: Any) -> EventRecord:
        """From a ``games.base.Event`` (anything with ``to_json()`` giving kind, data, audience)."""
        raw = event.to_json()
        return cls(raw["kind"], raw["data"], raw["audience"])


@dataclass(frozen=True, slots=True)
class AgentCallRecord:
    """One model call made for an AI seat.

    In ``append_turn`` the call is tied to the appended action: ``game_id`` and
    ``action_seq`` are filled in there. ``log_agent_calls`` needs ``game_id``.
    """

    seat: int
    agent_spec: str
    operation: AgentOperation | str = AgentOperation.NONE
    model_id: str = ""
    prompt: Any = field(default_factory=list)
    raw_output: str = ""
    label_probs: Mapping[str, float] | None = None
    latency_ms: float = 0.0
    retries: int = 0
    fallback: bool = False
    error: str | None = None
    game_id: int | None = None
    action_seq: int | None = None

    def __post_init__(self) -> None:
        AgentOperation(self.operation)


@dataclass(frozen=True)
class GameLog:
    """Everything logged about one game, in order: enough to replay it."""

    row: GameRow
    seats: list[SeatRow]
    actions: list[ActionRow]
    events: list[EventRow]


# --------------------------------------------------------------------------- engines and migrations


@dataclass(frozen=True, slots=True)
class EnginePlan:
    """How a URL becomes an engine; computed without connecting (or importing the driver)."""

    url: URL
    backend: str
    in_memory: bool
    engine_kwargs: Mapping[str, Any]

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"


def plan_engine(url: str | URL) -> EnginePlan:
    """Normalise a database URL for asyncio and pick the engine options for its backend.

    ``sqlite:///x.db`` becomes ``sqlite+aiosqlite:///x.db`` and ``postgresql://``
    becomes ``postgresql+asyncpg://``; a synchronous driver named explicitly is
    refused with a ValueError.
    """
    u = make_url(url)
    backend = u.get_backend_name()
    if "+" in u.drivername:
        driver = u.drivername.split("+", 1)[1]
        if driver in _SYNC_DRIVERS:
            raise ValueError(
                f"{u.drivername} is a synchronous driver; use an async one such as "
                f"{backend}+{_DEFAULT_ASYNC_DRIVER.get(backend, '<async driver>')}"
            )
    else:
        default = _DEFAULT_ASYNC_DRIVER.get(backend)
        if default is None:
            raise ValueError(f"no default async driver for {backend!r}: name one, as in {backend}+<driver>://")
        u = u.set(drivername=f"{backend}+{default}")
    kwargs: dict[str, Any] = {}
    in_memory = False
    if backend == "sqlite":
        db = u.database or ""
        in_memory = db in ("", ":memory:") or u.query.get("mode") == "memory"
        if in_memory:
            # Every new connection to :memory: is a new, empty database: share one.
            kwargs["poolclass"] = StaticPool
    else:
        # Server databases drop idle connections; check before use.
        kwargs["pool_pre_ping"] = True
    return EnginePlan(url=u, backend=backend, in_memory=in_memory, engine_kwargs=kwargs)


def _install_sqlite_hooks(engine: sa.Engine) -> None:
    @sa_event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The sqlite3 driver begins transactions lazily (not before SELECT or DDL);
        # turn that off so the "begin" hook below decides, as SQLAlchemy documents.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        for pragma in SQLITE_PRAGMAS:
            cur.execute(pragma)
        cur.close()

    @sa_event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # IMMEDIATE takes the write lock up front, so a write transaction that reads
        # first (max seq) never has to upgrade a read snapshot and fail with SQLITE_BUSY.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE_OPTION) else "BEGIN")


def make_engine(url: str | URL | EnginePlan) -> AsyncEngine:
    """An async engine for the URL, with the SQLite pragmas and transaction hooks where they apply."""
    plan = url if isinstance(url, EnginePlan) else plan_engine(url)
    engine = create_async_engine(plan.url, **plan.engine_kwargs)
    if plan.is_sqlite:
        _install_sqlite_hooks(engine.sync_engine)
    return engine


def make_turn_engine(plan: EnginePlan) -> sa.Engine | None:
    """For a SQLite file, a plain synchronous engine for the turn log's group commits.

    Through aiosqlite every statement is a round trip to its thread (about twenty for one
    turn); a whole group commit on this engine is one trip to a worker thread. WAL lets it
    write beside the async engine's readers; the store's write lock keeps writers in line.
    """
    if not plan.is_sqlite or plan.in_memory:
        return None
    engine = sa.create_engine(plan.url.set(drivername="sqlite+pysqlite"), pool_size=1, max_overflow=0)
    _install_sqlite_hooks(engine)
    return engine.execution_options(**{_WRITE_OPTION: True})


def alembic_config(url: str | URL | None = None, *, output_buffer: TextIO | None = None) -> Config:
    """A programmatic alembic Config for storage/migrations (no alembic.ini needed).

    ``output_buffer`` receives the SQL of offline runs (``command.upgrade(cfg, "head", sql=True)``).
    """
    cfg = Config(output_buffer=output_buffer)
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        rendered = plan_engine(url).url.render_as_string(hide_password=False)
        # Config values go through configparser interpolation: escape "%" (URL-encoded passwords).
        cfg.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return cfg


def head_revision() -> str:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {heads}")
    return heads[0]


# --------------------------------------------------------------------------- the store

_MAX_GROUP = 256  # turns committed in one transaction at most


@dataclass(slots=True)
class _Turn:
    game_id: int
    action: ActionRecord
    events: tuple[EventRecord, ...]
    inbound_key: str | None
    calls: tuple[AgentCallRecord, ...]
    future: asyncio.Future


def _status_list(status: str | Iterable[str]) -> list[str]:
    return [str(status)] if isinstance(status, str) else [str(s) for s in status]


class Store:
    """Async access to the game log. Make one with ``await Store.open(url)``; close with ``aclose()``."""

    def __init__(self, engine: AsyncEngine, plan: EnginePlan) -> None:
        self.engine = engine
        self.plan = plan
        self._writer = engine.execution_options(**{_WRITE_OPTION: True})
        self._sessions = async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)
        self._write_lock = asyncio.Lock()
        self._turns: list[_Turn] = []
        self._flusher: asyncio.Task | None = None
        self._turn_engine = make_turn_engine(plan)
        # One shared connection (in-memory SQLite) cannot hold a read and a write transaction at once.
        self._read_lock: asyncio.Lock | None = self._write_lock if plan.in_memory else None

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(cls, url: str | URL, *, create: bool = True) -> Store:
        """Connect and bring the schema to the newest migration (``create=False``: only check it is)."""
        plan = plan_engine(url)
        quiet_driver_logs()
        if plan.is_sqlite and not plan.in_memory and plan.url.database:
            Path(plan.url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
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
        if self._flusher is not None:
            await asyncio.gather(self._flusher, return_exceptions=True)
        if self._turn_engine is not None:
            self._turn_engine.dispose()
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

        async with self._write() as conn:
            await conn.run_sync(_upgrade)

    async def revision(self) -> str | None:
        """The alembic revision the database is at (None when never migrated)."""

        def _current(sync_conn: sa.Connection) -> str | None:
            return MigrationContext.configure(sync_conn).get_current_revision()

        async with self._read_lock or contextlib.nullcontext():
            async with self.engine.connect() as conn:
                return await conn.run_sync(_current)

    @contextlib.asynccontextmanager
    async def _write(self) -> AsyncIterator[AsyncConnection]:
        async with self._write_lock:
            async with self._writer.begin() as conn:
                yield conn

    @contextlib.asynccontextmanager
    async def _read(self) -> AsyncIterator[AsyncSession]:
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
        async with self._write() as conn:
            if inbound_key is not None:
                seen = (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == inbound_key))).first()
                if seen is not None:
                    return None
            res = await conn.execute(sa.insert(_games).values(values))
            game_id = int(res.inserted_primary_key[0])  # type: ignore[index]
            if inbound_key is not None:
                await conn.execute(sa.insert(_inbound), [{"key": inbound_key, "game_id": game_id, "created_at": utcnow()}])
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
        async with self._write() as conn:
            if inbound_key is not None:
                seen = (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == inbound_key))).first()
                if seen is not None:
                    return False
                await conn.execute(sa.insert(_inbound), [{"key": inbound_key, "game_id": game_id, "created_at": utcnow()}])
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
        async with self._write() as conn:
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
        async with self._read() as s:
            q = select(sa.func.count()).select_from(GameRow).where(
                GameRow.tenant == tenant, GameRow.host == host, GameRow.status == GameStatus.LOBBY.value)
            return int((await s.exec(q)).one())

    async def check_writable(self) -> None:
        """Raise DatabaseReadOnly with a clear sentence when the database refuses writes."""
        try:
            async with self._write() as conn:
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
        async with self._write() as conn:
            if inbound_key is not None:
                await conn.execute(sa.insert(_inbound), [{"key": inbound_key, "game_id": game_id, "created_at": now}])
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
        turn = _Turn(game_id, action, tuple(events), inbound_key, tuple(agent_calls),
                     asyncio.get_running_loop().create_future())
        self._turns.append(turn)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.get_running_loop().create_task(self._flush_turns())
        # Shielded: a caller that goes away does not take a half-queued turn with it.
        return await asyncio.shield(turn.future)

    async def _flush_turns(self) -> None:
        while self._turns:
            batch, self._turns = self._turns[:_MAX_GROUP], self._turns[_MAX_GROUP:]
            try:
                await self._write_turns(batch)
            except Exception:
                # The group failed as a whole (say an integrity error): retry one by one so
                # only the turn at fault sees its error.
                for turn in batch:
                    if turn.future.done():
                        continue
                    try:
                        await self._write_turns([turn])
                    except Exception as exc:  # noqa: BLE001 - delivered to its own caller
                        if not turn.future.done():
                            turn.future.set_exception(exc)

    async def _write_turns(self, batch: Sequence[_Turn]) -> None:
        if self._turn_engine is not None:
            engine = self._turn_engine

            def commit() -> list[tuple[_Turn, bool | Exception]]:
                with engine.begin() as conn:
                    return self._write_turns_on(conn, batch)

            async with self._write_lock:
                outcome = await asyncio.to_thread(commit)
        else:
            async with self._write() as conn:
                outcome = await conn.run_sync(self._write_turns_on, batch)
        for t, res in outcome:  # committed: now answer
            if t.future.done():
                continue
            if isinstance(res, Exception):
                t.future.set_exception(res)
            else:
                t.future.set_result(res)

    @staticmethod
    def _write_turns_on(conn: sa.Connection, batch: Sequence[_Turn]) -> list[tuple[_Turn, bool | Exception]]:
        """One transaction for a group of turns (synchronous: runs in a thread or under run_sync)."""
        now = utcnow()
        gids = sorted({t.game_id for t in batch})
        keys = sorted({t.inbound_key for t in batch if t.inbound_key is not None})
        outcome: list[tuple[_Turn, bool | Exception]] = []
        # One round trip for every game's status and last sequence numbers, one for the keys.
        probe = sa.select(
            _games.c.id,
            _games.c.status,
            sa.select(sa.func.max(_actions.c.seq)).where(_actions.c.game_id == _games.c.id).scalar_subquery(),
            sa.select(sa.func.max(_events.c.seq)).where(_events.c.game_id == _games.c.id).scalar_subquery(),
        ).where(_games.c.id.in_(gids))
        status: dict[int, str] = {}
        last_action: dict[int, int | None] = {}
        last_event: dict[int, int | None] = {}
        for gid, st, la, le in conn.execute(probe).all():
            status[gid], last_action[gid], last_event[gid] = st, la, le
        seen = set(conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key.in_(keys))).scalars()) if keys else set()
        inbound_rows: list[dict[str, Any]] = []
        action_rows: list[dict[str, Any]] = []
        event_rows: list[dict[str, Any]] = []
        call_rows: list[dict[str, Any]] = []
        for t in batch:
            if t.inbound_key is not None and t.inbound_key in seen:
                outcome.append((t, False))
                continue
            st = status.get(t.game_id)
            if st is None:
                outcome.append((t, GameNotFound(t.game_id)))
                continue
            if st != GameStatus.RUNNING.value:
                outcome.append((t, GameStateError(f"game {t.game_id} is {st}, not running: no turn can be logged")))
                continue
            if t.inbound_key is not None:
                seen.add(t.inbound_key)
                inbound_rows.append({"key": t.inbound_key, "game_id": t.game_id, "created_at": now})
            seq = (last_action.get(t.game_id) or 0) + 1
            last_action[t.game_id] = seq
            a = t.action
            action_rows.append({"game_id": t.game_id, "seq": seq, "seat": a.seat, "kind": a.kind,
                                "value": list(a.value), "source": str(a.source), "actor": a.actor,
                                "inbound_id": t.inbound_key, "created_at": now})
            first = (last_event.get(t.game_id) or 0) + 1
            event_rows.extend({"game_id": t.game_id, "seq": first + i, "action_seq": seq, "kind": e.kind,
                               "data": dict(e.data), "audience": e.audience_json, "created_at": now}
                              for i, e in enumerate(t.events))
            last_event[t.game_id] = first + len(t.events) - 1
            call_rows.extend(_agent_call_values(c, game_id=t.game_id, action_seq=seq, now=now) for c in t.calls)
            outcome.append((t, True))
        for table, rows in ((_inbound, inbound_rows), (_actions, action_rows), (_events, event_rows),
                            (_agent_calls, call_rows)):
            if rows:
                conn.execute(sa.insert(table), rows)
        return outcome

    async def claim_inbound(self, key: str, game_id: int | None = None) -> bool:
        """Record a platform event handled without a turn (join, leave, lobby edits); True when new."""
        try:
            async with self._write() as conn:
                seen = (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == key))).first()
                if seen is not None:
                    return False
                await conn.execute(sa.insert(_inbound), [{"key": key, "game_id": game_id, "created_at": utcnow()}])
                return True
        except IntegrityError:
            if await self._inbound_seen(key):
                return False
            raise

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
        async with self._write() as conn:
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
        async with self._write() as conn:
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
        async with self._read() as s:
            q = (
                select(GameRow)
                .where(col(GameRow.status).in_([x.value for x in ENDED]), col(GameRow.announced_at).is_(None))
                .order_by(col(GameRow.id))
            )
            return list((await s.exec(q)).all())

    # ------------------------------------------------------------------ reading the log

    async def game(self, game_id: int) -> GameRow | None:
        async with self._read() as s:
            return await s.get(GameRow, game_id)

    async def load_game(self, game_id: int) -> GameLog:
        """The game's row, frozen roster, actions and events (by seq). Raises GameNotFound."""
        async with self._read() as s:
            row = await s.get(GameRow, game_id)
            if row is None:
                raise GameNotFound(game_id)
            return (await self._logs(s, [row]))[0]

    async def unfinished_games(self) -> list[GameLog]:
        """Running games, to be replayed on start-up."""
        async with self._read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.RUNNING.value).order_by(col(GameRow.id))
            rows = list((await s.exec(q)).all())
            return await self._logs(s, rows)

    async def open_lobbies(self, platform: str | None = None, *, tenant: str | None = None) -> list[GameRow]:
        async with self._read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.LOBBY.value)
            if platform is not None:
                q = q.where(GameRow.platform == platform)
            if tenant is not None:
                q = q.where(GameRow.tenant == tenant)
            return list((await s.exec(q.order_by(col(GameRow.id)))).all())

    async def lobby_at(self, platform: str, place: str) -> GameRow | None:
        """The newest game in the lobby or running at this place, if any."""
        async with self._read() as s:
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
        async with self._read() as s:
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
        async with self._read() as s:
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
        async with self._write() as conn:
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
            return int(res.inserted_primary_key[0])  # type: ignore[index]

    async def clear_deadlines(self, game_id: int, seat: int | None = None) -> int:
        """Cancel pending deadlines of a game (or one seat of it); returns how many."""
        cond = [_deadlines.c.game_id == game_id, _deadlines.c.state == DeadlineState.PENDING.value]
        if seat is not None:
            cond.append(_deadlines.c.seat == seat)
        async with self._write() as conn:
            res = await conn.execute(sa.update(_deadlines).where(*cond).values(state=DeadlineState.CANCELLED.value))
            return int(res.rowcount)

    async def pending_deadlines(self) -> list[DeadlineRow]:
        """Pending deadlines, soonest first (re-armed by the bot on start-up)."""
        async with self._read() as s:
            q = (
                select(DeadlineRow)
                .where(DeadlineRow.state == DeadlineState.PENDING.value)
                .order_by(col(DeadlineRow.due_at), col(DeadlineRow.id))
            )
            return list((await s.exec(q)).all())

    async def finish_deadline(self, deadline_id: int) -> bool:
        """Pending → done. True when it was pending (so a deadline fires once)."""
        async with self._write() as conn:
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
        async with self._write() as conn:
            await conn.execute(
                sa.insert(_agent_calls),
                [_agent_call_values(c, game_id=c.game_id, action_seq=c.action_seq, now=now) for c in calls],
            )

    async def add_evaluation(self, game_id: int, action_seq: int, evaluator: str, metric: Mapping[str, Any]) -> int:
        async with self._write() as conn:
            res = await conn.execute(
                sa.insert(_evaluations).values(
                    game_id=game_id, action_seq=action_seq, evaluator=evaluator, metric=dict(metric), created_at=utcnow()
                )
            )
            return int(res.inserted_primary_key[0])  # type: ignore[index]

    async def evaluations(self, game_id: int) -> list[EvaluationRow]:
        async with self._read() as s:
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

    async def inbound_seen(self, key: str) -> bool:
        """True when this inbound key was claimed (by a turn or ``claim_inbound``). Reads only."""
        async with self._read_lock or contextlib.nullcontext():
            async with self.engine.connect() as conn:
                return (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == key))).first() is not None

    _inbound_seen = inbound_seen  # older spelling used by bot.core; prefer inbound_seen

    @staticmethod
    async def _raise_status(conn: AsyncConnection, game_id: int, what: str) -> None:
        status = (await conn.execute(sa.select(_games.c.status).where(_games.c.id == game_id))).scalar()
        if status is None:
            raise GameNotFound(game_id)
        raise GameStateError(f"cannot {what} game {game_id}: it is {status}")


def _agent_call_values(c: AgentCallRecord, *, game_id: int | None, action_seq: int | None, now: datetime) -> dict[str, Any]:
    return {
        "game_id": game_id,
        "seat": c.seat,
        "action_seq": action_seq,
        "agent_spec": c.agent_spec,
        "model_id": c.model_id,
        "operation": str(c.operation),
        "prompt": c.prompt,
        "raw_output": c.raw_output,
        "label_probs": dict(c.label_probs) if c.label_probs is not None else None,
        "latency_ms": float(c.latency_ms),
        "retries": c.retries,
        "fallback": c.fallback,
        "error": c.error,
        "created_at": now,
    }

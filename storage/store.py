"""The game log's store: one object the bot holds for every read and write of the log.

``Store.open(url)`` makes an async SQLAlchemy engine for any async URL
(``sqlite+aiosqlite:///hushtable.db`` by default, ``postgresql+asyncpg://...``
by configuration alone) and brings the schema to the newest alembic revision.

A ``Store`` is a ``storage.database.Database`` (the engine and its public units of
work, ``write()`` and ``read()``) with one repository per aggregate of the log:

- ``store.log``: games, their rosters, actions and events (``storage.games``), turns
  through the group-commit writer (``storage.turnlog``);
- ``store.deadlines``: deadlines of human turns (``storage.deadlines``);
- ``store.inbound``: inbound claims made outside a game write (``storage.inbound``);
- ``store.calls``: agent calls read back (``storage.agentcalls``).

The repositories' methods are also the store's own (``store.append_turn`` is
``store.log.append_turn``): that flat surface is what the bot's core depends on,
through the ``storage.ports.TableStore`` protocol. Evaluations and tournaments are
repositories of functions over a store (``storage.evaluations``, ``storage.tournaments``).
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import IO, Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from sqlalchemy import event as sa_event
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.agentcalls import AgentCallRepository
from storage.database import Database, quiet_driver_logs
from storage.deadlines import DeadlineRepository

# Engines, records and errors live beside the store; they are re-exported here because
# callers have always imported them from storage.store.
from storage.engine import (
    MIGRATIONS_DIR,
    SQLITE_PRAGMAS,
    EnginePlan,
    alembic_config,
    head_revision,
    make_engine,
    make_turn_engine,
    plan_engine,
)
from storage.games import GameRepository
from storage.inbound import InboundClaims
from storage.outbox import OutboxRepository
from storage.ownership import NotOwner, TableLeases
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
from storage.relay import CommandRelay, RelayKeyMissing, check_key
from storage.turnlog import TurnLog

P = ParamSpec("P")
T = TypeVar("T")

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
    "NotOwner",
    "SchemaOutOfDate",
    "SeatRecord",
    "RelayKeyMissing",
    "SingleProcessOnly",
    "Store",
    "alembic_config",
    "head_revision",
    "make_engine",
    "make_turn_engine",
    "plan_engine",
    "quiet_driver_logs",
]


class SingleProcessOnly(RuntimeError):
    """A second bot process opened a SQLite file another bot process is driving."""


def lock_sqlite_file(path: Path) -> IO[bytes]:
    """Hold a lock beside a SQLite log for this process's life; SingleProcessOnly when another holds it."""
    handle = path.with_name(path.name + ".bot-lock").open("a+b")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise SingleProcessOnly(
            f"another Hushtable bot is already running on {path}: SQLite serves one bot process; "
            "stop the other one, or use PostgreSQL (HUSHTABLE_DATABASE_URL) to run several") from None
    return handle


class _Via(Generic[P, T]):
    """A store method that is its repository's method (``_Via("log", GameRepository.game)``):
    looked up on the instance's repository when called, typed as that method, and still
    overridable in a subclass like any method."""

    def __init__(self, repo: str, method: Callable[Concatenate[Any, P], T]) -> None:
        self.repo, self.name = repo, method.__name__

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type[Any]) -> Callable[P, T]: ...

    def __get__(self, obj: object | None, owner: type[Any]) -> Self | Callable[P, T]:
        if obj is None:
            return self
        method: Callable[P, T] = getattr(getattr(obj, self.repo), self.name)
        return method


class Store(Database):
    """Async access to the game log. Make one with ``await Store.open(url)``; close with ``aclose()``."""

    def __init__(self, engine: AsyncEngine, plan: EnginePlan) -> None:
        super().__init__(engine, plan)
        self._turnlog = TurnLog(self.writer, self.sync_writer, self.write_lock, wrote=self.wrote)
        self.log = GameRepository(self, self._turnlog)
        self.deadlines = DeadlineRepository(self)
        self.inbound = InboundClaims(self)
        self.outbox = OutboxRepository(self)
        self.calls = AgentCallRepository(self)
        self.leases: TableLeases | None = None  # set by own_tables() on a server database
        self.relay: CommandRelay | None = None  # likewise: commands to and from the holders of tables
        self._bot_lock: IO[bytes] | None = None  # SQLite: this process's lock on the file

    async def own_tables(self, owner: str, ttl: timedelta, *, relay_key: str | None = None) -> TableLeases | None:
        """Become one of the bot processes that drive this database's running games.

        On a server database the games are shared out by leases with fencing tokens
        (``storage.ownership``): from now on this process logs turns only for the games it
        holds (``store.leases``). SQLite is single-process: the file is locked for this
        process, and a second bot opening it is refused with a sentence (None is returned).

        On PostgreSQL the processes relay commands to each other (``storage.relay``) under
        ``relay_key``, the deployment's shared key: without one of ``relay.MIN_KEY_CHARS`` characters
        or more this raises ``RelayKeyMissing`` (one sentence) before anything is held."""
        postgres = self.plan.url.get_backend_name() == "postgresql"
        if postgres:
            relay_key = check_key(relay_key)
        if self.plan.is_sqlite:
            path = self.plan.sqlite_file  # None in memory: nothing another process could open
            if path is not None:
                self._bot_lock = lock_sqlite_file(path)
            return None
        self.leases = TableLeases(self, owner, ttl)
        self._turnlog.leases = self.log.leases = self.deadlines.leases = self.leases
        self._name_connections(owner, ttl)
        if postgres:
            assert relay_key is not None
            self.relay = CommandRelay(self, owner, relay_key)
        await self.engine.dispose()  # connections opened before (the migration's) were not named
        return self.leases

    def _name_connections(self, owner: str, ttl: timedelta) -> None:
        """Name this process's PostgreSQL sessions after its lease owner (``pg_stat_activity``
        shows who holds what, and the takeover can end a frozen holder's sessions), and let the
        server end a transaction left idle for a whole lease (a process frozen in mid-transaction
        would otherwise keep the game's row locked, and the takeover waiting, until it woke, and
        then commit late)."""
        lease_ms = str(max(1000, int(ttl.total_seconds() * 1000)))
        # A frozen process's transaction left idle is rolled back by the server after a lease; one
        # frozen in the middle of a statement's exchange is ended by the takeover (``TableLeases``).
        settings = {"application_name": owner[:63], "idle_in_transaction_session_timeout": lease_ms}

        def named(_dialect: Any, _record: Any, _cargs: Any, cparams: dict[str, Any]) -> None:
            # Given to the driver as the session's starting settings: no transaction can undo them.
            cparams["server_settings"] = {**cparams.get("server_settings", {}), **settings}

        sa_event.listen(self.engine.sync_engine, "do_connect", named)

    def watch_commits(self, seen: Callable[[], None]) -> None:
        """``seen()`` for each turn whose COMMIT outcome was lost and that was found committed, and
        each lobby or lifecycle write whose COMMIT outcome was lost (it was read back)."""
        self._turnlog.on_recovered = seen
        self.log.on_unknown = seen

    async def aclose(self) -> None:
        if self.relay is not None:
            await self.relay.aclose()
        await self._turnlog.aclose()
        await super().aclose()
        if self._bot_lock is not None:
            self._bot_lock.close()
            self._bot_lock = None

    # games, lobbies and the log
    create_game = _Via("log", GameRepository.create_game)
    update_lobby = _Via("log", GameRepository.update_lobby)
    start_game = _Via("log", GameRepository.start_game)
    append_turn = _Via("log", GameRepository.append_turn)
    finish_game = _Via("log", GameRepository.finish_game)
    mark_broken = _Via("log", GameRepository.mark_broken)
    mark_announced = _Via("log", GameRepository.mark_announced)
    game = _Via("log", GameRepository.game)
    games = _Via("log", GameRepository.games)
    load_game = _Via("log", GameRepository.load_game)
    load_games = _Via("log", GameRepository.load_games)
    actors = _Via("log", GameRepository.actors)
    unfinished_games = _Via("log", GameRepository.unfinished_games)
    unannounced_finished = _Via("log", GameRepository.unannounced_finished)
    open_lobbies = _Via("log", GameRepository.open_lobbies)
    lobby_at = _Via("log", GameRepository.lobby_at)
    count_open_lobbies = _Via("log", GameRepository.count_open_lobbies)
    running_games_of = _Via("log", GameRepository.running_games_of)
    # deadlines
    set_deadline = _Via("deadlines", DeadlineRepository.set_deadline)
    clear_deadlines = _Via("deadlines", DeadlineRepository.clear_deadlines)
    pending_deadlines = _Via("deadlines", DeadlineRepository.pending_deadlines)
    pending_for = _Via("deadlines", DeadlineRepository.pending_for)
    finish_deadline = _Via("deadlines", DeadlineRepository.finish_deadline)
    # the outbox of turns' messages
    unsent = _Via("outbox", OutboxRepository.unsent)
    mark_sent = _Via("_turnlog", TurnLog.mark_sent)  # in the turn log's next group commit
    # inbound claims
    claim_inbound = _Via("inbound", InboundClaims.claim_inbound)
    inbound_seen = _Via("inbound", InboundClaims.inbound_seen)
    # agent calls
    log_agent_calls = _Via("calls", AgentCallRepository.log_agent_calls)
    agent_calls = _Via("calls", AgentCallRepository.agent_calls)

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

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

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
    "SchemaOutOfDate",
    "SeatRecord",
    "Store",
    "alembic_config",
    "head_revision",
    "make_engine",
    "make_turn_engine",
    "plan_engine",
    "quiet_driver_logs",
]


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
        self._turnlog = TurnLog(self.writer, make_turn_engine(plan), self.write_lock)
        self.log = GameRepository(self, self._turnlog)
        self.deadlines = DeadlineRepository(self)
        self.inbound = InboundClaims(self)
        self.calls = AgentCallRepository(self)

    async def aclose(self) -> None:
        await self._turnlog.aclose()
        await super().aclose()

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
    actors = _Via("log", GameRepository.actors)
    unfinished_games = _Via("log", GameRepository.unfinished_games)
    unannounced_finished = _Via("log", GameRepository.unannounced_finished)
    open_lobbies = _Via("log", GameRepository.open_lobbies)
    lobby_at = _Via("log", GameRepository.lobby_at)
    count_open_lobbies = _Via("log", GameRepository.count_open_lobbies)
    # deadlines
    set_deadline = _Via("deadlines", DeadlineRepository.set_deadline)
    clear_deadlines = _Via("deadlines", DeadlineRepository.clear_deadlines)
    pending_deadlines = _Via("deadlines", DeadlineRepository.pending_deadlines)
    finish_deadline = _Via("deadlines", DeadlineRepository.finish_deadline)
    # inbound claims
    claim_inbound = _Via("inbound", InboundClaims.claim_inbound)
    inbound_seen = _Via("inbound", InboundClaims.inbound_seen)
    # agent calls
    log_agent_calls = _Via("calls", AgentCallRepository.log_agent_calls)
    agent_calls = _Via("calls", AgentCallRepository.agent_calls)

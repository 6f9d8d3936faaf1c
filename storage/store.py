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


class Store(Database):
    """Async access to the game log. Make one with ``await Store.open(url)``; close with ``aclose()``."""

    def __init__(self, engine: AsyncEngine, plan: EnginePlan) -> None:
        super().__init__(engine, plan)
        self._turnlog = TurnLog(self.writer, make_turn_engine(plan), self.write_lock)
        self.log = GameRepository(self, self._turnlog)
        self.deadlines = DeadlineRepository(self)
        self.inbound = InboundClaims(self)
        self.calls = AgentCallRepository(self)
        # games and lobbies
        self.create_game = self.log.create_game
        self.update_lobby = self.log.update_lobby
        self.start_game = self.log.start_game
        self.append_turn = self.log.append_turn
        self.finish_game = self.log.finish_game
        self.mark_broken = self.log.mark_broken
        self.mark_announced = self.log.mark_announced
        # reading the log
        self.game = self.log.game
        self.games = self.log.games
        self.load_game = self.log.load_game
        self.unfinished_games = self.log.unfinished_games
        self.unannounced_finished = self.log.unannounced_finished
        self.open_lobbies = self.log.open_lobbies
        self.lobby_at = self.log.lobby_at
        self.count_open_lobbies = self.log.count_open_lobbies
        # deadlines
        self.set_deadline = self.deadlines.set_deadline
        self.clear_deadlines = self.deadlines.clear_deadlines
        self.pending_deadlines = self.deadlines.pending_deadlines
        self.finish_deadline = self.deadlines.finish_deadline
        # inbound claims and agent calls
        self.claim_inbound = self.inbound.claim_inbound
        self.inbound_seen = self.inbound.inbound_seen
        self.agent_calls = self.calls.agent_calls

    async def aclose(self) -> None:
        await self._turnlog.aclose()
        await super().aclose()

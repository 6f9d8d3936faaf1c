"""The repository protocols the rest of the code depends on instead of the concrete ``Store``.

Each protocol is one aggregate's questions and writes, as small as its users need:
the table service's parts take the narrowest one (deadlines take `DeadlinePort`), and
`TableStore`, their union, is what the table service is handed and hands on. The
``Store`` satisfies every one of them (checked by mypy at the bottom of this file),
and only the start-up wiring, the command-line tools, the benches and the tools that open a
database by URL name it (``tests/test_store_named.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlmodel.ext.asyncio.session import AsyncSession

from storage.engine import EnginePlan
from storage.ownership import TableLeases
from storage.records import ActionActor, ActionRecord, AgentCallRecord, EventRecord, GameLog, OutboxRecord, SeatRecord
from storage.relay import CommandRelay
from storage.tables import AgentCallRow, DeadlineRow, GameRow, GameStatus, OutboxRow


class UnitsOfWork(Protocol):
    """One write transaction or one read session at a time (``storage.database.Database``)."""

    def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

    def read(self) -> AbstractAsyncContextManager[AsyncSession]: ...


class GameReader(Protocol):
    """Questions about games and their logs."""

    async def game(self, game_id: int) -> GameRow | None: ...

    async def load_game(self, game_id: int) -> GameLog: ...

    async def games(
        self,
        status: GameStatus | Iterable[GameStatus] | None = None,
        game: str | None = None,
        since: datetime | None = None,
        *,
        finished_since: datetime | None = None,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[GameRow]: ...

    async def actors(self, game_ids: Iterable[int]) -> dict[tuple[int, int], ActionActor]: ...


class GamePort(GameReader, Protocol):
    """A game's lifecycle: lobby, start, turns, end, announcement."""

    async def create_game(
        self, *, game: str, variant: str, config: Mapping[str, Any], platform: str, place: str, place_name: str,
        host: str, lobby: Mapping[str, Any], inbound_key: str | None = None, tenant: str = "",
    ) -> int | None: ...

    async def update_lobby(
        self, game_id: int, lobby: Mapping[str, Any], *, config: Mapping[str, Any] | None = None,
        variant: str | None = None, inbound_key: str | None = None, host: str | None = None, running: bool = False,
    ) -> bool: ...

    async def start_game(
        self, game_id: int, *, seed: int, config: Mapping[str, Any], seats: Sequence[SeatRecord],
        events: Sequence[EventRecord], rules_version: str, inbound_key: str | None = None,
    ) -> None: ...

    async def append_turn(
        self, game_id: int, *, action: ActionRecord, events: Sequence[EventRecord], inbound_key: str | None,
        agent_calls: Sequence[AgentCallRecord] = (), outbox: Sequence[OutboxRecord] = (),
        seq: int | None = None,
    ) -> bool: ...

    async def finish_game(
        self, game_id: int, *, status: GameStatus, result: Mapping[str, Any] | None,
        events: Sequence[EventRecord] = (), inbound_key: str | None = None,
    ) -> bool: ...

    async def mark_broken(self, game_id: int, reason: str) -> None: ...

    async def mark_announced(self, game_id: int) -> bool: ...

    async def unfinished_games(self) -> list[GameLog]: ...

    async def unannounced_finished(self) -> list[GameRow]: ...

    async def open_lobbies(self, platform: str | None = None, *, tenant: str | None = None) -> list[GameRow]: ...

    async def lobby_at(self, platform: str, place: str) -> GameRow | None: ...

    async def count_open_lobbies(self, tenant: str, host: str) -> int: ...


class DeadlinePort(Protocol):
    """Deadlines of human turns."""

    async def set_deadline(self, game_id: int, seat: int, due_at: datetime) -> int: ...

    async def clear_deadlines(self, game_id: int, seat: int | None = None) -> int: ...

    async def pending_deadlines(self) -> list[DeadlineRow]: ...

    async def pending_for(self, game_ids: list[int]) -> list[DeadlineRow]: ...

    async def finish_deadline(self, deadline_id: int, game_id: int | None = None, *,
                              again: bool = False) -> bool: ...


class OutboxPort(Protocol):
    """Messages of turns: the unsent ones of some games, and the mark that they were sent."""

    async def unsent(self, game_ids: Iterable[int]) -> list[OutboxRow]: ...

    async def mark_sent(self, ids: Iterable[str]) -> int: ...


class InboundPort(Protocol):
    """Platform events already handled."""

    async def claim_inbound(self, key: str, game_id: int | None = None) -> bool: ...

    async def inbound_seen(self, key: str) -> bool: ...


class Reachable(Protocol):
    """What a health check asks of the log: where it lives (a SQLite file must still be there) and an engine
    to ask it ``SELECT 1`` on a connection of its own."""

    @property
    def plan(self) -> EnginePlan: ...

    @property
    def engine(self) -> AsyncEngine: ...


class ExportSource(UnitsOfWork, GameReader, Protocol):
    """What an export reads: the log, its agent calls and evaluations, and where the log lives
    (a SQLite file keeps its pseudonym key beside it). The web view reads the same."""

    @property
    def plan(self) -> EnginePlan: ...

    async def agent_calls(self, game_id: int) -> list[AgentCallRow]: ...


class TableStore(GamePort, DeadlinePort, OutboxPort, InboundPort, ExportSource, Protocol):
    """Everything the table service and the rooms around it use of the log."""

    @property
    def leases(self) -> TableLeases | None:
        """This process's hold on the games it drives, when several processes share the database."""

    def watch_commits(self, seen: Callable[[], None]) -> None:
        """``seen()`` for each turn whose COMMIT outcome was lost and that was read back."""

    @property
    def relay(self) -> CommandRelay | None:
        """How this process reaches the holder of a table it does not drive (several processes)."""

    async def running_games_of(self, user_key: str) -> list[int]: ...

    async def check_writable(self) -> None: ...


if TYPE_CHECKING:
    from storage.store import Store

    def _store_is_a_table_store(store: Store) -> TableStore:
        return store  # mypy fails here the day the store and the protocols disagree

    def _store_is_reachable(store: Store) -> Reachable:
        return store

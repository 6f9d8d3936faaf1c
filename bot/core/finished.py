"""What a finished table hands on, and the port through which tournaments, SNEAK and research
open AI-only tables, wait for them and hear of every finished game (``bot.core.ai_tables`` is
the table service's side of it). None of them imports the table service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.messages import Outgoing, Place
from games.base import Result
from games.record import Record


@dataclass(frozen=True, slots=True)
class FinishedTable:
    """A table whose game finished, as it is handed on to tournaments, SNEAK and research: built
    from the table in memory, so none of them reads the game's log again to learn how it ended."""

    game_id: int
    game: str
    variant: str
    place: Place
    tenant: str
    record: Record  # engine, config, seats, seed, the actions with their log seqs, the stored result
    result: Result
    names: tuple[str, ...]  # the seats' names at the table, in seat order


FinishListener = Callable[[FinishedTable], Awaitable[Outgoing | None]]
"""Called after a game's result is announced; an Outgoing it returns is posted to the table's place."""


class AiTablesPort(Protocol):
    """Open an AI-only table, wait for its end, be told when any table finishes (``bot.core.ai_tables``)."""

    async def open_ai_table(self, *, tenant: str, place: Place, game: str, variant: str | None,
                            options: Mapping[str, Any], agents: Sequence[str], seed: int,
                            spectate: bool = True) -> int: ...

    async def wait_finished(self, game_id: int) -> FinishedTable | None: ...

    def add_finish_listener(self, cb: FinishListener) -> None: ...

"""What a finished table hands on, and the port through which tournaments, SNEAK and research
open AI-only tables, wait for them and hear of every finished game (``bot.core.ai_tables`` is
the table service's side of it). None of them imports the table service."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.messages import Outgoing, Place
from games.base import Result
from games.record import Record
from storage.records import GameLog
from storage.tables import ActionRow, ActionSource, EventRow, GameRow, SeatKind, SeatRow


@dataclass(frozen=True, slots=True)
class FinishedSeat:
    """Who sat in a seat, as the log keeps it: a member's key or an agent's spec, and the name shown."""

    seat: int
    kind: str  # ``SeatKind`` value
    user_key: str | None
    agent_spec: str | None
    name: str


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
    seats: tuple[FinishedSeat, ...] = ()  # who sat where; empty when the table did not say
    movers: tuple[tuple[str, str], ...] = ()  # each action's (source, actor) as logged, in the record's order


def finished_log(finished: FinishedTable, row: GameRow) -> GameLog | None:
    """The game's log as the store would give it back, rebuilt from the finished table and its row
    (``row``: the game's lobby, config and seed), so that a reader of finished games does not load the
    log again: seats and actions as the table logged them, events by replaying the record (the engines
    are deterministic; each event numbered in play order, after the deal's, with its action's seq).
    None when the table did not hand on who sat and moved (then the log is read)."""
    rec = finished.record
    if not finished.seats or len(finished.movers) != len(rec.actions) or len(rec.lines) != len(rec.actions):
        return None
    gid = finished.game_id
    seats = [SeatRow(game_id=gid, seat=s.seat, kind=SeatKind(s.kind), user_key=s.user_key, display_name=s.name,
                     agent_spec=s.agent_spec) for s in finished.seats]
    actions = [ActionRow(game_id=gid, seq=seq, seat=seat, kind=a.kind, value=list(a.value), source=ActionSource(src),
                         actor=actor)
               for (seat, a), seq, (src, actor) in zip(rec.actions, rec.lines, finished.movers, strict=True)]
    events: list[EventRow] = []

    def logged(evs: Sequence[Any], action_seq: int | None) -> None:
        for e in evs:
            raw = json.loads(json.dumps(e.to_json()))  # as the JSON columns give it back
            events.append(EventRow(game_id=gid, seq=len(events) + 1, action_seq=action_seq, kind=raw["kind"],
                                   data=raw["data"], audience=raw["audience"]))

    state, deal = rec.game.new(rec.config, rec.seats, rec.seed)
    logged(deal, None)
    for (seat, a), seq in zip(rec.actions, rec.lines, strict=True):
        state, evs = rec.game.apply(state, seat, a)
        logged(evs, seq)
    return GameLog(row, seats, actions, events)


FinishListener = Callable[[FinishedTable], Awaitable[Outgoing | None]]
"""Called after a game's result is announced; an Outgoing it returns is posted to the table's place."""


class AiTablesPort(Protocol):
    """Open an AI-only table, wait for its end, be told when any table finishes (``bot.core.ai_tables``)."""

    async def open_ai_table(self, *, tenant: str, place: Place, game: str, variant: str | None,
                            options: Mapping[str, Any], agents: Sequence[str], seed: int,
                            spectate: bool = True) -> int: ...

    async def wait_finished(self, game_id: int) -> FinishedTable | None: ...

    def add_finish_listener(self, cb: FinishListener) -> None: ...

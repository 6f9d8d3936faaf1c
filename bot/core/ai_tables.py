"""AI-only tables and the end of every table: what tournaments, SNEAK and research are handed.

``open_ai_table`` creates, seats and starts a table whose seats are all played by named agents;
``wait_finished`` waits for a game's end; a finish listener is told after each result is
announced, and an Outgoing it returns is posted to the table's place. The service wires this
room and tells it when a table ends (``ended``); nothing here reaches back into the service.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

import games as game_registry
from bot.core import commands as c
from bot.core.commands import Refused
from bot.core.delivery import Delivery
from bot.core.finished import FinishedSeat, FinishedTable, FinishListener
from bot.core.lobby import Lobbies, host_user
from bot.core.messages import Place
from bot.core.replays import record_of
from bot.core.tables import Lobby, LobbySeat, Table, place_of
from games.base import Result, config_to_dict
from models.agent_names import canonical
from storage.ports import GamePort
from storage.tables import GameStatus, SeatKind

log = logging.getLogger(__name__)



class AiTables:
    def __init__(self, store: GamePort, lobbies: Lobbies, delivery: Delivery, *,
                 agent_choices: Callable[[], Sequence[str]], lock_for: Callable[[int], asyncio.Lock],
                 spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]]) -> None:
        self.store = store
        self.lobbies = lobbies
        self.delivery = delivery
        self.agent_choices = agent_choices
        self.lock_for = lock_for
        self.spawn = spawn
        self._finish_listeners: list[FinishListener] = []
        self._ended: dict[int, asyncio.Future[FinishedTable | None]] = {}

    async def open_ai_table(self, *, tenant: str, place: Place, game: str, variant: str | None,
                            options: Mapping[str, Any], agents: Sequence[str], seed: int,
                            spectate: bool = True) -> int:
        """Create, seat and start an AI-only table; seat i is played by ``agents[i]`` (order kept).

        Returns the game id. Raises ValueError (ConfigError for options) with a readable sentence
        for an unknown game, bad options, an agent name outside ``agent_choices()``, a seat count
        the game does not allow or a seed outside 0..2^62. ``spectate=False`` posts nothing.
        """
        try:
            engine = game_registry.get(game)
            opts = c.check_options(options)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        except Refused as exc:
            raise ValueError(str(exc)) from None
        cfg = engine.make_config(variant, **opts)
        allowed = set(self.agent_choices())
        agents = [canonical(a) for a in agents]  # an old name (llm:default) reads as its new one
        unknown = sorted({a for a in agents if a not in allowed})
        if unknown:
            raise ValueError(f"unknown agent(s) {', '.join(unknown)}; choose among {', '.join(sorted(allowed))}")
        lo, hi = engine.seat_range(cfg)
        if not lo <= len(agents) <= hi:
            raise ValueError(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats, not {len(agents)}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < c.MAX_ID:
            raise ValueError("a seed is a whole number between 0 and 2^62")
        host = host_user(place.platform)
        lobby = Lobby(host, tuple(LobbySeat(SeatKind.AI, agent=a) for a in agents), quiet=not spectate)
        gid = await self.store.create_game(
            game=engine.id, variant=cfg.variant, config=config_to_dict(cfg), platform=place.platform,
            place=place.key, place_name="", host=host.key, lobby=lobby.to_json(), tenant=tenant,
        )
        assert gid is not None  # no inbound key: never a duplicate
        async with self.lock_for(gid):
            row = await self.store.game(gid)
            assert row is not None
            await self.lobbies.begin(row, engine, cfg, seed, place, keep_order=True)
        return gid

    async def wait_finished(self, game_id: int) -> FinishedTable | None:
        """The finished table once its game has ended; None when it was aborted or broke."""
        # Listen before reading: a game that ends while the row is read (its end is committed before
        # its waiters are told) is either seen ended in the row or heard about here. Reading first
        # left a window in which the end was told to nobody and the waiter waited for ever.
        fut = self._ended.get(game_id)
        if fut is None:
            fut = self._ended[game_id] = asyncio.get_running_loop().create_future()
        row = await self.store.game(game_id)  # on an error the future stays: the game's end resolves it
        if row is None:
            if not fut.done() and self._ended.get(game_id) is fut:
                del self._ended[game_id]  # no such game: nothing will ever end it
            raise KeyError(f"no game {game_id}")
        if row.status not in (GameStatus.LOBBY, GameStatus.RUNNING):
            outcome = None
            if row.status == GameStatus.FINISHED and row.result is not None:
                # Ended before anyone here waited (another process, an earlier run): the log tells it.
                glog = await self.store.load_game(game_id)
                names = tuple(s.display_name for s in sorted(glog.seats, key=lambda s: s.seat))
                seats = tuple(FinishedSeat(s.seat, str(s.kind), s.user_key, s.agent_spec, s.display_name)
                              for s in sorted(glog.seats, key=lambda s: s.seat))
                outcome = FinishedTable(game_id, row.game, row.variant, place_of(row), row.tenant, record_of(glog),
                                        Result.from_json(row.result), names, seats,
                                        tuple((str(a.source), a.actor) for a in glog.actions))
            self.resolve(game_id, outcome)  # whoever else waits on this future hears it now
            return outcome
        return await asyncio.shield(fut)

    def add_finish_listener(self, cb: FinishListener) -> None:
        """``cb(finished)`` runs in the background after each result is announced."""
        self._finish_listeners.append(cb)

    def ended(self, table: Table, result: Result | None) -> None:
        """A table is over: its waiters hear, and (when it finished) the listeners run."""
        finished = None if result is None else FinishedTable(
            table.game_id, table.engine.id, table.cfg.variant, table.place, table.tenant, table.record(result), result,
            tuple(table.names),
            tuple(FinishedSeat(s.seat, s.kind.value, s.user.key if s.user is not None else None, s.agent, s.name)
                  for s in table.seats),
            tuple(table.movers))
        self.resolve(table.game_id, finished)
        if finished is not None and self._finish_listeners:
            self.spawn(self._run_finish_listeners(finished))

    def resolve(self, game_id: int, result: FinishedTable | None) -> None:
        fut = self._ended.pop(game_id, None)
        if fut is not None and not fut.done():
            fut.set_result(result)

    async def _run_finish_listeners(self, finished: FinishedTable) -> None:
        for cb in list(self._finish_listeners):
            try:
                out = await cb(finished)
            except Exception as exc:  # one listener's failure never stops the others
                log.error("finish listener failed for game %s: %s", finished.game_id, type(exc).__name__)
                continue
            if out is not None:
                await self.delivery.post(finished.place, out)

"""Turn deadlines for human seats: stored, armed as timers, re-armed after a restart.

`Deadlines` owns its armed timers (one asyncio task per stored deadline, keyed by the
deadline's id, with the game and seat it belongs to). When one fires it is marked done
in the store and handed to the expiry callback the turn loop gave it.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.core.commands import MAX_DEADLINE_S
from bot.core.observe import ServiceObserver
from games.base import Seat
from storage.ports import DeadlinePort

log = logging.getLogger(__name__)

Expire = Callable[[int, Seat], Awaitable[None]]
"""(game id, seat) -> handles a turn that ran out of time."""


@dataclass(frozen=True, slots=True)
class _Armed:
    game_id: int
    seat: Seat
    task: asyncio.Task[None]


class Deadlines:
    def __init__(self, store: DeadlinePort, clock: Callable[[], float], observer: ServiceObserver) -> None:
        self.store = store
        self.clock = clock
        self.observer = observer
        self.on_expire: Expire | None = None
        self._armed: dict[int, _Armed] = {}

    @property
    def open(self) -> int:
        return len(self._armed)

    def has(self, game_id: int, seat: Seat) -> bool:
        return any(a.game_id == game_id and a.seat == seat for a in self._armed.values())

    def arm(self, deadline_id: int, game_id: int, seat: Seat, due: datetime) -> None:
        if deadline_id in self._armed:
            return
        if due.tzinfo is None:
            due = due.replace(tzinfo=UTC)
        delay = max(0.0, due.timestamp() - self.clock())

        async def fire() -> None:
            await asyncio.sleep(delay)
            self._armed.pop(deadline_id, None)
            self.observer.deadlines(self.open)
            if await self.store.finish_deadline(deadline_id) and self.on_expire is not None:
                await self.on_expire(game_id, seat)

        task = asyncio.get_running_loop().create_task(fire())
        task.add_done_callback(_log_failure)
        self._armed[deadline_id] = _Armed(game_id, seat, task)
        self.observer.deadlines(self.open)

    async def schedule(self, game_id: int, seat: Seat, seconds: float) -> None:
        """Store and arm a deadline ``seconds`` from now for a seat, unless one is armed already."""
        if not math.isfinite(seconds) or seconds <= 0 or self.has(game_id, seat):
            return
        # Lobbies written before options were checked may hold any number: a week at most.
        seconds = min(seconds, MAX_DEADLINE_S)
        due = datetime.fromtimestamp(self.clock() + seconds, UTC)
        self.arm(await self.store.set_deadline(game_id, seat, due), game_id, seat, due)

    async def clear(self, game_id: int, seat: Seat | None = None) -> None:
        """Cancel stored and armed deadlines of a game (or one seat of it)."""
        await self.store.clear_deadlines(game_id, seat)
        self.cancel(game_id, seat)

    def cancel(self, game_id: int, seat: Seat | None = None) -> None:
        for did, armed in list(self._armed.items()):
            if armed.game_id == game_id and (seat is None or armed.seat == seat) \
                    and armed.task is not asyncio.current_task():
                armed.task.cancel()
                del self._armed[did]
        self.observer.deadlines(self.open)

    async def stop(self) -> None:
        tasks = [a.task for a in self._armed.values()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._armed.clear()


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a turn deadline failed: %s", type(task.exception()).__name__)

"""Turn deadlines for human seats: stored, armed as timers, re-armed after a restart.

`Deadlines` owns its armed timers (one asyncio task per stored deadline, keyed by the
deadline's id, with the game and seat it belongs to). When one fires it is marked done
in the store and handed to the expiry callback the turn loop gave it.

A database error never loses a deadline: a timer that meets one waits and tries again
(doubling pauses up to a few seconds) until the write goes through, or until the timer is
cancelled (the seat acted, the game ended, or another process took it over and arms the
deadline from the database); and every supervisor round re-arms the pending deadlines of the games this process
drives (``rearm``), so a timer that never got armed is armed then.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from bot.core.commands import MAX_DEADLINE_S
from bot.core.observe import ServiceObserver
from games.base import Seat
from storage.ports import DeadlinePort

log = logging.getLogger(__name__)

RETRY_S = 0.5  # first pause after a failed deadline write or expiry; doubles up to RETRY_MAX_S
RETRY_MAX_S = 5.0  # a deadline is due again soon after the database is back, not half a minute later

T = TypeVar("T")

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

        tries = 0

        async def mark_done() -> bool:
            # A try after a failed one reads back: the failed one may have committed (its answer lost).
            nonlocal tries
            tries += 1
            return await self.store.finish_deadline(deadline_id, game_id, again=tries > 1)

        async def fire() -> None:
            try:
                await asyncio.sleep(delay)
                if await self._retrying(deadline_id, "mark a deadline done", mark_done) \
                        and self.on_expire is not None:
                    expire = self.on_expire
                    await self._retrying(deadline_id, "play a deadline's move", lambda: expire(game_id, seat))
            finally:
                armed = self._armed.get(deadline_id)
                if armed is not None and armed.task is asyncio.current_task():
                    del self._armed[deadline_id]
                self.observer.deadlines(self.open)

        task = asyncio.get_running_loop().create_task(fire())
        task.add_done_callback(_log_failure)
        self._armed[deadline_id] = _Armed(game_id, seat, task)
        self.observer.deadlines(self.open)

    async def _retrying(self, deadline_id: int, what: str, step: Callable[[], Awaitable[T]]) -> T | None:
        """Run one step of a firing deadline until it goes through. NotOwner (this process's hold
        lapsed while the database was away, or was lost) is tried again too, for as long as the
        timer is still this process's: losing the table cancels it (its new holder arms the
        deadline from the database). None when it was given up."""
        pause = RETRY_S
        while True:
            try:
                return await step()
            except Exception as exc:  # the database is away: the deadline waits for it, never dies
                armed = self._armed.get(deadline_id)
                if armed is None or armed.task is not asyncio.current_task():
                    return None
                log.warning("could not %s (%s); trying again in %.1f s", what, type(exc).__name__, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MAX_S)

    async def rearm(self, game_ids: list[int]) -> int:
        """Arm the pending deadlines of these games (the ones this process drives) that have no
        timer; returns how many were armed."""
        armed = 0
        for d in await self.store.pending_for(game_ids):
            if d.id is not None and d.id not in self._armed:
                self.arm(d.id, d.game_id, d.seat, d.due_at)
                armed += 1
        return armed

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
            if armed.game_id == game_id and (seat is None or armed.seat == seat):
                if armed.task is not asyncio.current_task():  # a firing deadline finishes its own move
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

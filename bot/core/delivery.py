"""Delivery: posting, direct messages and fan-out of events by audience.

Every send goes through here, and no send failure ever reaches the caller: whatever a
platform raises (its own `DeliveryFailed`, an OSError, a timeout, a TypeError from a
malformed response) is counted, logged by type only (exception text may quote the
message, which may hold a secret) and treated as not delivered. Fan-out goes on past a
failed recipient, so one closed DM never stops the next player's prompt.

A table's messages are sent only while this process may drive it (``live``): where several
processes share the database, a process whose hold on a game ran out (it was paused past its
lease) sends nothing more for it, before the database tells it so; the new holder speaks. The
check is made here and again by the adapter right before its request leaves
(``bot.core.platform.send_fence``), so a pause between the two sends nothing either.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Sequence

from bot.core import render
from bot.core.messages import MessageRef, Outgoing, Place, UserRef
from bot.core.observe import ServiceObserver
from bot.core.platform import Platform, SendFenced, check_send, send_fence
from bot.core.tables import SeatInfo, Table
from games.base import Event, Seat

log = logging.getLogger(__name__)


class Delivery:
    def __init__(self, observer: ServiceObserver) -> None:
        self.platforms: dict[str, Platform] = {}
        self.observer = observer
        self.live: Callable[[int], bool] = _always  # may this process still send for this game?

    @contextlib.contextmanager
    def fenced(self, game_id: int) -> Iterator[None]:
        """Sends inside the block are made only while this process may send for the game; one
        that may not raises `SendFenced` (counted as withheld) and is not made."""
        with send_fence(lambda: self.live(game_id)):
            yield

    def _check(self) -> None:
        try:
            check_send()
        except SendFenced:
            self.observer.sends_withheld(1)
            raise

    def attach(self, platform: Platform) -> None:
        self.platforms[platform.name] = platform

    def text_replies(self, platform: str) -> bool:
        p = self.platforms.get(platform)
        return p is not None and p.text_replies

    def _failed(self, platform: str, what: str, exc: BaseException) -> None:
        self.observer.delivery_failed(platform)
        log.warning("%s on %s failed: %s", what, platform, type(exc).__name__)

    async def post(self, place: Place, m: Outgoing) -> MessageRef | None:
        platform = self.platforms.get(place.platform)
        if platform is None:
            return None
        self._check()
        try:
            return await platform.post(place, m)
        except SendFenced:  # the adapter's own last check, right before its request
            self.observer.sends_withheld(1)
            raise
        except Exception as exc:  # any failure of a send is a failed delivery, never a stopped game
            self._failed(place.platform, "post", exc)
            return None

    async def dm(self, user: UserRef, m: Outgoing) -> bool:
        platform = self.platforms.get(user.platform)
        if platform is None:
            return False
        self._check()
        try:
            await platform.dm(user, m)
            return True
        except SendFenced:  # see post()
            self.observer.sends_withheld(1)
            raise
        except Exception as exc:  # see post()
            self._failed(user.platform, "direct message", exc)
            return False

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        platform = self.platforms.get(ref.platform)
        if platform is None:
            return
        try:
            await platform.edit(ref, m)
        except Exception as exc:  # see post()
            self._failed(ref.platform, "edit", exc)

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        platform = self.platforms.get(place.platform)
        if platform is None:
            return place
        try:
            return await platform.open_thread(place, title, anchor)
        except Exception as exc:  # no thread: the game is played in the channel
            self._failed(place.platform, "open thread", exc)
            return place

    async def public(self, table: Table, m: Outgoing, *, waiting: bool = False) -> None:
        """Post to the table's place; ``waiting`` notes are skipped where the platform keeps quiet."""
        with contextlib.suppress(SendFenced):
            await self.fenced_public(table, m, waiting=waiting)

    async def private(self, table: Table, info: SeatInfo, m: Outgoing) -> bool:
        """A private message to a human seat; True when delivered or the seat was pointed at the
        "Show my secret" button in the channel (its DMs are closed)."""
        try:
            return await self.fenced_private(table, info, m)
        except SendFenced:
            return False

    async def fenced_public(self, table: Table, m: Outgoing, *, waiting: bool = False) -> None:
        """`public`, raising `SendFenced` when the message was withheld (this process may no
        longer send for the table), so a caller can leave it for the table's next holder."""
        if table.quiet:
            return
        with self.fenced(table.game_id):
            self._check()
            platform = self.platforms.get(table.platform)
            if waiting and (platform is None or platform.quiet_waiting):
                return
            await self.post(table.place, m)

    async def fenced_private(self, table: Table, info: SeatInfo, m: Outgoing) -> bool:
        """`private`, raising `SendFenced` when the message was withheld."""
        if info.user is None:
            return False
        with self.fenced(table.game_id):
            self._check()
            if info.seat not in table.dm_failed:
                if await self.dm(info.user, m):
                    return True
                table.dm_failed.add(info.seat)
            await self.fenced_public(table, render.cant_dm_notice(table, info.name))
            return not table.quiet

    async def fan_out(self, table: Table, events: Sequence[Event]) -> set[Seat]:
        """Events in the engine's order, a run at a time: the private events before a public run go to
        their seats first (so a private confirmation never arrives after a public result), then that run.
        A private event that follows public ones waits for them (turn 3's secret code comes after turn
        2's result). Returns the human seats reached privately."""
        reached: set[Seat] = set()
        for private, public in runs(events):
            for info in table.seats:
                if info.is_ai:
                    continue
                mine = [e for e in private if e.audience.includes(info.seat)]
                if mine and await self.private(table, info, render.events_message(table, mine)):
                    reached.add(info.seat)
            if public:
                await self.public(table, render.events_message(table, public))
        return reached


def runs(events: Sequence[Event]) -> list[tuple[list[Event], list[Event]]]:
    """The events cut into (private, public) runs, in order: each run's private events, then its public ones."""
    runs: list[tuple[list[Event], list[Event]]] = []
    for e in events:
        if not runs or (not e.audience.is_public and runs[-1][1]):
            runs.append(([], []))
        runs[-1][1 if e.audience.is_public else 0].append(e)
    return runs


def _always(_game_id: int) -> bool:
    return True

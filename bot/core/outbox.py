"""Sending a turn's messages through the outbox (``storage.outbox``).

A turn's messages are planned before it is logged (each with an id), logged in the turn's own
transaction, and sent from memory right after the commit; each sent one is marked in the
database a moment later, in batches. What a process could not send (it was paused past its
hold, or died) stays unsent in the log, and the next holder sends it when it takes the
table over; each supervisor round also sends what its own turns left unsent. So every
message of a logged turn is sent at least once, and no message of a turn that was never
logged is ever sent.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from bot.core import render
from bot.core.delivery import Delivery, runs
from bot.core.messages import Outgoing
from bot.core.platform import SendFenced
from bot.core.tables import Table
from games.base import Event, Seat
from storage.ports import OutboxPort
from storage.records import OutboxRecord

log = logging.getLogger(__name__)

MARK_EVERY_S = 0.2  # sent marks are written in batches this often


@dataclass(frozen=True, slots=True)
class Planned:
    """One message of a turn: to the table's channel (``seat`` None) or to one seat privately."""

    id: str
    seat: Seat | None
    message: Outgoing


def body_of(m: Outgoing) -> dict[str, Any]:
    # A turn's messages are text: controls (buttons, forms) belong to prompts, sent apart.
    assert not m.has_controls, "a message with controls does not go through the outbox"
    # Only what differs from ``message_of``'s defaults: every turn writes these bodies, in the
    # one writer's transaction.
    body: dict[str, Any] = {"text": m.text}
    if m.title is not None:
        body["title"] = m.title
    if m.user_text:
        body["user_text"] = True
    return body


def message_of(key: str, body: Mapping[str, Any], since: datetime | None = None) -> Outgoing:
    """The message of an outbox row; ``since`` (the row's creation) when it may have been sent already."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return Outgoing(str(body.get("text", "")), title=body.get("title"), user_text=bool(body.get("user_text")),
                    key=key, maybe_sent_since=None if since is None else since.timestamp())


def _planned(seat: Seat | None, m: Outgoing) -> Planned:
    key = uuid.uuid4().hex
    return Planned(key, seat, replace(m, key=key))


class Outbox:
    def __init__(self, store: OutboxPort, delivery: Delivery) -> None:
        self.store = store
        self.delivery = delivery
        self._inflight: set[str] = set()  # planned, not sent yet by the turn that made them
        self._marking: set[str] = set()  # sent, not marked in the database yet
        self._marker: asyncio.Task[None] | None = None

    def plan(self, table: Table, events: Sequence[Event], notes: Sequence[Outgoing] = ()) -> list[Planned]:
        """A turn's messages, in the order they are sent: notes to the channel, then the events in the
        engine's order a run at a time (``bot.core.delivery.runs``): each human seat's private events of a
        run before its public ones, so a private confirmation never trails the public result, and a private
        event that follows public ones waits for them (the next card's word comes after this card's result)."""
        out = [_planned(None, n) for n in notes]
        for private, public in runs(events):
            for info in table.seats:
                if info.is_ai:
                    continue
                mine = [e for e in private if e.audience.includes(info.seat)]
                if mine:
                    out.append(_planned(info.seat, render.events_message(table, mine)))
            if public:
                out.append(_planned(None, render.events_message(table, public)))
        self._inflight.update(p.id for p in out)
        return out

    @staticmethod
    def records(planned: Sequence[Planned]) -> list[OutboxRecord]:
        return [OutboxRecord(p.id, p.seat, body_of(p.message)) for p in planned]

    def drop(self, planned: Sequence[Planned]) -> None:
        """The turn was not logged: its messages never exist."""
        self._inflight.difference_update(p.id for p in planned)

    async def send(self, table: Table, planned: Sequence[Planned]) -> None:
        """Send messages of a logged turn and mark them sent; stops at once when this process may
        no longer send for the table (they stay unsent, for the table's next holder)."""
        for n, p in enumerate(planned):
            try:
                if p.seat is None:
                    await self.delivery.fenced_public(table, p.message)
                elif 0 <= p.seat < len(table.seats):
                    await self.delivery.fenced_private(table, table.seats[p.seat], p.message)
            except SendFenced:  # checked again right before the platform's request: it stays unsent
                if len(planned) - n > 1:
                    self.delivery.observer.sends_withheld(len(planned) - n - 1)
                self.drop(planned[n:])
                return
            self._inflight.discard(p.id)
            self._mark(p.id)

    async def resend(self, tables: Sequence[Table]) -> int:
        """Send the unsent messages of these tables (a previous holder's, or this process's own that
        it could not send); returns how many were sent."""
        live = {t.game_id: t for t in tables if self.delivery.live(t.game_id)}
        rows = await self.store.unsent(live)
        sent = 0
        for gid, table in live.items():
            if table.lock.locked():
                continue  # a turn is sending its own messages: the next round looks again
            async with table.lock:
                todo = [Planned(r.id, r.seat, message_of(r.id, r.body, r.created_at)) for r in rows
                        if r.game_id == gid and r.id not in self._inflight and r.id not in self._marking]
                if todo:
                    self._inflight.update(p.id for p in todo)
                    await self.send(table, todo)
                    sent += len(todo)
        return sent

    def _mark(self, key: str) -> None:
        self._marking.add(key)
        if self._marker is None or self._marker.done():
            self._marker = asyncio.get_running_loop().create_task(self._mark_soon())

    async def _mark_soon(self) -> None:
        while self._marking:
            await asyncio.sleep(MARK_EVERY_S)
            await self.flush()

    async def flush(self) -> None:
        """Write the sent marks gathered so far (a failure keeps them for the next try)."""
        keys = set(self._marking)
        if not keys:
            return
        try:
            await self.store.mark_sent(keys)
        except Exception as exc:  # the database is away: a later batch marks them
            log.warning("marking %s message(s) sent failed: %s", len(keys), type(exc).__name__)
            await asyncio.sleep(1.0)
            return
        self._marking -= keys

    async def stop(self) -> None:
        """Write the last sent marks (best effort: an unmarked message may be sent again)."""
        if self._marker is not None:
            self._marker.cancel()
            await asyncio.gather(self._marker, return_exceptions=True)
            self._marker = None
        try:
            await asyncio.wait_for(self.flush(), timeout=5)
        except Exception as exc:  # stopping: the next holder sends what stays unmarked
            log.warning("the last sent marks were not written: %s", type(exc).__name__)


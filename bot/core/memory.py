"""An in-memory Platform: records every message it is asked to send.

Used by the core's tests, the table benchmark and anything that runs tables with
no chat platform. Users listed in ``closed_dms`` behave like members whose direct
messages are closed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from bot.core.messages import DeliveryFailed, MessageRef, Outgoing, Place, UserRef


@dataclass(frozen=True)
class Sent:
    kind: str  # "post" | "dm" | "edit"
    to: str  # place key, user key, or message id
    message: Outgoing
    ref: MessageRef


@dataclass
class MemoryPlatform:
    name: str = "memory"
    closed_dms: set[str] = field(default_factory=set)  # user keys
    sent: list[Sent] = field(default_factory=list)
    quiet_waiting: bool = False
    text_replies: bool = True
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def _ref(self, channel: str) -> MessageRef:
        return MessageRef(self.name, channel, str(next(self._ids)))

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        ref = self._ref(place.key)
        self.sent.append(Sent("post", place.key, m, ref))
        return ref

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        if user.key in self.closed_dms:
            raise DeliveryFailed(f"{user.key} does not accept direct messages")
        ref = self._ref(f"dm:{user.key}")
        self.sent.append(Sent("dm", user.key, m, ref))
        return ref

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        self.sent.append(Sent("edit", ref.message_id, m, ref))

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        return Place(place.platform, place.channel, f"t{anchor.message_id if anchor else next(self._ids)}")

    # -- inspection helpers for tests
    def dms_to(self, user_key: str) -> list[Outgoing]:
        return [s.message for s in self.sent if s.kind == "dm" and s.to == user_key]

    def public(self) -> list[Sent]:
        return [s for s in self.sent if s.kind in ("post", "edit")]

"""The seam between the TableService and a chat platform."""

from __future__ import annotations

from typing import Protocol

from bot.core.messages import MessageRef, Outgoing, Place, UserRef


class Platform(Protocol):
    """One per chat platform. Adapters render `Outgoing` natively; they hold no game state.

    ``dm`` raises `DeliveryFailed` when the member cannot be reached privately
    (closed DMs); the service then offers the "show my secret" path in the table's place.
    Any other failure should be logged by the adapter and raised as DeliveryFailed too:
    one failed send never stops a game.
    """

    name: str
    quiet_waiting: bool  # True: "Waiting for X." notes are not posted (the console shows whose turn it is)
    text_replies: bool  # True: a free-text direct message answers an open form ("Or reply here" is offered)

    async def post(self, place: Place, m: Outgoing) -> MessageRef: ...

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef: ...

    async def edit(self, ref: MessageRef, m: Outgoing) -> None: ...

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        """A thread for a game under ``anchor`` (the lobby card); platforms without threads return ``place``."""
        ...

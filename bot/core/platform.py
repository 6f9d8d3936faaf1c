"""The seam between the TableService and a chat platform.

A send for a table carries a fence (``send_fence``): where several processes share the
database, a process whose hold on the game ran out must not send for it. The service checks
the fence before it hands a message to the platform, and an adapter checks it again right
before its request leaves (``check_send``, called from its HTTP client's hook): a process
paused between the two (a long GC pause, a frozen VM) wakes with its hold run out, and the
request is not made. A request already written to the network cannot be taken back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
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


class SendFenced(Exception):
    """The send was not made: this process may no longer send for the table."""


_FENCE: ContextVar[Callable[[], bool] | None] = ContextVar("hushtable_send_fence", default=None)


@contextlib.contextmanager
def send_fence(live: Callable[[], bool]) -> Iterator[None]:
    """Sends made inside the block (in this task) happen only while ``live()`` is true."""
    token = _FENCE.set(live)
    try:
        yield
    finally:
        _FENCE.reset(token)


def check_send() -> None:
    """Raise `SendFenced` when the send being made must not leave (its fence is down). Adapters
    call it as late as their client allows, right before a request is written."""
    live = _FENCE.get()
    if live is not None and not live():
        raise SendFenced("this process no longer holds the table")

"""What every Slack listener shares: the service, settings, and a tracker of work done after ack.

Slack wants an answer within 3 seconds, so each listener acks first and then
calls the TableService. `Inflight` counts that after-ack work, so a clean
shutdown (and a test) can wait until every accepted request has been handled,
and keeps the errors it raised so they are never silently lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import Command, Reply

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger("hushtable.slack")

PLATFORM = "slack"


class Service(Protocol):
    """The part of TableService the Slack listeners call."""

    async def handle(self, cmd: Command) -> Reply: ...

    def rules(self, game: str, variant: str | None = None) -> str: ...

    def agent_choices(self) -> list[str]: ...

    async def export(self, cmd: Command, fmt: str, game: str | None = None, since: str | None = None) -> tuple[str, bytes] | Reply: ...


@dataclass
class Inflight:
    """Counts listener work still running after its ack."""

    running: int = 0
    errors: list[BaseException] = field(default_factory=list)
    _idle: asyncio.Event = field(default_factory=asyncio.Event)

    def __post_init__(self) -> None:
        self._idle.set()

    @contextlib.asynccontextmanager
    async def track(self) -> AsyncIterator[None]:
        self.running += 1
        self._idle.clear()
        try:
            yield
        except Exception as e:  # noqa: BLE001 - one bad request must not stop the bot
            log.exception("slack listener failed")
            self.errors.append(e)
        finally:
            self.running -= 1
            if self.running == 0:
                self._idle.set()

    async def wait(self) -> None:
        await self._idle.wait()


@dataclass
class SlackContext:
    service: Service
    settings: Settings
    inflight: Inflight = field(default_factory=Inflight)

    async def is_admin(self, client: AsyncWebClient, user_id: str) -> bool:
        """Workspace admins and owners (users.info), or a user listed in settings.admins."""
        if f"{PLATFORM}:{user_id}" in self.settings.admins or user_id in self.settings.admins:
            return True
        try:
            info = await client.users_info(user=user_id)
        except SlackApiError:
            log.warning("users.info failed for %s; treating as not an admin", user_id)
            return False
        user: dict[str, Any] = info.get("user") or {}
        return bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))


Ack = Callable[..., Awaitable[Any]]

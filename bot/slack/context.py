"""What every Slack listener shares: the service, settings, a tracker of work done after ack,
the origin of a request (user, place, tenant, admin verdict) and the one mapping of a failed
Web API call to `DeliveryFailed`.

Slack wants an answer within 3 seconds, so each listener acks first and then
calls the TableService. `Inflight` counts that after-ack work, so a clean
shutdown (and a test) can wait until every accepted request has been handled,
and keeps the errors it raised so they are never silently lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import intake
from bot.core.messages import DeliveryFailed, Place, UserRef
from bot.core.platform import SendFenced
from bot.core.ports import PrivacyPort, ServicePort, SneakPort
from bot.ops.masking import member_tag

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger("hushtable.slack")

PLATFORM = "slack"


ADMIN_CACHE_S = 300.0  # users.info verdicts are reused this long (Slack rate-limits the method)
REPLAY_WINDOW_S = 300.0  # Bolt refuses signed requests older than 5 minutes; replays inside are ours to catch


@contextlib.contextmanager
def delivery(what: str) -> Iterator[None]:
    """Map any failure of a Web API call inside the block to `DeliveryFailed`: Slack's own
    errors, OSError and timeouts, and malformed answers (a bare ``{"ok": true}`` without the
    fields we read raises KeyError or TypeError). Logged once, without the message text."""
    try:
        yield
    except (DeliveryFailed, SendFenced):
        raise
    except SlackApiError as e:
        error = e.response.get("error") if e.response is not None else None
        log.warning("%s failed: %s", what, error)
        raise DeliveryFailed(f"{what}: {error}") from e
    except Exception as e:  # noqa: BLE001 - every failure of a send is a failed delivery
        log.warning("%s failed: %s", what, type(e).__name__)
        raise DeliveryFailed(f"{what}: {type(e).__name__}") from e


def team_of(body: Mapping[str, Any]) -> str:
    """The workspace a request comes from (commands and events: ``team_id``; interactions: ``team.id``)."""
    team = body.get("team_id") or (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id")
    return str(team or "")


def tenant_of(body: Mapping[str, Any]) -> str:
    return f"{PLATFORM}:{team_of(body)}"


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
    """Shared by the listeners. ``admin_users``: Slack user ids (or ``slack:<id>`` keys) the
    operator names as admins, besides the workspace's own admins and owners."""

    service: ServicePort
    settings: Settings
    admin_users: Collection[str] = ()
    sneak: SneakPort | None = None  # the SNEAK service, when it runs
    privacy: PrivacyPort | None = None  # the members' data commands (bot/core/privacy.py)
    web: Any = None  # bot.web.wiring.WebLinks while the web view is served: `/hushtable web` answers with a link
    inflight: Inflight = field(default_factory=Inflight)
    _admin_cache: dict[tuple[str, str], tuple[float, bool]] = field(default_factory=dict)
    _exports: dict[str, float] = field(default_factory=dict)

    def default_agent(self) -> str:
        return intake.default_agent(self.service.agent_choices(), self.settings.default_agent)

    async def is_admin(self, client: AsyncWebClient, user_id: str, team: str = "") -> bool:
        """Admin of this workspace: its admins and owners (users.info), or a configured user."""
        if user_id in self.admin_users or f"{PLATFORM}:{user_id}" in self.admin_users:
            return True
        now = time.monotonic()
        cached = self._admin_cache.get((team, user_id))
        if cached is not None and now - cached[0] < ADMIN_CACHE_S:
            return cached[1]
        try:
            with delivery(f"users.info for {member_tag(user_id)}"):
                info = await client.users_info(user=user_id)
                user: dict[str, Any] = info.get("user") or {}
        except DeliveryFailed:
            return False  # not cached: the next command asks again
        # A member of another workspace (Slack Connect) is never this workspace's admin.
        verdict = bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))
        if team and user.get("team_id") not in (None, team):
            verdict = False
        self._admin_cache[(team, user_id)] = (now, verdict)
        return verdict

    async def origin(self, client: AsyncWebClient, body: Mapping[str, Any], user: UserRef, place: Place,
                     inbound_id: str | None) -> intake.Origin:
        team = team_of(body)
        return intake.Origin(user, place, f"{PLATFORM}:{team}", await self.is_admin(client, user.user_id, team),
                             inbound_id)

    def first_export(self, key: str) -> bool:
        """True once per export request within the replay window (a replayed signed request is
        the same request: the file is not uploaded twice)."""
        now = time.monotonic()
        for k, at in list(self._exports.items()):
            if now - at > REPLAY_WINDOW_S:
                del self._exports[k]
        if key in self._exports:
            return False
        self._exports[key] = now
        return True


Ack = Callable[..., Awaitable[Any]]

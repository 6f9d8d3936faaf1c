"""The Slack adapter: `SlackPlatform` renders core messages through the Web API, and
`run_slack` serves the Bolt app over Socket Mode (default) or HTTP.

The adapter holds no game state. The only thing it remembers is which DM
channel belongs to which member (conversations.open is idempotent, the cache
only saves a call). Every failure of a send becomes `DeliveryFailed` through
`context.delivery`, whatever raised it.

A send for a table is made only while its fence holds (``bot.core.platform.check_send``),
checked right before each ``chat.postMessage`` call; a fenced send raises `SendFenced`.

``chat.postMessage`` takes no idempotency key, so a keyed message (``Outgoing.key``: a turn's
outbox row, a prompt) carries its key in its message metadata, and a send that may be a repeat
looks for it first: a message that may have been sent already (``Outgoing.maybe_sent_since``, an
outbox row sent again by a takeover) and the one retry after a post whose outcome is unknown (a
timeout, a dropped connection, a 5xx, Slack's own ``internal_error``) read the place's history
since then (``conversations.history``, or ``conversations.replies`` in a thread) and, when the
key is there, take that message instead of posting. A first send stays one call. A history that
cannot be read (a missing ``*:history`` scope, a rate limit, an outage) sends anyway: a message is
never lost for a read, it may show twice.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.typedefs import Handler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from bot.core.messages import DeliveryFailed, MessageRef, Outgoing, Place, UserRef
from bot.core.platform import Platform, SendFenced, check_send
from bot.core.ports import PrivacyPort, ServicePort, SneakPort
from bot.ops.masking import member_tag
from bot.settings import Settings
from bot.slack import actions, commands, events, privacy, sneak, tournaments, views
from bot.slack.blocks import render
from bot.slack.context import PLATFORM, SlackContext, delivery
from bot.startup import SLACK_HTTP_HOST, NetworkDown, StartupError, network_reason
from bot.tournaments.port import TournamentPort
from models.worker.httpguard import GuardedServer, guarded

log = logging.getLogger("hushtable.slack")

SLACK_MAX_CONNECTIONS = 256  # Slack sends a few requests at a time; the rest of a burst waits for a slot
METADATA_EVENT = "hushtable_message"  # the metadata event type that carries a keyed message's key
CLOCK_MARGIN_S = 120.0  # a history read starts this much before the time a copy could be made (clock skew)
HISTORY_PAGE = 200  # messages per history page (Slack's advice for conversations.history)
HISTORY_PAGES = 5  # pages read before giving up and sending (a message is never lost for a read)
RETRY_PAUSE_S = 1.0  # after a post with no answer, the moment Slack may still need to make it
# Reading a conversation's history, by its kind: public channels, private ones, DMs, group DMs.
HISTORY_SCOPES = ("channels:history", "groups:history", "im:history", "mpim:history")
# Answers to a post that may have been made all the same (Slack: "it's possible some aspect of the
# operation succeeded before the error was raised").
_MAYBE_MADE = frozenset({"internal_error", "fatal_error", "service_unavailable"})


def unknown_outcome(exc: BaseException) -> bool:
    """Whether a failed ``chat.postMessage`` may have been made (the request reached Slack and its
    answer was lost, or Slack failed half-way), as opposed to refused or never sent."""
    if isinstance(exc, aiohttp.ClientConnectorError):
        return False  # no connection was made: nothing was sent
    if isinstance(exc, (TimeoutError, aiohttp.ClientError)):
        return True
    if isinstance(exc, SlackApiError):
        answer = exc.response
        status = int(getattr(answer, "status_code", None) or getattr(answer, "status", None) or 200)
        data = getattr(answer, "data", None)
        error = str(data.get("error", "")) if isinstance(data, dict) else ""
        return status >= 500 or error in _MAYBE_MADE
    return False


def missing_history_scopes(headers: Mapping[str, Any]) -> list[str]:
    """The history scopes a bot token lacks, from the scopes Slack lists with each answer
    (``x-oauth-scopes``); none when the answer does not list them."""
    listed = next((str(v) for k, v in headers.items() if str(k).lower() == "x-oauth-scopes"), None)
    if listed is None:
        return []
    granted = {scope.strip() for scope in listed.split(",")}
    return [scope for scope in HISTORY_SCOPES if scope not in granted]


def _why(exc: BaseException) -> str:
    """A failed read in a few words: Slack's error code when it gave one, else the exception's type."""
    data = getattr(getattr(exc, "response", None), "data", None)
    error = data.get("error") if isinstance(data, dict) else None
    return str(error)[:60] if error else type(exc).__name__


def _ref(resp: Any) -> MessageRef:
    return MessageRef(PLATFORM, str(resp["channel"]), str(resp["ts"]))


class SlackPlatform(Platform):
    """`Platform` over the Slack Web API. Any send failure becomes `DeliveryFailed`."""

    name = PLATFORM
    quiet_waiting, text_replies = False, True  # bot.core.platform.Platform

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        # Keyed posts go through a twin of the client without the SDK's retry on a dropped
        # connection: a post whose answer was lost may have been made, and is tried again only
        # after the history says it was not.
        self._posts = AsyncWebClient(token=client.token, base_url=client.base_url, timeout=client.timeout,
                                     ssl=client.ssl, proxy=client.proxy, session=client.session,
                                     trust_env_in_session=client.trust_env_in_session,
                                     headers=dict(client.headers), team_id=client.default_params.get("team_id"),
                                     logger=client.logger, retry_handlers=[])
        self._dm_channels: dict[str, str] = {}
        self._bot_id: str | None = None  # this app's bot id (auth.test), known once asked

    async def _own_bot_id(self) -> str | None:
        """This app's bot id: only its own messages are copies of a keyed send (another app can post any
        metadata, and the keys are predictable); None when auth.test cannot say, and then nothing is a copy."""
        if self._bot_id is None:
            try:
                bot_id = (await self.client.auth_test()).get("bot_id")
            except Exception as exc:  # noqa: BLE001 - a message that may be there already is sent again
                log.warning("auth.test failed (%s): a message that may be on Slack already is sent again", _why(exc))
                return None
            self._bot_id = str(bot_id) if bot_id else None
        return self._bot_id

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        with delivery(f"chat.postMessage to {place.key}"):
            return await self._send(place.channel, place.thread, m)

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        # Closed DMs, deactivated members, missing scopes: the service falls back to
        # the "show my secret" button in the thread.
        with delivery(f"DM to {member_tag(user.key)}"):
            channel = self._dm_channels.get(user.user_id)
            if channel is None:
                opened = await self.client.conversations_open(users=user.user_id)
                channel = str(opened["channel"]["id"])
                self._dm_channels[user.user_id] = channel
            return await self._send(channel, None, m)

    async def _send(self, channel: str, thread: str | None, m: Outgoing) -> MessageRef:
        kwargs: dict[str, Any] = {"channel": channel, "unfurl_links": False, **render(m).kwargs()}
        if thread:
            kwargs["thread_ts"] = thread
        if m.key is None:
            check_send()
            return _ref(await self.client.chat_postMessage(**kwargs))
        kwargs["metadata"] = {"event_type": METADATA_EVENT, "event_payload": {"key": m.key}}
        if m.maybe_sent_since is not None:
            found = await self.find(channel, thread, m.key, m.maybe_sent_since)
            if found is not None:
                log.info("a message already on Slack (%s) was not sent again", channel)
                return found
        started = time.time()
        try:
            check_send()
            return _ref(await self._posts.chat_postMessage(**kwargs))
        except SendFenced:
            raise
        except Exception as exc:  # noqa: BLE001 - sorted below: only an unknown outcome is tried again
            if not unknown_outcome(exc):
                raise
            log.info("chat.postMessage to %s: no answer (%s); looking before sending again", channel, type(exc).__name__)
        await asyncio.sleep(RETRY_PAUSE_S)
        found = await self.find(channel, thread, m.key, started)
        if found is not None:
            return found
        check_send()
        return _ref(await self._posts.chat_postMessage(**kwargs))

    async def find(self, channel: str, thread: str | None, key: str, since: float) -> MessageRef | None:
        """The message carrying ``key`` in its metadata, posted by this app in this place since ``since`` (Unix
        seconds, less a margin for clocks); None when there is none or the history cannot be read."""
        me = await self._own_bot_id()
        if me is None:
            return None
        args: dict[str, Any] = {"channel": channel, "oldest": f"{max(since - CLOCK_MARGIN_S, 0.0):.6f}",
                                "include_all_metadata": True, "limit": HISTORY_PAGE}
        read: Callable[..., Awaitable[AsyncSlackResponse]] = self.client.conversations_history
        if thread:
            args["ts"], read = thread, self.client.conversations_replies
        try:
            for _ in range(HISTORY_PAGES):
                resp = await read(**args)
                for msg in resp.get("messages") or ():
                    meta = msg.get("metadata") if isinstance(msg, dict) else None
                    if (isinstance(meta, dict) and msg.get("bot_id") == me and meta.get("event_type") == METADATA_EVENT
                            and isinstance(meta.get("event_payload"), dict) and meta["event_payload"].get("key") == key):
                        return MessageRef(PLATFORM, channel, str(msg["ts"]))
                cursor = (resp.get("response_metadata") or {}).get("next_cursor")
                if not resp.get("has_more") or not cursor:
                    return None
                args["cursor"] = cursor
            log.warning("the history of %s holds more than %s messages since a resent one: it is sent again",
                        channel, HISTORY_PAGES * HISTORY_PAGE)
        except Exception as exc:  # noqa: BLE001 - a read that fails never loses the message: it is sent
            log.warning("reading the history of %s failed (%s): a message that may be there already is sent again",
                        channel, _why(exc))
        return None

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        with delivery(f"chat.update of {ref.channel}/{ref.message_id}"):
            await self.client.chat_update(channel=ref.channel, ts=ref.message_id, **render(m).kwargs())

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        # A Slack thread is any message's ts used as thread_ts: the lobby card is the anchor.
        if place.thread:
            return place
        if anchor is None:
            try:
                anchor = await self.post(place, Outgoing(title, title=None))
            except DeliveryFailed:
                return place  # no anchor to thread under: the game runs in the channel itself
        return Place(PLATFORM, anchor.channel, anchor.message_id)


@dataclass(frozen=True, slots=True)
class SlackBot:
    """A wired Bolt app: its platform and the shared listener context."""

    app: AsyncApp
    platform: SlackPlatform
    context: SlackContext

    async def idle(self) -> None:
        """Wait until every acked request has been handled (and, when the service
        offers it, until its background work has settled). Used by tests and shutdown."""
        for _ in range(100):
            await self.context.inflight.wait()
            await self.context.service.wait_idle()
            await asyncio.sleep(0)
            if self.context.inflight.running == 0:
                return


# Slack's answers to a token it does not accept.
_REFUSALS = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                       "not_allowed_token_type", "invalid_token", "no_permission", "missing_scope"})
_BOT_TOKEN_HELP = "copy the Bot User OAuth Token (xoxb-...) from your app's OAuth & Permissions page"
_APP_TOKEN_HELP = "make an app-level token with connections:write under your app's Basic Information (xapp-...)"


async def _ask(what: str, setting: str, help_text: str, call: Any) -> AsyncSlackResponse:
    """One Web API call at start. Slack's own refusal (``ok: false`` with an error) is a mistake to fix;
    an answer that is not the Web API's JSON (a 5xx, a rate limit, an HTML outage page, a proxy's page)
    is an outage, retried by the caller."""
    try:
        resp = await call
    except SlackApiError as exc:
        answer = exc.response
        # The SDK hands over its own response or, for a body that is no JSON, aiohttp's.
        status = int(getattr(answer, "status_code", None) or getattr(answer, "status", None) or 200)
        data = getattr(answer, "data", None)
        error = str(data.get("error", "")) if isinstance(data, dict) else ""
        if status >= 500 or status == 429:
            raise NetworkDown(f"Slack answered HTTP {status}") from None
        if not error:
            raise NetworkDown(f"Slack answered HTTP {status} with something other than its Web API's JSON") from None
        if error in _REFUSALS:
            raise StartupError(f"{setting} was refused by Slack ({error}); {help_text}") from None
        raise StartupError(f"{setting}: Slack answered {error[:60]} to {what}; {help_text}") from None
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise NetworkDown(network_reason(exc)) from None
    except (AttributeError, TypeError, ValueError):  # the SDK choking on a body that is not JSON
        raise NetworkDown("Slack answered with something other than its Web API's JSON") from None
    assert isinstance(resp, AsyncSlackResponse)
    return resp


async def check_tokens(settings: Settings, *, timeout_s: int = 20) -> str:
    """Check the bot token with ``auth.test`` and, in Socket Mode, the app token with
    ``apps.connections.open``; returns the workspace's name. `StartupError` for a refused token,
    `NetworkDown` when Slack cannot be reached (the caller retries)."""
    client = AsyncWebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url, timeout=timeout_s)
    client.retry_handlers.clear()  # one try per attempt: the caller's backoff says when to try again
    answer = await _ask("auth.test", "SLACK_BOT_TOKEN", _BOT_TOKEN_HELP, client.auth_test())
    who = answer.data if isinstance(answer.data, dict) else {}
    missing = missing_history_scopes(answer.headers)
    if missing:
        log.warning("SLACK_BOT_TOKEN lacks %s: a message sent again (after a takeover, or a post whose answer "
                    "was lost) cannot be looked for in those conversations and may show twice; add the scopes "
                    "under OAuth & Permissions (deploy/slack-manifest.yaml has them) and reinstall the app",
                    ", ".join(missing))
    if settings.slack_mode == "socket" and settings.slack_app_token:
        app_client = AsyncWebClient(token=settings.slack_app_token, base_url=settings.slack_api_url, timeout=timeout_s)
        app_client.retry_handlers.clear()
        await _ask("apps.connections.open", "SLACK_APP_TOKEN", _APP_TOKEN_HELP,
                   app_client.apps_connections_open(app_token=settings.slack_app_token))
    return str(who.get("team") or who.get("team_id") or "?")


class _DropTokenSkipped(logging.Filter):
    """Bolt warns "token will be unused" whenever SLACK_BOT_TOKEN is in the environment and a client is
    given (ours carries the same token, and the API URL Bolt's own client would not)."""

    MESSAGE = warning_client_prioritized_and_token_skipped()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != self.MESSAGE


def _quiet_bolt_token_warning() -> None:
    bolt = logging.getLogger("slack_bolt.AsyncApp")
    if not any(isinstance(f, _DropTokenSkipped) for f in bolt.filters):
        bolt.addFilter(_DropTokenSkipped())


def make_client(settings: Settings) -> AsyncWebClient:
    return AsyncWebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url)


def build_app(service: ServicePort, settings: Settings, *, client: AsyncWebClient | None = None,
              http: bool | None = None, admin_users: Collection[str] = (),
              tournament_port: TournamentPort | None = None, sneak_port: SneakPort | None = None,
              privacy_port: PrivacyPort | None = None, web: Any = None) -> SlackBot:
    """The Bolt app with every listener registered. ``http`` (default: settings.slack_mode)
    turns on request signature checks, which Socket Mode does not use. ``admin_users``: Slack
    user ids the operator names as admins besides the workspace's admins and owners. ``sneak_port``: the
    SNEAK service (``/hushtable sneak`` and ``judge`` say it is off without one)."""
    http = settings.slack_mode == "http" if http is None else http
    if http and not settings.slack_signing_secret:
        raise ValueError("Slack HTTP mode needs SLACK_SIGNING_SECRET")
    client = client or make_client(settings)
    _quiet_bolt_token_warning()
    app = AsyncApp(
        client=client,
        signing_secret=settings.slack_signing_secret if http else None,
        request_verification_enabled=http,
        # Our listeners ack before any slow work; Bolt replies as soon as ack() runs.
        process_before_response=False,
        # No url_verification surprises in Socket Mode; kept on in HTTP mode for setup.
        ssl_check_enabled=http,
        url_verification_enabled=http,
    )
    ctx = SlackContext(service=service, settings=settings, admin_users=frozenset(admin_users), sneak=sneak_port,
                       privacy=privacy_port, web=web)
    if tournament_port is not None:  # subcommand listeners first
        tournaments.register(app, ctx, tournament_port)
    for module in (sneak, privacy, commands, actions, views, events):
        module.register(app, ctx)
    return SlackBot(app=app, platform=SlackPlatform(client), context=ctx)


@web.middleware
async def _plain_timestamp(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A signed request's timestamp must be a number before Bolt's verifier reads it (which would
    raise and answer 500): anything else is a bad request, logged at DEBUG."""
    stamp = request.headers.get("X-Slack-Request-Timestamp")
    if stamp is not None and not (stamp.isascii() and stamp.isdigit() and len(stamp) <= 12):
        log.debug("Slack request with a malformed timestamp refused")
        return web.Response(status=400, text="bad request timestamp\n")
    response: web.StreamResponse = await handler(request)
    return response


async def serve_http(bot: SlackBot, host: str, port: int, path: str, *, sock: socket.socket | None = None,
                     **limits: float) -> GuardedServer:
    """Serve the signed-request endpoint within the limits of a public port (models/worker/httpguard.py:
    a connection cap, head and body deadlines, JSON nesting); returns the server (``.addresses`` has the
    port). ``sock``: the port, bound by the start-up before it said what runs."""
    app = bot.app.web_app(path=path)
    app.middlewares.append(_plain_timestamp)
    if sock is None:
        from bot.startup import bind_port

        sock = bind_port("HUSHTABLE_SLACK_PORT", host, port)
    server = guarded(app, "Slack HTTP mode", **{"max_connections": SLACK_MAX_CONNECTIONS, **limits})
    await server.start(sock)
    return server


async def run_slack(service: ServicePort, settings: Settings, *, start_service: bool = True,
                    admin_users: Collection[str] = (), tournament_port: TournamentPort | None = None,
                    sneak_port: SneakPort | None = None, http_socket: socket.socket | None = None,
                    privacy_port: PrivacyPort | None = None, web: Any = None) -> None:
    """Connect to Slack and serve until cancelled. The caller owns `service` (built from
    the same settings); this attaches the platform and, unless ``start_service`` is False
    (another adapter starts it once all platforms are attached), starts and stops the service."""
    if not settings.slack_bot_token:
        raise ValueError("SLACK_BOT_TOKEN is not set")
    bot = build_app(service, settings, admin_users=admin_users, tournament_port=tournament_port, sneak_port=sneak_port,
                    privacy_port=privacy_port, web=web)
    service.attach(bot.platform)
    if start_service:
        await service.start()
    try:
        if settings.slack_mode == "http":
            runner = await serve_http(bot, SLACK_HTTP_HOST, settings.slack_port, settings.slack_path, sock=http_socket)
            log.info("Slack HTTP mode on port %s%s", settings.slack_port, settings.slack_path)
            try:
                await asyncio.Event().wait()
            finally:
                await runner.cleanup()
        else:
            if not settings.slack_app_token:
                raise ValueError("Socket Mode needs SLACK_APP_TOKEN (xapp-...); or set HUSHTABLE_SLACK_MODE=http")
            from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

            handler = AsyncSocketModeHandler(bot.app, settings.slack_app_token)
            log.info("Slack Socket Mode connecting")
            try:
                await handler.start_async()  # type: ignore[no-untyped-call]  # slack_bolt's socket-mode handler is unannotated
            finally:
                await handler.close_async()  # type: ignore[no-untyped-call]  # slack_bolt's socket-mode handler is unannotated
    finally:
        await bot.idle()
        if start_service:
            await service.stop()

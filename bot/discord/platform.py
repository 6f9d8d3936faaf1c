"""`DiscordPlatform`: the core's `Platform` over a discord.py client (post, dm, edit, open_thread).

Failure policy: every failure of a send (an HTTP error, closed DMs, a dropped connection,
a timeout, a response discord.py cannot parse) goes through `delivery`, the one place that
logs it and raises `DeliveryFailed` to the service, so one failed recipient never stops a
game's fan-out. Rate limits and transient HTTP errors are left to discord.py's own retries.

A send for a table leaves only while its fence holds (``bot.core.platform.check_send``), checked
by the HTTP client's own hook (`fence_trace`) as the request is about to be written; a fenced send
raises `SendFenced`, not `DeliveryFailed`. A message with a key (a turn's outbox id) carries it as
its nonce with ``enforce_nonce``: Discord creates it once however often it is sent (a new holder
sending what a paused one had sent already), and answers a repeat with the first copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import aiohttp
import discord

from bot.core.fit import fit_label
from bot.core.messages import DeliveryFailed, Form, MessageRef, Outgoing, Place, UserRef
from bot.core.platform import SendFenced, check_send
from bot.discord.text import DISCORD_TEXT_LIMIT, contents
from bot.discord.views import NO_MENTIONS, view_of
from bot.ops.masking import member_tag

log = logging.getLogger("hushtable.discord")

PLATFORM = "discord"
FORM_CACHE_SIZE = 10_000
THREAD_NAME_MAX = 100
NONCE_MAX = 25  # Discord's limit on a message nonce's length


def nonce_of(key: str, part: int) -> str:
    """The nonce of one part of a keyed message: the same for every copy of it, within Discord's limit."""
    return f"{hashlib.blake2b(key.encode(), digest_size=9).hexdigest()}.{part}"[:NONCE_MAX]


async def _fence(_session: aiohttp.ClientSession, _ctx: Any, _params: Any) -> None:
    check_send()


def fence_trace() -> aiohttp.TraceConfig:
    """The client's hook that checks a send's fence as its request starts and again once it has
    its pooled connection, the last moment before the request is written."""
    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(_fence)
    trace.on_connection_reuseconn.append(_fence)
    return trace


@contextlib.contextmanager
def delivery(what: str) -> Iterator[None]:
    """Map any failure inside the block to `DeliveryFailed` (logged once, without message text)."""
    try:
        yield
    except (DeliveryFailed, SendFenced):
        raise
    except discord.Forbidden as e:
        # 50007: the member does not accept DMs from this server's members (or blocked the bot).
        log.info("%s refused by Discord (code %s)", what, e.code)
        raise DeliveryFailed(f"{what}: not allowed (Discord code {e.code})") from e
    except discord.HTTPException as e:
        log.warning("%s failed: HTTP %s (Discord code %s)", what, e.status, e.code)
        raise DeliveryFailed(f"{what}: HTTP {e.status}") from e
    except Exception as e:  # noqa: BLE001 - OSError, timeouts, malformed responses: all are a failed send
        log.warning("%s failed: %s", what, type(e).__name__)
        raise DeliveryFailed(f"{what}: {type(e).__name__}") from e


class DiscordPlatform:
    """`bot.core.platform.Platform` over a discord.py client. Channel ids are strings of snowflakes."""

    name = PLATFORM
    quiet_waiting, text_replies = False, True  # bot.core.platform.Platform

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        # Forms by codec id, so a click on a form button opens the right modal without asking the
        # service; after a restart the router falls back to the service's SHOW view.
        self.forms: OrderedDict[str, Form] = OrderedDict()

    def remember(self, m: Outgoing | None) -> None:
        if m is not None and m.form is not None:
            self.forms[m.form.id] = m.form
            self.forms.move_to_end(m.form.id)
            while len(self.forms) > FORM_CACHE_SIZE:
                self.forms.popitem(last=False)

    def messages(self, m: Outgoing, lead: str = "") -> list[dict[str, Any]]:
        """The send kwargs for ``m``: one message per 2,000 characters, controls on the last."""
        self.remember(m)
        # Mentions are off for every message: player text can hold "@everyone" or role pings,
        # and the bot itself never needs to ping anyone.
        out: list[dict[str, Any]] = [{"content": c, "allowed_mentions": NO_MENTIONS} for c in contents(m, lead)]
        view = view_of(m)
        if view is not None:
            out[-1]["view"] = view
        return out

    async def _send(self, channel: discord.abc.Messageable, m: Outgoing) -> MessageRef:
        msg = None
        for n, kw in enumerate(self.messages(m)):
            if m.key:
                kw["nonce"] = nonce_of(m.key, n)
            msg = await channel.send(**kw)
        assert msg is not None
        return MessageRef(PLATFORM, str(msg.channel.id), str(msg.id))

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        channel_id = place.thread or place.channel
        with delivery(f"post to channel {channel_id}"):
            return await self._send(self.client.get_partial_messageable(int(channel_id)), m)

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        with delivery(f"DM to {member_tag(user.key)}"):
            target = self.client.get_user(int(user.user_id)) or await self.client.fetch_user(int(user.user_id))
            channel = target.dm_channel or await target.create_dm()
            return await self._send(channel, m)

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        parts = self.messages(m)
        kw = parts[-1]
        if len(parts) > 1:
            # One message can only be edited into one message: keep its start and say so.
            kw["content"] = parts[0]["content"][: DISCORD_TEXT_LIMIT - 2] + "\n…"
        kw.setdefault("view", None)  # an edit without controls removes the old ones
        with delivery(f"edit of message {ref.message_id}"):
            channel = self.client.get_partial_messageable(int(ref.channel))
            await channel.get_partial_message(int(ref.message_id)).edit(**kw)

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        if place.thread:
            return place
        name = fit_label(title or "game", THREAD_NAME_MAX)
        try:
            with delivery(f"thread in {place.channel}"):
                # The cached channel knows its guild; a partial one cannot start threads.
                channel = self.client.get_channel(int(place.channel)) or await self.client.fetch_channel(int(place.channel))
                if not isinstance(channel, discord.TextChannel):
                    return place  # no threads here (a DM, a forum we do not handle): play in place
                if anchor is not None and anchor.channel == place.channel:
                    thread = await channel.get_partial_message(int(anchor.message_id)).create_thread(
                        name=name, auto_archive_duration=1440)
                else:
                    thread = await channel.create_thread(name=name, type=discord.ChannelType.public_thread,
                                                         auto_archive_duration=1440)
        except DeliveryFailed:
            # Missing the thread permission is not fatal: the game runs in the channel itself.
            return place
        return Place(PLATFORM, place.channel, str(thread.id))

"""Events API: a member's plain message in the bot's DM answers their pending text prompt.

Events are acked by Bolt on arrival. Slack re-delivers an event when the ack
was late (``X-Slack-Retry-Num``); the ``event_id`` is the same on every try, so
it is the inbound id the core's storage deduplicates on. Retries are not dropped
wholesale: a first delivery that never arrived must still count.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import CommandKind, DeliveryFailed, Outgoing, Place, UserRef
from bot.ops.masking import member_tag
from bot.slack.blocks import render
from bot.slack.context import PLATFORM, SlackContext, delivery

log = logging.getLogger("hushtable.slack")

# Edits, joins, bot posts and the like are not answers.
_IGNORED_SUBTYPES = {"message_changed", "message_deleted", "bot_message", "channel_join", "channel_leave", "message_replied"}


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.event("message")
    async def on_message(body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("channel_type") != "im" or event.get("bot_id") or event.get("subtype") in _IGNORED_SUBTYPES:
            return
        text = str(event.get("text") or "").strip()
        if not text or not event.get("user"):
            return
        async with ctx.inflight.track():
            channel = str(event["channel"])
            inbound = f"ev:{body.get('event_id') or event.get('client_msg_id') or event.get('ts')}"
            origin = await ctx.origin(client, body, UserRef(PLATFORM, str(event["user"])), Place(PLATFORM, channel), inbound)
            reply = await ctx.service.handle(origin.command(CommandKind.ACT, {"text": text}))
            if reply.duplicate:
                return
            m = reply.outgoing or Outgoing(("✅ " if reply.ok else "⚠️ ") + reply.text)
            try:
                with delivery(f"answer to a DM in {member_tag(channel)}"):
                    await client.chat_postMessage(channel=channel, **render(m).kwargs())
            except DeliveryFailed:
                pass  # the move itself is saved; only its acknowledgement was lost

"""Modal submissions: a form's texts (hints, clues, descriptions) become one ACT command.

The modal closes on ack (within 3 s); the service runs afterwards and its answer
goes to the author privately: a DM message when the form was opened from a DM,
an ephemeral message in the channel otherwise. The inbound id is the view id plus
its hash, which is the same on a re-delivered submission.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.codec import BadId, decode
from bot.core.messages import Command, CommandKind, Outgoing, Place, UserRef
from bot.slack.blocks import form_values, render
from bot.slack.context import PLATFORM, Ack, SlackContext

log = logging.getLogger("hushtable.slack")


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.view(re.compile(r"^g:\d+:\d+:[^:]+$"))
    async def on_submit(ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient) -> None:
        values = form_values(view)
        empty = [f"f{i}" for i, v in enumerate(values) if not v]
        if empty:
            # Field errors are the one check made before the ack: they keep the modal open.
            await ack(response_action="errors", errors={b: "Write something here." for b in empty})
            return
        await ack()
        async with ctx.inflight.track():
            await run_submission(ctx, body, view, values, client)


async def run_submission(ctx: SlackContext, body: dict[str, Any], view: dict[str, Any], values: list[str], client: AsyncWebClient) -> None:
    try:
        d = decode(str(view["callback_id"]))
    except BadId:
        log.warning("view with a foreign callback id %r", view.get("callback_id"))
        return
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
    except json.JSONDecodeError:
        meta = {}
    user = UserRef(PLATFORM, str(body["user"]["id"]), str(body["user"].get("username") or body["user"].get("name") or ""))
    channel = str(meta.get("c") or "")
    place = Place(PLATFORM, channel, meta.get("t") or None)
    inbound = f"view:{view.get('id', '')}:{view.get('hash', '')}"
    cmd = Command(CommandKind.ACT, user, place, {"game_id": d.game_id, "seat": d.seat, "kind": d.kind, "value": values}, inbound)
    reply = await ctx.service.handle(cmd)
    if reply.duplicate:
        return
    m = render(reply.outgoing or Outgoing(("✅ " if reply.ok else "⚠️ ") + reply.text))
    if channel.startswith("D") or not channel:
        opened = await client.conversations_open(users=user.user_id)
        await client.chat_postMessage(channel=str(opened["channel"]["id"]), **m.kwargs())
    else:
        await client.chat_postEphemeral(channel=channel, user=user.user_id, thread_ts=place.thread, **m.kwargs())

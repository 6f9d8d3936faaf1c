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

from bot.core import intake
from bot.core.codec import BadId, Scope, decode
from bot.core.messages import DeliveryFailed, Outgoing, Place, UserRef
from bot.ops.masking import member_tag
from bot.slack.blocks import form_values, render
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery

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
    if d.scope is not Scope.ACTION or d.option is not None:
        log.warning("view with a callback id that is not a form: %r", view.get("callback_id"))
        return
    origin = await ctx.origin(client, body, user, place, inbound)
    cmd = intake.command_for(d, origin, agent=ctx.default_agent(), values=values)
    assert cmd is not None
    reply = await ctx.service.handle(cmd)
    if reply.duplicate:
        return
    m = render(reply.outgoing or Outgoing(("✅ " if reply.ok else "⚠️ ") + reply.text))
    try:
        with delivery(f"answer to a form of {member_tag(user.key)}"):
            if channel.startswith("D") or not channel:
                opened = await client.conversations_open(users=user.user_id)
                await client.chat_postMessage(channel=str(opened["channel"]["id"]), **m.kwargs())
            else:
                await client.chat_postEphemeral(channel=channel, user=user.user_id, thread_ts=place.thread, **m.kwargs())
    except DeliveryFailed:
        pass  # the move itself is saved; only its acknowledgement was lost

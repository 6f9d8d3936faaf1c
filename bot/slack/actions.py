"""Block actions: lobby buttons, choice buttons and selects, "show my secret", and the
button that opens a free-text form as a modal.

Every id comes from bot.core.codec, so a button posted before a restart still
works after it. The inbound id (container message ts + action_ts + user) is the
same on a re-delivery of the same click, and the core's storage drops it.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import intake
from bot.core.codec import BadId, Decoded, Scope, decode
from bot.core.messages import Command, CommandKind, DeliveryFailed, Outgoing, Place, Reply, UserRef
from bot.slack.blocks import decode_form, form_modal, mrkdwn, render
from bot.slack.commands import reply_to
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery

log = logging.getLogger("hushtable.slack")

ID_PATTERN = re.compile(r"^[gls]:\d+")


def inbound_id(body: dict[str, Any], action: dict[str, Any]) -> str:
    container = body.get("container") or {}
    ts = container.get("message_ts") or (body.get("message") or {}).get("ts") or ""
    return f"act:{ts}:{action.get('action_ts', '')}:{body['user']['id']}"


def place_of(body: dict[str, Any]) -> Place:
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    thread = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
    return Place(PLATFORM, str(channel), str(thread) if thread else None)


def to_command(ctx: SlackContext, d: Decoded, action: dict[str, Any], origin: intake.Origin) -> Command | None:
    """The core command for a click; None for a form opener (handled by the adapter)."""
    if d.scope is Scope.ACTION and action.get("type") == "static_select":
        # A select's value is a full choice-button id; decode it for the option.
        chosen = decode(str((action.get("selected_option") or {}).get("value") or ""))
        if (chosen.scope, chosen.game_id, chosen.seat, chosen.kind) != (Scope.ACTION, d.game_id, d.seat, d.kind) or chosen.option is None:
            raise BadId("select option does not belong to its menu")
        d = chosen
    return intake.command_for(d, origin, agent=ctx.default_agent())


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.action(ID_PATTERN)
    async def on_action(ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            await run_action(ctx, body, action, respond, client)


async def run_action(ctx: SlackContext, body: dict[str, Any], action: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
    user = UserRef(PLATFORM, str(body["user"]["id"]), str(body["user"].get("username") or body["user"].get("name") or ""))
    place = place_of(body)
    try:
        d = decode(str(action["action_id"]))
    except BadId as e:
        log.warning("ignoring a foreign action id: %s", e)
        return
    origin = await ctx.origin(client, body, user, place, inbound_id(body, action))
    try:
        cmd = to_command(ctx, d, action, origin)
    except BadId as e:
        log.warning("ignoring a foreign action id: %s", e)
        return
    if cmd is None:
        await open_form(client, body, action, place)
        return
    reply = await ctx.service.handle(cmd)
    await answer_click(respond, body, cmd, reply)


async def answer_click(respond: AsyncRespond, body: dict[str, Any], cmd: Command, reply: Reply) -> None:
    if reply.duplicate:
        return
    in_dm = place_of(body).channel.startswith("D")
    if cmd.kind is CommandKind.ACT and reply.ok and in_dm and reply.outgoing is None:
        # The prompt has been answered: replace it so its buttons cannot be clicked twice.
        prompt = "\n".join(
            b["text"]["text"] for b in (body.get("message") or {}).get("blocks", []) if b.get("type") == "section" and "text" in b
        )
        # The prompt text is already escaped Slack text: kept as is; the reply is escaped once here.
        done = f"{prompt}\n\n✅ {mrkdwn(reply.text)}" if prompt else f"✅ {mrkdwn(reply.text)}"
        try:
            with delivery("replacing an answered prompt"):
                section = {"type": "section", "text": {"type": "mrkdwn", "text": done[:3000], "verbatim": True}}
                await respond(replace_original=True, text=done[:3900], blocks=[section])
        except DeliveryFailed:
            pass
        return
    await reply_to(respond, reply)


async def open_form(client: AsyncWebClient, body: dict[str, Any], action: dict[str, Any], place: Place) -> None:
    trigger = body.get("trigger_id")
    if not trigger:
        return
    try:
        form = decode_form(str(action["action_id"]), str(action.get("value") or ""))
    except (ValueError, KeyError, json.JSONDecodeError):
        log.warning("form button without a readable form: %r", action.get("value"))
        return
    meta = {"c": place.channel, "t": place.thread}
    try:
        with delivery("views.open"):
            await client.views_open(trigger_id=trigger, view=form_modal(form, meta))
    except DeliveryFailed:
        # trigger_ids expire after 3 s; the DM reply path still works.
        try:
            with delivery("form fallback notice"):
                notice = Outgoing("The form could not open in time; click again, or reply here by DM.")
                await client.chat_postEphemeral(channel=place.channel, user=body["user"]["id"], **render(notice).kwargs())
        except DeliveryFailed:
            pass

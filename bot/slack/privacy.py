"""Slack's `/hushtable privacy`, `research on|off`, `mydata`, `forget-me [confirm]` and `audit`.

The listener matches only these words and is registered before the general `/hushtable` one (Bolt
runs the first listener that matches), as the SNEAK words are. It acks at once; answers go to the
author ephemerally through ``response_url``, and `mydata`'s file to the author's DM, never the
channel. `forget-me` explains first and erases on `forget-me confirm`. The answers come from the
privacy desk (``bot.core.privacy.PrivacyDesk``), the context's ``privacy`` port.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import Place, UserRef
from bot.slack.blocks import escape
from bot.slack.commands import COMMAND
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery

VERBS = ("privacy", "research", "mydata", "forget-me", "audit")


async def _is_privacy(body: dict[str, Any]) -> bool:
    words = str(body.get("text") or "").split()
    return bool(words) and words[0].lower() in VERBS


async def answer(ctx: SlackContext, body: dict[str, Any], client: AsyncWebClient) -> str:
    """The author's answer to one of the privacy words (a file goes to their DM first)."""
    desk = ctx.privacy
    if desk is None:
        return "Privacy commands are not running on this bot."
    user = UserRef(PLATFORM, str(body["user_id"]), str(body.get("user_name") or ""))
    verb, *rest = str(body.get("text") or "").split()
    verb = verb.lower()
    if verb == "privacy":
        return desk.privacy_text()
    if verb == "research":
        return "Say `/hushtable research on` or `/hushtable research off`." if len(rest) > 1 else \
            await desk.research(user.key, rest[0] if rest else None)
    if verb == "forget-me":
        if rest and [w.lower() for w in rest] != ["confirm"]:
            return "Say `/hushtable forget-me` to read what it does, then `/hushtable forget-me confirm`."
        text = await desk.forget_me(user.key, confirmed=bool(rest))
        return text if rest else f"{text} Say `/hushtable forget-me confirm`."
    if verb == "audit":
        origin = await ctx.origin(client, body, user, Place(PLATFORM, str(body.get("channel_id") or "")), None)
        return await desk.audit_text(is_admin=origin.is_admin)
    filename, data = await desk.mydata(user.key)
    try:
        with delivery(f"mydata upload to {user.user_id}"):
            opened = await client.conversations_open(users=user.user_id)
            await client.files_upload_v2(channel=str(opened["channel"]["id"]), filename=filename, content=data,
                                         title=filename, initial_comment="Everything Hushtable stores about you.")
    except Exception:  # noqa: BLE001 - logged by delivery()
        return "Your data could not be sent to you by DM."
    return f"{filename} sent to you by DM."


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.command(COMMAND, matchers=[_is_privacy])
    async def on_privacy(ack: Ack, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            text = await answer(ctx, body, client)
            try:
                with delivery("privacy answer through response_url"):
                    await respond(text=escape(text), response_type="ephemeral")
            except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
                pass

"""Slack's `/hushtable privacy`, `research on|off`, `mydata`, `forget-me` and `audit`.

The listener matches only these words and is registered before the general `/hushtable` one (Bolt
runs the first listener that matches), as the SNEAK words are. It acks at once; answers go to the
author ephemerally through ``response_url``, and `mydata`'s file to the author's DM, never the
channel. `privacy` shows the notice with Block Kit buttons "Research: on" and "Research: off";
`forget-me` explains and shows an "Erase me" button. Each button carries the asker's user id and
acts only on a click by that member (anyone else is told so, and nothing changes); the buttons
hold no state, so they work after a restart. The answers come from the privacy desk
(``bot.core.privacy.PrivacyDesk``), the context's ``privacy`` port.
"""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import Place, UserRef
from bot.ops.masking import member_tag
from bot.slack.blocks import escape, mrkdwn
from bot.slack.commands import COMMAND
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery

VERBS = ("privacy", "research", "mydata", "forget-me", "audit")
RESEARCH_ON_ID, RESEARCH_OFF_ID, FORGET_ID = "privacy:research-on", "privacy:research-off", "privacy:forget-me"
BUTTON_IDS = re.compile(r"^privacy:(research-on|research-off|forget-me)$")
OFF = "Privacy commands are not running on this bot."


def _button(action_id: str, label: str, asker: str, style: str | None = None) -> dict[str, Any]:
    el: dict[str, Any] = {"type": "button", "action_id": action_id, "value": asker,
                          "text": {"type": "plain_text", "text": label}}
    if style:
        el["style"] = style
    return el


def with_buttons(text: str, *buttons: dict[str, Any]) -> dict[str, Any]:
    """An ephemeral answer: the text as a section, the buttons under it (and the text as the fallback)."""
    return {"text": escape(text), "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": mrkdwn(text)}},
                                             {"type": "actions", "elements": list(buttons)}]}


async def _is_privacy(body: dict[str, Any]) -> bool:
    words = str(body.get("text") or "").split()
    return bool(words) and words[0].lower() in VERBS


async def answer(ctx: SlackContext, body: dict[str, Any], client: AsyncWebClient) -> dict[str, Any]:
    """The author's answer to one of the privacy words, as ``respond``'s arguments (a file goes to their DM first)."""
    desk = ctx.privacy
    if desk is None:
        return {"text": escape(OFF)}
    user = UserRef(PLATFORM, str(body["user_id"]), str(body.get("user_name") or ""))
    verb, *rest = str(body.get("text") or "").split()
    verb = verb.lower()
    if verb == "privacy":
        return with_buttons(desk.privacy_text(), _button(RESEARCH_ON_ID, "Research: on", user.user_id, "primary"),
                            _button(RESEARCH_OFF_ID, "Research: off", user.user_id))
    if verb == "research":
        return {"text": escape("Say `/hushtable research on` or `/hushtable research off`." if len(rest) > 1 else
                               await desk.research(user.key, rest[0] if rest else None))}
    if verb == "forget-me":
        if rest:
            return {"text": escape("Say `/hushtable forget-me` and press its Erase me button; nothing was erased.")}
        text = await desk.forget_me(user.key, confirmed=False)
        return with_buttons(text, _button(FORGET_ID, "Erase me", user.user_id, "danger"))
    if verb == "audit":
        origin = await ctx.origin(client, body, user, Place(PLATFORM, str(body.get("channel_id") or "")), None)
        return {"text": escape(await desk.audit_text(is_admin=origin.is_admin))}
    filename, data = await desk.mydata(user.key)
    try:
        with delivery(f"mydata upload to {member_tag(user.key)}"):
            opened = await client.conversations_open(users=user.user_id)
            await client.files_upload_v2(channel=str(opened["channel"]["id"]), filename=filename, content=data,
                                         title=filename, initial_comment="Everything Hushtable stores about you.")
    except Exception:  # noqa: BLE001 - logged by delivery()
        return {"text": escape("Your data could not be sent to you by DM.")}
    return {"text": escape(f"{filename} sent to you by DM.")}


async def pressed(ctx: SlackContext, body: dict[str, Any], action: dict[str, Any]) -> str:
    """A privacy button pressed: the asker's choice recorded or their erasure done; anyone else told no."""
    desk = ctx.privacy
    if desk is None:
        return OFF
    who = str(body["user"]["id"])
    forget = action["action_id"] == FORGET_ID
    if who != str(action.get("value") or ""):
        return ("Only the member who asked can confirm their erasure." if forget
                else "Only the member who asked can change their research choice.")
    key = UserRef(PLATFORM, who, "").key
    if forget:
        return await desk.forget_me(key, confirmed=True)
    return await desk.research(key, "on" if action["action_id"] == RESEARCH_ON_ID else "off")


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.command(COMMAND, matchers=[_is_privacy])
    async def on_privacy(ack: Ack, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            said = await answer(ctx, body, client)
            try:
                with delivery("privacy answer through response_url"):
                    await respond(**said, response_type="ephemeral")
            except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
                pass

    @app.action(BUTTON_IDS)
    async def on_button(ack: Ack, body: dict[str, Any], action: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        async with ctx.inflight.track():
            text = await pressed(ctx, body, action)
            try:
                with delivery("privacy button answer through response_url"):
                    await respond(text=escape(text), response_type="ephemeral", replace_original=False)
            except Exception:  # noqa: BLE001 - logged by delivery(); the member simply gets no answer
                pass

"""Slack's `/hushtable sneak` and `/hushtable judge`: a member's SNEAK averages, and the human study.

`/hushtable judge` shows the member one SNEAK item; `/hushtable judge N` records their answer and
shows their running score and the next item (models/eval/study.py). The listener matches only
these two words and is registered before the general
`/hushtable` one (Bolt runs the first listener that matches). It acks at once and answers
the author ephemerally through ``response_url``, from the SNEAK service (bot/sneak.py),
the context's ``sneak`` port: the stored evaluations of the workspace's finished games.
"""

from __future__ import annotations

from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond

from bot.core.messages import UserRef
from bot.slack.blocks import escape
from bot.slack.commands import COMMAND
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery


async def _is_sneak(body: dict[str, Any]) -> bool:
    words = str(body.get("text") or "").split()
    return bool(words) and words[0].lower() in ("sneak", "judge")


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.command(COMMAND, matchers=[_is_sneak])
    async def on_sneak(ack: Ack, body: dict[str, Any], respond: AsyncRespond) -> None:
        await ack()
        async with ctx.inflight.track():
            user = UserRef(PLATFORM, str(body["user_id"]), str(body.get("user_name") or ""))
            team = str(body.get("team_id") or "")
            service = ctx.sneak
            words = str(body.get("text") or "").split()
            tenant = f"{PLATFORM}:{team}" if team else None
            if service is None:
                text = "SNEAK scoring is not running on this bot."
            elif words[0].lower() == "judge":
                text = await service.judge(user.key, tenant, " ".join(words[1:]) or None)
            else:
                text = await service.averages(user.key, tenant)
            try:
                with delivery("sneak answer through response_url"):
                    await respond(text=escape(text), response_type="ephemeral")
            except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
                pass

"""Slack's `/hushtable sneak` and `/hushtable judge`: a member's SNEAK averages, and the human study.

`/hushtable judge` shows the member one SNEAK item; `/hushtable judge N` records their answer and
shows their running score and the next item (models/eval/study.py). The listener matches only
these two words and is registered before the general
`/hushtable` one (Bolt runs the first listener that matches). It acks at once and answers
the author ephemerally through ``response_url``, from the SNEAK service (bot/sneak.py),
the context's ``sneak`` port: the stored evaluations of the workspace's finished games.
`judge` items come only from games in channels the member is in (``users.conversations``, the
``channels:read`` and ``groups:read`` scopes); when Slack does not say, only benchmark items.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import UserRef
from bot.slack.blocks import escape
from bot.slack.commands import COMMAND
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery

log = logging.getLogger(__name__)
JUDGE = "/hushtable judge N"  # how a member answers an item here
PAGES = 20  # users.conversations pages read per /hushtable judge (1,000 channels each), a bound on its cost


async def member_channels(client: AsyncWebClient, user: str) -> frozenset[str]:
    """The channels ``user`` is in, as Slack lists them to the bot; empty when Slack refuses (logged by type)."""
    found: set[str] = set()
    cursor = ""
    try:
        for _ in range(PAGES):
            page = await client.users_conversations(user=user, types="public_channel,private_channel,mpim,im",
                                                    exclude_archived=False, limit=1000, cursor=cursor or None)
            found |= {str(c["id"]) for c in page.get("channels") or []}
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                break
    except Exception as exc:  # noqa: BLE001 - without the list the member sees benchmark items only
        log.warning("users.conversations failed for the human study: %s", type(exc).__name__)
        return frozenset()
    return frozenset(found)


async def _is_sneak(body: dict[str, Any]) -> bool:
    words = str(body.get("text") or "").split()
    return bool(words) and words[0].lower() in ("sneak", "judge")


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.command(COMMAND, matchers=[_is_sneak])
    async def on_sneak(ack: Ack, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
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
                text = await service.judge(user.key, tenant, " ".join(words[1:]) or None,
                                           channels=await member_channels(client, user.user_id), command=JUDGE)
            else:
                text = await service.averages(user.key, tenant)
            try:
                with delivery("sneak answer through response_url"):
                    await respond(text=escape(text), response_type="ephemeral")
            except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
                pass

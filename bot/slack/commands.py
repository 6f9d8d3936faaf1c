"""The `/hushtable` slash command: parse the subcommand text into a core `Command`.

`parse` is pure (text in, a `Parsed` out) so the grammar is tested without Slack.
The listener acks at once with nothing (Slack shows no "working" noise), then
calls the service and answers the author ephemerally through ``response_url``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core.messages import Command, CommandKind, Outgoing, Place, Reply, UserRef
from bot.slack.blocks import escape, render
from bot.slack.context import PLATFORM, Ack, SlackContext

log = logging.getLogger("hushtable.slack")

COMMAND = "/hushtable"

HELP = """*Hushtable* — hidden-information word games with people and AI seats.
`/hushtable play <game> [variant] [key=value …] [deadline=SECONDS]` open a table here (games: {games})
`/hushtable join [game_id]` · `/hushtable leave [game_id]` take or give up a seat
`/hushtable ai [agent] [count]` add AI seats (agents: {agents}) · `/hushtable ai remove <agent>`
`/hushtable deadline <seconds>` turn deadline for people (0 = none)
`/hushtable start [game_id]` · `/hushtable abort [game_id]`
`/hushtable status` · `/hushtable list` · `/hushtable rules [game] [variant]`
`/hushtable export [jsonl|csv] [game] [since=YYYY-MM-DD]` (admins) the game log as a file
Secrets arrive by DM. Answer turns with the buttons, the ✏️ form, or by replying in the DM."""


class UsageError(ValueError):
    """A subcommand that cannot be understood; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed subcommand: a core command kind with its args, or one of the adapter's own verbs."""

    verb: str  # "command" | "help" | "export"
    kind: CommandKind | None = None
    args: dict[str, Any] = field(default_factory=dict)


def _int(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise UsageError(f"{what} must be a whole number, not `{escape(word)}`.") from None


def _game_id(words: list[str]) -> dict[str, Any]:
    return {"game_id": _int(words[0], "The game id")} if words else {}


def parse(text: str, default_agent: str = "random") -> Parsed:
    words = text.split()
    if not words or words[0].lower() in ("help", "?"):
        return Parsed("help")
    verb, rest = words[0].lower(), words[1:]
    if verb in ("play", "new", "create"):
        if not rest:
            raise UsageError("Which game? `/hushtable play <game> [variant]`")
        game, variant, options, deadline = rest[0].lower(), None, {}, None
        for w in rest[1:]:
            if "=" in w:
                key, _, value = w.partition("=")
                if key == "deadline":
                    deadline = _int(value, "The deadline")
                else:
                    options[key] = _option_value(value)
            elif variant is None:
                variant = w
            else:
                raise UsageError(f"Unexpected `{escape(w)}`: options are written key=value.")
        args: dict[str, Any] = {"game": game, "variant": variant, "options": options}
        if deadline is not None:
            args["deadline_s"] = deadline
        return Parsed("command", CommandKind.CREATE, args)
    simple = {"join": CommandKind.JOIN, "leave": CommandKind.LEAVE, "start": CommandKind.START, "abort": CommandKind.ABORT}
    if verb in simple:
        return Parsed("command", simple[verb], _game_id(rest))
    if verb == "ai":
        if rest and rest[0].lower() == "remove":
            if len(rest) < 2:
                raise UsageError("Which AI? `/hushtable ai remove <agent>`")
            return Parsed("command", CommandKind.REMOVE_AI, {"agent": rest[1]})
        agent, count = default_agent, 1
        for w in rest:
            if w.isdigit():
                count = int(w)
            else:
                agent = w
        return Parsed("command", CommandKind.ADD_AI, {"agent": agent, "count": count})
    if verb == "deadline":
        if not rest:
            raise UsageError("How many seconds? `/hushtable deadline <seconds>` (0 = none)")
        return Parsed("command", CommandKind.SET_DEADLINE, {"seconds": _int(rest[0], "The deadline")})
    if verb == "status":
        return Parsed("command", CommandKind.STATUS, _game_id(rest))
    if verb == "list":
        return Parsed("command", CommandKind.LIST, {})
    if verb == "rules":
        return Parsed("command", CommandKind.RULES, {"game": rest[0].lower() if rest else None, "variant": rest[1] if len(rest) > 1 else None})
    if verb == "export":
        args = {"fmt": "jsonl", "game": None, "since": None}
        for w in rest:
            if w.startswith("since="):
                raw = w.partition("=")[2]
                try:
                    args["since"] = datetime.fromisoformat(raw).replace(tzinfo=UTC)
                except ValueError:
                    raise UsageError(f"`since` is a date like 2025-01-31, not `{escape(raw)}`.") from None
            elif w.lower() in ("jsonl", "csv"):
                args["fmt"] = w.lower()
            else:
                args["game"] = w.lower()
        return Parsed("export", None, args)
    raise UsageError(f"Unknown subcommand `{escape(verb)}`. Try `/hushtable help`.")


def _option_value(raw: str) -> Any:
    """key=value options: numbers and booleans as such, the rest as text."""
    low = raw.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return raw


async def reply_to(respond: AsyncRespond, reply: Reply) -> None:
    """The author's private answer. A duplicate delivery answers nothing."""
    if reply.duplicate:
        return
    m = reply.outgoing or Outgoing(reply.text)
    if reply.outgoing is not None and reply.text and reply.text != reply.outgoing.text:
        m = Outgoing(f"{reply.text}\n{reply.outgoing.text}", reply.outgoing.buttons, reply.outgoing.select_id, reply.outgoing.form, reply.outgoing.title)
    await respond(response_type="ephemeral", replace_original=False, **render(m).kwargs())


def help_text(ctx: SlackContext) -> str:
    games = ", ".join(sorted(ctx.service.game_choices()))
    return HELP.format(games=games, agents=", ".join(ctx.service.agent_choices()) or ctx.settings.default_agent)


def register(app: AsyncApp, ctx: SlackContext) -> None:
    @app.command(COMMAND)
    async def on_command(ack: Ack, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            await run_command(ctx, body, respond, client)


async def run_command(ctx: SlackContext, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
    user = UserRef(PLATFORM, str(body["user_id"]), str(body.get("user_name") or ""))
    place = Place(PLATFORM, str(body["channel_id"]))
    # Slack never retries a slash command, but a trigger_id is unique per invocation,
    # so it is a sound idempotency key should a proxy replay the request.
    inbound = f"cmd:{body.get('trigger_id') or body.get('command_ts') or ''}"
    try:
        parsed = parse(str(body.get("text") or ""), ctx.settings.default_agent)
    except UsageError as e:
        await respond(response_type="ephemeral", text=str(e))
        return
    if parsed.verb == "help":
        await respond(response_type="ephemeral", text=help_text(ctx))
        return
    if parsed.verb == "export":
        await run_export(ctx, body, parsed.args, user, place, inbound, respond, client)
        return
    assert parsed.kind is not None
    is_admin = parsed.kind is CommandKind.ABORT and await ctx.is_admin(client, user.user_id)
    cmd = Command(parsed.kind, user, place, parsed.args, inbound_id=inbound, is_admin=is_admin)
    await reply_to(respond, await ctx.service.handle(cmd))


async def run_export(
    ctx: SlackContext,
    body: dict[str, Any],
    args: dict[str, Any],
    user: UserRef,
    place: Place,
    inbound: str,
    respond: AsyncRespond,
    client: AsyncWebClient,
) -> None:
    is_admin = await ctx.is_admin(client, user.user_id)
    if not is_admin:
        # Refused here as well as in the core: a non-admin never reaches the file path.
        await respond(response_type="ephemeral", text="Only workspace admins (or the configured admin list) can export game logs.")
        return
    cmd = Command(CommandKind.EXPORT, user, place, {}, inbound_id=inbound, is_admin=True)
    result = await ctx.service.export(cmd, args["fmt"], args["game"], args["since"])
    if isinstance(result, Reply):
        await reply_to(respond, result)
        return
    filename, data = result
    # The file goes to the admin's DM, never the channel: logs hold every secret of a game.
    opened = await client.conversations_open(users=user.user_id)
    await client.files_upload_v2(
        channel=str(opened["channel"]["id"]),
        filename=filename,
        content=data,
        title=filename,
        initial_comment=f"Hushtable export: {filename} ({len(data)} bytes)",
    )
    await respond(response_type="ephemeral", text=f"Export `{escape(filename)}` sent to you by DM.")

"""The `/hushtable` slash command: parse the subcommand text into a core `Command`.

`parse` is pure (text in, a `Parsed` out) so the grammar is tested without Slack; its
options, dates and default agent follow `bot.core.intake`, like every platform's.
The listener acks at once with nothing (Slack shows no "working" noise), then
calls the service and answers the author ephemerally through ``response_url``.
Every command carries its workspace (``slack:<team id>``) and whether its author is an
admin there (users.info, or the configured admin users).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.web.async_client import AsyncWebClient

from bot.core import intake
from bot.core.messages import CommandKind, Outgoing, Place, Reply, UserRef
from bot.ops.masking import member_tag
from bot.slack.blocks import render
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery
from games.text import typed_number
from models.agent_names import canonical

log = logging.getLogger("hushtable.slack")

COMMAND = "/hushtable"

HELP = """*Hushtable* — hidden-information word games with people and AI seats.
`/hushtable play <game> [variant] [key=value …] [deadline=SECONDS]` open a table here (games: {games})
`/hushtable join [game_id]` · `/hushtable leave [game_id]` take or give up a seat
`/hushtable ai [agent] [count]` add AI seats (agents: {agents}; default {default}) · `/hushtable ai remove <agent>`
`/hushtable deadline <seconds>` turn deadline for people (0 = none)
`/hushtable start [game_id]` · `/hushtable abort [game_id]`
`/hushtable status` · `/hushtable list` · `/hushtable rules [game] [variant]`
`/hushtable export [jsonl|csv] [game] [since=YYYY-MM-DD]` (admins) the game log as a file · `/hushtable web` a link to the finished games
Secrets arrive by DM. Answer turns with the buttons, the ✏️ form, or by replying in the DM."""


class UsageError(intake.IntakeError):
    """A subcommand that cannot be understood; the message says how to write it."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed subcommand: a core command kind with its args, or one of the adapter's own verbs."""

    verb: str  # "command" | "help" | "export" | "web"
    kind: CommandKind | None = None
    args: dict[str, Any] = field(default_factory=dict)


def _int(word: str, what: str) -> int:
    value = typed_number(word)
    if value is None:
        raise UsageError(f"{what} must be a whole number (digits 0-9), not `{word[:20]}`.")
    return value


def _game_id(words: list[str]) -> dict[str, Any]:
    return {"game_id": _int(words[0], "The game id")} if words else {}


def parse(text: str, default_agent: str = "random") -> Parsed:
    try:
        words = intake.tokens(text)
    except intake.IntakeError as e:
        raise UsageError(str(e)) from None
    if not words or words[0].lower() in ("help", "?"):
        return Parsed("help")
    verb, rest = words[0].lower(), words[1:]
    if verb == "web":
        return Parsed("web")
    if verb in ("play", "new", "create"):
        if not rest:
            raise UsageError("Which game? `/hushtable play <game> [variant]`")
        game, variant = intake.unquote(rest[0]).lower(), None
        option_words = []
        for w in rest[1:]:
            if "=" in w:
                option_words.append(w)
            elif variant is None:
                variant = intake.unquote(w)
            else:
                raise UsageError(f"Unexpected `{w}`: options are written key=value.")
        try:
            options = intake.parse_options(option_words)
        except intake.IntakeError as e:
            raise UsageError(str(e)) from None
        deadline = options.pop("deadline", None)
        args: dict[str, Any] = {"game": game, "variant": variant, "options": options}
        if deadline is not None:
            if not isinstance(deadline, int) or isinstance(deadline, bool):
                raise UsageError(f"The deadline must be a whole number of seconds, not `{str(deadline)}`.")
            args["deadline_s"] = deadline
        return Parsed("command", CommandKind.CREATE, args)
    simple = {"join": CommandKind.JOIN, "leave": CommandKind.LEAVE, "start": CommandKind.START, "abort": CommandKind.ABORT}
    if verb in simple:
        return Parsed("command", simple[verb], _game_id(rest))
    if verb == "ai":
        if rest and rest[0].lower() == "remove":
            if len(rest) < 2:
                raise UsageError("Which AI? `/hushtable ai remove <agent>`")
            return Parsed("command", CommandKind.REMOVE_AI, {"agent": intake.unquote(rest[1])})
        agent, count = default_agent, 1
        for w in rest:
            if w.isdigit():
                count = _int(w, "The number of AI players")
            else:
                agent = intake.unquote(w)
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
                try:
                    args["since"] = intake.parse_since(intake.unquote(w.partition("=")[2]))
                except intake.IntakeError as e:
                    raise UsageError(str(e)) from None
            elif w.lower() in ("jsonl", "csv"):
                args["fmt"] = w.lower()
            else:
                args["game"] = intake.unquote(w).lower()
        return Parsed("export", None, args)
    raise UsageError(f"Unknown subcommand `{verb}`. Try `/hushtable help`.")


async def say(respond: AsyncRespond, text: str, **kw: Any) -> None:
    """An ephemeral answer to the author; a failure to deliver it is logged, never raised."""
    await reply_to(respond, Reply(text), **kw)


async def reply_to(respond: AsyncRespond, reply: Reply, **kw: Any) -> None:
    """The author's private answer (escaped by `render`). A duplicate delivery answers nothing."""
    if reply.duplicate:
        return
    m = reply.outgoing or Outgoing(reply.text)
    if reply.outgoing is not None and reply.text and reply.text != reply.outgoing.text:
        m = Outgoing(f"{reply.text}\n{reply.outgoing.text}", reply.outgoing.buttons, reply.outgoing.select_id, reply.outgoing.form, reply.outgoing.title)
    kw = {"response_type": "ephemeral", "replace_original": False, **kw}
    try:
        with delivery("answer through response_url"):
            await respond(**kw, **render(m).kwargs())
    except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
        pass


def help_text(ctx: SlackContext) -> str:
    games = ", ".join(sorted(ctx.service.game_choices()))
    return HELP.format(games=games, agents=", ".join(ctx.service.agent_choices()) or ctx.settings.default_agent,
                       default=ctx.default_agent())


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
        parsed = parse(str(body.get("text") or ""), ctx.default_agent())
    except UsageError as e:
        await say(respond, str(e))
        return
    if parsed.verb == "help":
        await say(respond, help_text(ctx))
        return
    origin = await ctx.origin(client, body, user, place, inbound)
    if parsed.verb == "web":
        await say(respond, ctx.web.answer(origin.tenant, origin.user.key, admin=origin.is_admin) if ctx.web is not None
                  else "The web view is not switched on for this bot.")
        return
    if parsed.verb == "export":
        await run_export(ctx, parsed.args, origin, respond, client)
        return
    assert parsed.kind is not None
    if parsed.kind is CommandKind.ADD_AI and canonical(parsed.args["agent"]) not in ctx.service.agent_choices():
        choices = ", ".join(ctx.service.agent_choices()) or "none offered"
        await say(respond, f"Pick an AI player among: {choices}.")
        return
    await reply_to(respond, await ctx.service.handle(origin.command(parsed.kind, parsed.args)))


async def run_export(ctx: SlackContext, args: dict[str, Any], origin: intake.Origin, respond: AsyncRespond,
                     client: AsyncWebClient) -> None:
    if not origin.is_admin:
        # Refused here as well as in the core: a non-admin never reaches the file path.
        await say(respond, "Only workspace admins (or the configured admin list) can export game logs.")
        return
    if not ctx.first_export(f"{origin.tenant}:{origin.inbound_id}"):
        # A replay of a signed request within its 5 minutes: the same request, not a new export.
        await say(respond, "That export was already sent to you by DM.")
        return
    result = await ctx.service.export(origin.command(CommandKind.EXPORT), args["fmt"], args["game"], args["since"])
    if isinstance(result, Reply):
        await reply_to(respond, result)
        return
    filename, data = result
    # The file goes to the admin's DM, never the channel: logs hold every secret of a game.
    try:
        with delivery(f"export upload to {member_tag(origin.user.key)}"):
            opened = await client.conversations_open(users=origin.user.user_id)
            await client.files_upload_v2(
                channel=str(opened["channel"]["id"]),
                filename=filename,
                content=data,
                title=filename,
                initial_comment=f"Hushtable export: {filename} ({len(data)} bytes)",
            )
    except Exception:  # noqa: BLE001 - logged by delivery()
        await say(respond, "The export file could not be sent to you by DM.")
        return
    await say(respond, f"Export {filename} sent to you by DM.")

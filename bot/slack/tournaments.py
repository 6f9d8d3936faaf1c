"""Slack's `/hushtable tournament …` (workspace admins): create (a modal), schedule, run,
status, cancel, leaderboard.

A thin shell over `bot.tournaments.desk.TournamentDesk`, wrapped around the
`TournamentPort` the startup point hands the app. The listener matches only
`/hushtable tournament …` and is registered before the general `/hushtable` one (Bolt
runs the first listener that matches). It acks at once and answers the author
ephemerally through ``response_url``; the tenant is the workspace and the admin verdict
Slack's own (users.info) or the configured list, as for every command. The leaderboard
is posted to the channel with ``files_upload_v2`` (channel id, the chart as the file,
the table as its comment).
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
from bot.core.messages import Place, UserRef
from bot.ops.masking import member_tag
from bot.slack.blocks import escape
from bot.slack.commands import COMMAND
from bot.slack.context import PLATFORM, Ack, SlackContext, delivery
from bot.tournaments.desk import NOT_ADMIN, DeskReply, TournamentDesk
from bot.tournaments.port import BoardPoster, TournamentPort

log = logging.getLogger("hushtable.slack")

CREATE_VIEW = "tournament:create"
FIELDS = ("game", "variant", "entrants", "seats", "games", "schedule", "name")
USAGE = """*Tournaments* (workspace admins):
`/hushtable tournament create` a form · or `/hushtable tournament create <game> [variant] [entrants=a,b] \
[seats=N] [games=N] [duplicate=no] [spectate=yes] [schedule="0 3 * * *"] [name=…]`
`/hushtable tournament run <id>` · `status [id]` · `cancel <id>` · `leaderboard <id>` · `schedule <id> <crontab in UTC|off>`"""


class SlackBoardPoster:
    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None:
        with delivery(f"leaderboard upload to {place.channel}"):
            await self.client.files_upload_v2(channel=place.channel, file=png, filename=filename, title=filename,
                                              initial_comment=escape(text))


async def _is_tournament(body: dict[str, Any]) -> bool:
    words = str(body.get("text") or "").split()
    return bool(words) and words[0].lower() in ("tournament", "tournaments")


def register(app: AsyncApp, ctx: SlackContext, port: TournamentPort) -> None:
    """Add the tournament listeners (before the general /hushtable one) and attach the board poster."""
    poster = SlackBoardPoster(app.client)
    port.attach(PLATFORM, poster)
    desk = TournamentDesk(port)

    @app.command(COMMAND, matchers=[_is_tournament])
    async def on_tournament(ack: Ack, body: dict[str, Any], respond: AsyncRespond, client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            await run(ctx, desk, poster, body, respond, client)

    @app.view(CREATE_VIEW)
    async def on_create(ack: Ack, body: dict[str, Any], view: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        async with ctx.inflight.track():
            await submitted(ctx, desk, body, view, client)


async def run(ctx: SlackContext, desk: TournamentDesk, poster: BoardPoster, body: dict[str, Any],
              respond: AsyncRespond, client: AsyncWebClient) -> None:
    user = UserRef(PLATFORM, str(body["user_id"]), str(body.get("user_name") or ""))
    place = Place(PLATFORM, str(body["channel_id"]))
    try:
        words = _words(str(body.get("text") or ""))[1:]
    except intake.IntakeError as e:
        await _say(respond, str(e))
        return
    verb, rest = (words[0].lower(), words[1:]) if words else ("help", [])
    origin = await ctx.origin(client, body, user, place, None)
    if verb == "help":
        await _say(respond, USAGE)
        return
    if verb == "create" and not rest:
        if not desk.is_admin(origin):
            await _say(respond, NOT_ADMIN)
            return
        await _open_form(desk, client, str(body.get("trigger_id") or ""), place)
        return
    try:
        r = await _dispatch(desk, origin, verb, rest)
    except intake.IntakeError as e:
        r = DeskReply(f"{e}\n{USAGE}", ok=False)
    if r.board is not None:
        try:
            await poster.post_board(place, r.board.text, r.board.png, r.board.filename)
            r = DeskReply("Leaderboard posted.")
        except Exception:  # noqa: BLE001 - logged by delivery()
            r = DeskReply("The leaderboard could not be posted here (is the app in this channel?).", ok=False)
    await _say(respond, r.text)


_WORD = re.compile(r"""(?:[^\s"']+|"[^"]*"|'[^']*')+""")
MAX_ID = 2**62


def _words(text: str) -> list[str]:
    """Words split at spaces only, quotes kept (``entrants=a,b`` stays one word, as the usage shows)."""
    intake.tokens(text)  # the shared check: unbalanced quotes are refused with its sentence
    return _WORD.findall(text)


def _id(words: list[str]) -> int:
    if not words:
        raise intake.IntakeError("Which tournament? Give its number.")
    word = intake.unquote(words[0]).lstrip("#")
    if not (word.isascii() and word.isdigit()) or len(word) > 19 or not 0 < int(word) < MAX_ID:
        raise intake.IntakeError(f"A tournament is its number (see `status`), not `{words[0][:20]}`.")
    return int(word)


async def _dispatch(desk: TournamentDesk, origin: intake.Origin, verb: str, rest: list[str]) -> DeskReply:
    if verb == "run":
        return await desk.run(origin, _id(rest))
    if verb == "status":
        return await desk.status(origin, _id(rest) if rest else None)
    if verb == "cancel":
        return await desk.cancel(origin, _id(rest))
    if verb in ("leaderboard", "board"):
        return await desk.leaderboard(origin, _id(rest))
    if verb == "schedule":
        return await desk.schedule(origin, _id(rest), " ".join(intake.unquote(w) for w in rest[1:]))
    if verb == "create":
        return await desk.create(origin, **_create_args(rest))
    raise intake.IntakeError(f"Unknown tournament command `{verb[:20]}`.")


def _create_args(words: list[str]) -> dict[str, Any]:
    """``<game> [variant] [key=value …]`` → the desk's create arguments (checked there)."""
    args: dict[str, Any] = {"game": intake.unquote(words[0]).lower()}
    listing = False  # after `entrants=a,` a bare `b` continues the list
    for w in words[1:]:
        key, sep, value = w.partition("=")
        value = intake.unquote(value)
        if not sep and listing:
            args["entrants"] += [e.strip() for e in intake.unquote(w).split(",") if e.strip()]
            listing = intake.unquote(w).endswith(",")
            continue
        listing = False
        if not sep:
            args["variant"] = intake.unquote(w).lower()
        elif key in ("entrants", "players"):
            args["entrants"] = [e.strip() for e in value.split(",") if e.strip()]
            listing = value.endswith(",")
        elif key in ("seats", "games"):
            args[key] = _whole(key, value)
        elif key in ("duplicate", "spectate"):
            args[key] = value.lower() not in ("no", "off", "false", "0")
        elif key in ("schedule", "name"):
            args[key] = value[:80]
        else:
            raise intake.IntakeError(f"Unknown tournament option `{key[:20]}`.")
    return args


def _whole(key: str, value: str) -> int:
    """A count typed in chat: ASCII digits only, at most nine of them (the desk checks the bounds)."""
    text = value.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 9:
        raise intake.IntakeError(f"{key} is a whole number below a billion, not `{value[:20]}`.")
    return int(text)


async def _open_form(desk: TournamentDesk, client: AsyncWebClient, trigger_id: str, place: Place) -> None:
    games = ", ".join(sorted(desk.game_choices()))
    entrants = ", ".join(desk.entrant_choices())
    hints = {"game": f"One of: {games}", "variant": "Optional (default: the game's first)",
             "entrants": f"Comma-separated, among: {entrants} (empty: all)", "seats": "Optional",
             "games": "Repetitions of each pairing (default 1)", "schedule": "Optional crontab in UTC, e.g. 0 3 * * *",
             "name": "Optional"}
    blocks = [
        {"type": "input", "block_id": f"f{i}", "optional": name != "game",
         "label": {"type": "plain_text", "text": name.capitalize()},
         "hint": {"type": "plain_text", "text": hints[name][:150]},
         "element": {"type": "plain_text_input", "action_id": "text", "max_length": 150}}
        for i, name in enumerate(FIELDS)
    ]
    view = {"type": "modal", "callback_id": CREATE_VIEW, "title": {"type": "plain_text", "text": "New tournament"},
            "submit": {"type": "plain_text", "text": "Create"}, "close": {"type": "plain_text", "text": "Cancel"},
            "private_metadata": json.dumps({"channel": place.channel}), "blocks": blocks}
    with delivery("tournament form"):
        await client.views_open(trigger_id=trigger_id, view=view)


async def submitted(ctx: SlackContext, desk: TournamentDesk, body: dict[str, Any], view: dict[str, Any],
                    client: AsyncWebClient) -> None:
    state = (view.get("state") or {}).get("values") or {}
    values = {name: str(((state.get(f"f{i}") or {}).get("text") or {}).get("value") or "").strip()
              for i, name in enumerate(FIELDS)}
    channel = str(json.loads(view.get("private_metadata") or "{}").get("channel") or "")
    user_id = str((body.get("user") or {}).get("id") or "")
    user = UserRef(PLATFORM, user_id, str((body.get("user") or {}).get("name") or ""))
    place = Place(PLATFORM, channel)
    origin = await ctx.origin(client, body, user, place, None)
    try:
        args: dict[str, Any] = {"game": values["game"].lower(), "variant": values["variant"].lower() or None,
                                "entrants": [e.strip() for e in values["entrants"].split(",") if e.strip()] or None,
                                "schedule": values["schedule"] or None, "name": values["name"][:80]}
        for key in ("seats", "games"):
            if values[key]:
                args[key] = _whole(key, values[key])
        r = await desk.create(origin, **args)
    except intake.IntakeError as exc:
        r = DeskReply(str(exc), ok=False)
    with delivery(f"tournament answer to {member_tag(user_id)}"):
        await client.chat_postEphemeral(channel=channel, user=user_id, text=escape(r.text))


async def _say(respond: AsyncRespond, text: str) -> None:
    try:
        with delivery("tournament answer through response_url"):
            await respond(text=escape(text), response_type="ephemeral")
    except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
        pass

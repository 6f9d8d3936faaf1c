"""Hushtable's slash commands (app_commands): each one builds a `Command` for the TableService.

/play opens a lobby; /join, /leave, /ai, /start, /abort, /deadline act on the lobby in this
channel (or the one named by ``game_id``); /ai offers only the operator's agent choices
(autocomplete, and typed text is checked); /rules, /status, /tables and /show answer the caller
only; /export (Manage Server, or a configured admin role id) attaches the export file
to an ephemeral reply. Choices for games, variants and agents come from the service.
"""

from __future__ import annotations

import logging
from typing import Any

import discord
from discord import app_commands

from bot.core import intake
from bot.core.messages import CommandKind
from bot.discord.router import Router


def _game_arg(game_id: int | None) -> dict[str, Any]:
    return {"game_id": game_id} if game_id is not None else {}


def register(tree: app_commands.CommandTree, router: Router) -> None:
    """Add every Hushtable command to ``tree`` (called once from the bot's setup_hook)."""
    service = router.service
    games = dict(service.game_choices())
    game_choices = [app_commands.Choice(name=g, value=g) for g in sorted(games)][:25]

    async def variant_complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        game = getattr(interaction.namespace, "game", None)
        variants = games.get(game, ()) if game else tuple(v for vs in games.values() for v in vs)
        return [app_commands.Choice(name=v, value=v) for v in dict.fromkeys(variants) if current.lower() in v.lower()][:25]

    async def agent_complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=a, value=a) for a in service.agent_choices() if current.lower() in a.lower()][:25]

    @tree.command(name="play", description="Open a lobby for a game in this channel")
    @app_commands.describe(game="Which game", variant="Rules variant", options="Extra options, e.g. rounds=3 tie=runoff",
                           deadline="Seconds each human has per turn (0 = no limit)")
    @app_commands.choices(game=game_choices)
    @app_commands.autocomplete(variant=variant_complete)
    @app_commands.guild_only()
    async def play(interaction: discord.Interaction, game: app_commands.Choice[str], variant: str | None = None,
                   options: str | None = None, deadline: app_commands.Range[int, 0, 604800] | None = None) -> None:
        try:
            parsed = intake.parse_options(options)
        except intake.IntakeError as e:
            await router.say(interaction, str(e))
            return
        args: dict[str, Any] = {"game": game.value, "variant": variant, "options": parsed}
        if deadline is not None:
            args["deadline_s"] = deadline
        await router.run(interaction, router.command(interaction, CommandKind.CREATE, args))

    def simple(name: str, kind: CommandKind, description: str) -> None:
        @tree.command(name=name, description=description)
        @app_commands.describe(game_id="The table's number (default: the lobby in this channel)")
        @app_commands.guild_only()
        async def cmd(interaction: discord.Interaction, game_id: int | None = None) -> None:
            await router.run(interaction, router.command(interaction, kind, _game_arg(game_id)))

    simple("join", CommandKind.JOIN, "Take a seat at the lobby")
    simple("leave", CommandKind.LEAVE, "Leave the lobby")
    simple("start", CommandKind.START, "Deal the secrets and start the game")
    simple("abort", CommandKind.ABORT, "Abort the lobby or game")
    simple("status", CommandKind.STATUS, "Where the table stands")

    @tree.command(name="show", description="Show me my secret and my open prompt (only to me)")
    @app_commands.describe(game_id="The game's number (in its thread's name)")
    async def show(interaction: discord.Interaction, game_id: int) -> None:
        await router.run(interaction, router.command(interaction, CommandKind.SHOW, {"game_id": game_id}))

    @tree.command(name="tables", description="Open lobbies")
    async def tables(interaction: discord.Interaction) -> None:
        await router.run(interaction, router.command(interaction, CommandKind.LIST))

    @tree.command(name="ai", description="Add AI seats to the lobby")
    @app_commands.describe(agent="Which AI player (one of the operator's choices)", count="How many seats")
    @app_commands.autocomplete(agent=agent_complete)
    @app_commands.guild_only()
    async def ai(interaction: discord.Interaction, agent: str | None = None,
                 count: app_commands.Range[int, 1, 8] = 1, game_id: int | None = None) -> None:
        await router.add_ai(interaction, agent, count, game_id)

    @tree.command(name="removeai", description="Remove an AI seat from the lobby")
    @app_commands.describe(agent="Which AI player (default: the last one added)")
    @app_commands.autocomplete(agent=agent_complete)
    @app_commands.guild_only()
    async def removeai(interaction: discord.Interaction, agent: str | None = None, game_id: int | None = None) -> None:
        args = {**({"agent": agent} if agent else {}), **_game_arg(game_id)}
        await router.run(interaction, router.command(interaction, CommandKind.REMOVE_AI, args))

    @tree.command(name="deadline", description="Seconds each human has per turn (0 = no limit)")
    @app_commands.guild_only()
    async def deadline(interaction: discord.Interaction, seconds: app_commands.Range[int, 0, 604800],
                       game_id: int | None = None) -> None:
        await router.run(interaction, router.command(interaction, CommandKind.SET_DEADLINE,
                                                     {"seconds": seconds, **_game_arg(game_id)}))

    @tree.command(name="rules", description="How a game is played")
    @app_commands.choices(game=game_choices)
    @app_commands.autocomplete(variant=variant_complete)
    async def rules(interaction: discord.Interaction, game: app_commands.Choice[str] | None = None,
                    variant: str | None = None) -> None:
        args = {"game": game.value if game else None, "variant": variant}
        await router.run(interaction, router.command(interaction, CommandKind.RULES, args))

    @tree.command(name="export", description="Export game logs (admins)")
    @app_commands.describe(format="File format", game="Only this game", since="Only games since (YYYY-MM-DD)")
    @app_commands.choices(format=[app_commands.Choice(name="JSONL", value="jsonl"), app_commands.Choice(name="CSV", value="csv")],
                          game=game_choices)
    @app_commands.default_permissions(manage_guild=True)  # hidden from members by default; re-checked below
    @app_commands.guild_only()
    async def export(interaction: discord.Interaction, format: app_commands.Choice[str],
                     game: app_commands.Choice[str] | None = None, since: str | None = None) -> None:
        await router.export(interaction, format.value, game.value if game else None, since)

    @tree.error
    async def on_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        if isinstance(error, (app_commands.CheckFailure, app_commands.TransformerError)):
            await router.say(interaction, str(error) or "You cannot do that here.")
            return
        logging.getLogger("hushtable.discord").error("slash command failed", exc_info=error)
        await router.say(interaction, "Something went wrong on our side.")

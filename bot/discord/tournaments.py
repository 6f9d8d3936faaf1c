"""Discord's `/tournament create|schedule|run|status|cancel|leaderboard` (server admins).

A thin shell over `bot.tournaments.desk.TournamentDesk`, wrapped around the
`TournamentPort` the startup point hands the bot: each handler builds the
interaction's `intake.Origin` (tenant = the guild, admin = Discord's own verdict for that
guild or a configured admin role id, through the router), calls the desk and answers the
author ephemerally. Games and entrants are offered by autocomplete from the configured
choices only. The leaderboard is posted to the channel as an embed whose image is the
attached chart (`discord.File` + `attachment://<name>`, the same name in both).
"""

from __future__ import annotations

import io

import discord
from discord import app_commands

from bot.core.messages import Place, Reply
from bot.discord.platform import delivery
from bot.discord.router import Router
from bot.discord.views import NO_MENTIONS
from bot.tournaments.desk import DeskReply
from bot.tournaments.desk import TournamentDesk as Desk
from bot.tournaments.port import TournamentPort

EMBED_LIMIT = 4000


class DiscordBoardPoster:
    """Posts a leaderboard with its chart to a channel or thread."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None:
        head, _, table = text.partition("\n")
        embed = discord.Embed(title=discord.utils.escape_markdown(head)[:256], description=table[:EMBED_LIMIT])
        embed.set_image(url=f"attachment://{filename}")
        channel = self.client.get_partial_messageable(int(place.thread or place.channel))
        with delivery(f"leaderboard to {place.key}"):
            await channel.send(embed=embed, file=discord.File(io.BytesIO(png), filename=filename),
                               allowed_mentions=NO_MENTIONS)


def register(tree: app_commands.CommandTree, router: Router, port: TournamentPort) -> None:
    """Add the /tournament group (called from the bot's setup_hook) and attach the board poster."""
    poster = DiscordBoardPoster(router.platform.client)
    port.attach(router.platform.name, poster)
    desk = Desk(port)
    games = dict(desk.game_choices())
    group = app_commands.Group(name="tournament", description="AI tournaments and leaderboards (server admins)",
                               guild_only=True, default_permissions=discord.Permissions(manage_guild=True))

    async def answer(interaction: discord.Interaction, r: DeskReply) -> None:
        await router.show(interaction, Reply(r.text, ok=r.ok))

    async def variant_complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        game = getattr(interaction.namespace, "game", None)
        variants = games.get(game, ()) if game else tuple(v for vs in games.values() for v in vs)
        return [app_commands.Choice(name=v, value=v) for v in dict.fromkeys(variants) if current.lower() in v.lower()][:25]

    async def entrants_complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        # A comma-separated list: complete its last item among the configured entrants.
        done, _, last = current.rpartition(",")
        chosen = [x.strip() for x in done.split(",") if x.strip()]
        prefix = ", ".join(chosen) + (", " if chosen else "")
        return [app_commands.Choice(name=(prefix + a)[:100], value=(prefix + a)[:100]) for a in desk.entrant_choices()
                if a not in chosen and last.strip().lower() in a.lower()][:25]

    @group.command(name="create", description="Plan a tournament between configured AI players")
    @app_commands.describe(game="Which game", variant="Rules variant", entrants="Comma-separated AI players (default: all)",
                           seats="Seats per game", games="Repetitions of each pairing", duplicate="Replay each deal "
                           "with the players swapped (default on)", name="A name", schedule="Crontab in UTC, e.g. 0 3 * * *",
                           spectate="Post every game here as a spectated table")
    @app_commands.choices(game=[app_commands.Choice(name=g, value=g) for g in sorted(games)][:25])
    @app_commands.autocomplete(variant=variant_complete, entrants=entrants_complete)
    async def create(interaction: discord.Interaction, game: app_commands.Choice[str], variant: str | None = None,
                     entrants: str | None = None, seats: app_commands.Range[int, 3, 12] | None = None,
                     games: app_commands.Range[int, 1, 50] = 1, duplicate: bool = True, name: str | None = None,
                     schedule: str | None = None, spectate: bool = False) -> None:
        await router.defer(interaction)
        picked = [e.strip() for e in (entrants or "").split(",") if e.strip()] or None
        r = await desk.create(router.origin(interaction), game=game.value, variant=variant, entrants=picked,
                              seats=seats, games=games, duplicate=duplicate, name=(name or "")[:80],
                              schedule=schedule, spectate=spectate)
        await answer(interaction, r)

    @group.command(name="schedule", description="Run a tournament on a schedule ('off' to stop)")
    @app_commands.describe(tournament="The tournament's number", cron="Crontab in UTC, e.g. 0 3 * * *, or off")
    async def schedule(interaction: discord.Interaction, tournament: int, cron: str) -> None:
        await router.defer(interaction)
        await answer(interaction, await desk.schedule(router.origin(interaction), tournament, cron))

    @group.command(name="run", description="Play a tournament now")
    async def run(interaction: discord.Interaction, tournament: int) -> None:
        await router.defer(interaction)
        await answer(interaction, await desk.run(router.origin(interaction), tournament))

    @group.command(name="status", description="How a tournament stands (or this server's tournaments)")
    async def status(interaction: discord.Interaction, tournament: int | None = None) -> None:
        await router.defer(interaction)
        await answer(interaction, await desk.status(router.origin(interaction), tournament))

    @group.command(name="cancel", description="Stop a tournament: no new games start")
    async def cancel(interaction: discord.Interaction, tournament: int) -> None:
        await router.defer(interaction)
        await answer(interaction, await desk.cancel(router.origin(interaction), tournament))

    @group.command(name="leaderboard", description="Post a tournament's leaderboard and chart here")
    async def leaderboard(interaction: discord.Interaction, tournament: int) -> None:
        await router.defer(interaction)
        origin = router.origin(interaction)
        r = await desk.leaderboard(origin, tournament)
        if r.board is None:
            await answer(interaction, r)
            return
        await poster.post_board(origin.place, r.board.text, r.board.png, r.board.filename)
        await answer(interaction, DeskReply("Leaderboard posted."))

    tree.add_command(group)

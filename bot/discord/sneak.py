"""Discord's `/sneak` and `/judge`: a member's SNEAK averages, and the SNEAK human study.

`/sneak` is read-only: the SNEAK service (bot/sneak.py), handed to the bot as its port, reads the
stored evaluations of the guild's finished games and names no other person. `/judge` (Discord's
form of `/hushtable judge`) shows the member one SNEAK item, and `/judge answer:N` records their
answer and shows their running score and the next item (models/eval/study.py). Both are
answered to the member alone. `/judge` items come only from games in channels the member can
read (their permissions from the guild's roles and the channels' overwrites, in discord.py's
cache: no extra request); a direct message gets benchmark items only.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.core.messages import Reply
from bot.core.ports import SneakPort
from bot.discord.router import Router, tenant_of, user_of

OFF = "SNEAK scoring is not running on this bot."
JUDGE = "/judge answer:N"  # how a member answers an item here


def readable(guild: discord.Guild | None, member: object) -> frozenset[str]:
    """The ids of the guild's channels ``member`` may read (a game's thread follows its channel)."""
    if guild is None or not isinstance(member, discord.Member):
        return frozenset()
    return frozenset(str(c.id) for c in guild.channels
                     if not isinstance(c, discord.CategoryChannel) and c.permissions_for(member).read_messages)


def register(tree: app_commands.CommandTree, router: Router, service: SneakPort | None) -> None:
    """Add /sneak and /judge (called from the bot's setup_hook); ``service`` None: SNEAK does not run."""

    @tree.command(name="sneak", description="My SNEAK clue scores (utility, leakage) against the AI players")
    async def sneak(interaction: discord.Interaction) -> None:
        await router.defer(interaction)
        if service is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        tenant = tenant_of(interaction.guild_id)
        text = await service.averages(user_of(interaction.user).key, None if tenant.endswith(":dm") else tenant)
        await router.show(interaction, Reply(text))

    @tree.command(name="judge", description="The SNEAK human study: which message, which secret? (only to me)")
    @app_commands.describe(answer="Your answer to the item shown: its option number")
    async def judge(interaction: discord.Interaction, answer: int | None = None) -> None:
        await router.defer(interaction)
        if service is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        tenant = tenant_of(interaction.guild_id)
        text = await service.judge(user_of(interaction.user).key, None if tenant.endswith(":dm") else tenant,
                                   None if answer is None else str(answer),
                                   channels=readable(interaction.guild, interaction.user), command=JUDGE)
        await router.show(interaction, Reply(text))

"""Discord's `/sneak`: the author's own SNEAK averages against the AI agents they played with.

Read-only and answered to the author alone: it reads the stored evaluations of the guild's
finished games (bot/sneak.py, models/eval/report.py) and names no other person.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.core.messages import Reply
from bot.discord.router import Router, tenant_of, user_of
from bot.sneak import averages_for


def register(tree: app_commands.CommandTree, router: Router) -> None:
    """Add /sneak (called from the bot's setup_hook)."""

    @tree.command(name="sneak", description="My SNEAK clue scores (utility, leakage) against the AI players")
    async def sneak(interaction: discord.Interaction) -> None:
        await router.defer(interaction)
        tenant = tenant_of(interaction.guild_id)
        text = await averages_for(router.service, user_of(interaction.user).key,
                                  None if tenant.endswith(":dm") else tenant)
        await router.show(interaction, Reply(text))

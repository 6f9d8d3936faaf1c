"""Discord's `/sneak`: the author's own SNEAK averages against the AI agents they played with.

Read-only and answered to the author alone: the SNEAK service (bot/sneak.py), reached through the
port, reads the stored evaluations of the guild's finished games and names no other person.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.core.messages import Reply
from bot.discord.router import Router, tenant_of, user_of

OFF = "SNEAK scoring is not running on this bot."


def register(tree: app_commands.CommandTree, router: Router) -> None:
    """Add /sneak (called from the bot's setup_hook)."""

    @tree.command(name="sneak", description="My SNEAK clue scores (utility, leakage) against the AI players")
    async def sneak(interaction: discord.Interaction) -> None:
        await router.defer(interaction)
        service = router.service.sneak
        if service is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        tenant = tenant_of(interaction.guild_id)
        text = await service.averages(user_of(interaction.user).key, None if tenant.endswith(":dm") else tenant)
        await router.show(interaction, Reply(text))

"""Discord's `/web` (Discord's form of `/hushtable web`): a signed link to the web view of the server's
finished games, the member's own marked, shown to the member alone; an admin's link covers the study too.
"""

from __future__ import annotations

import discord
from discord import app_commands

from bot.core.ports import WebLinkPort
from bot.discord.router import Router
from bot.discord.views import NO_MENTIONS

OFF = "The web view is not switched on for this bot."


def register(tree: app_commands.CommandTree, router: Router, web: WebLinkPort | None) -> None:
    """Add `/web` (called from the bot's setup_hook); ``web`` None: it says the site is off."""

    @tree.command(name="web", description="A link to this server's finished games in the web view (only to you)")
    @app_commands.guild_only()
    async def web_link(interaction: discord.Interaction) -> None:
        if web is None:
            await router.say(interaction, OFF)
            return
        origin = router.origin(interaction, inbound=False)
        # Sent as it is, not escaped like player text: the line is the bot's own and a link's token holds
        # `_` and `-`, which the escaping would turn into a link that no longer opens.
        await router.send(interaction, content=web.answer(origin.tenant, origin.user.key, admin=origin.is_admin),
                          ephemeral=True, allowed_mentions=NO_MENTIONS)

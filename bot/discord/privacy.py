"""Discord's `/privacy`, `/research`, `/mydata`, `/forget-me` and `/audit` (Discord's forms of
`/hushtable privacy` and the rest), answered to the member alone from the privacy desk
(``bot.core.privacy.PrivacyDesk``, handed to the bot as its port).

`/privacy` shows the notice with two buttons, "Research: on" and "Research: off" (the member's
research choice, as `/research on|off` records it). `/mydata` attaches the member's JSON file to an ephemeral reply (nobody else sees it).
`/forget-me` says what it does and shows an "Erase me" button; only a press by the same member
erases (a view of this process: after a restart the member runs `/forget-me` again; the research
buttons likewise). `/audit` is
for the guild's admins, as `/export` is.
"""

from __future__ import annotations

import io

import discord
from discord import app_commands

from bot.core.messages import Reply
from bot.core.ports import PrivacyPort
from bot.discord.router import Router, user_of
from bot.discord.views import NO_MENTIONS

OFF = "Privacy commands are not running on this bot."
CONFIRM_ID = "privacy:forget-me"
RESEARCH_ON_ID, RESEARCH_OFF_ID = "privacy:research-on", "privacy:research-off"


class ResearchView(discord.ui.View):
    """The notice's two buttons, "Research: on" and "Research: off": each records the choice of the
    member who asked, and answers anyone else that it is not theirs to make."""

    def __init__(self, desk: PrivacyPort, router: Router, user_id: int) -> None:
        super().__init__(timeout=600)
        self.desk, self.router, self.user_id = desk, router, user_id

    async def _choose(self, interaction: discord.Interaction, word: str) -> None:
        if interaction.user.id != self.user_id:
            await self.router.say(interaction, "Only the member who asked can change their research choice.")
            return
        await self.router.defer(interaction)
        await self.router.show(interaction, Reply(await self.desk.research(user_of(interaction.user).key, word)))

    @discord.ui.button(label="Research: on", style=discord.ButtonStyle.primary, custom_id=RESEARCH_ON_ID)
    async def on(self, interaction: discord.Interaction, _button: discord.ui.Button[ResearchView]) -> None:
        await self._choose(interaction, "on")

    @discord.ui.button(label="Research: off", style=discord.ButtonStyle.secondary, custom_id=RESEARCH_OFF_ID)
    async def off(self, interaction: discord.Interaction, _button: discord.ui.Button[ResearchView]) -> None:
        await self._choose(interaction, "off")


class ForgetView(discord.ui.View):
    """The one button that confirms an erasure; answers only the member who asked."""

    def __init__(self, desk: PrivacyPort, router: Router, user_id: int) -> None:
        super().__init__(timeout=600)
        self.desk, self.router, self.user_id = desk, router, user_id

    @discord.ui.button(label="Erase me", style=discord.ButtonStyle.danger, custom_id=CONFIRM_ID)
    async def confirm(self, interaction: discord.Interaction, _button: discord.ui.Button[ForgetView]) -> None:
        if interaction.user.id != self.user_id:
            await self.router.say(interaction, "Only the member who asked can confirm their erasure.")
            return
        await self.router.defer(interaction)
        text = await self.desk.forget_me(user_of(interaction.user).key, confirmed=True)
        self.stop()
        await self.router.show(interaction, Reply(text))


def register(tree: app_commands.CommandTree, router: Router, desk: PrivacyPort | None) -> None:
    """Add the five commands (called from the bot's setup_hook); ``desk`` None: they say they are off."""

    @tree.command(name="privacy", description="What Hushtable stores about you, for how long, and your rights")
    async def privacy(interaction: discord.Interaction) -> None:
        if desk is None:
            await router.show(interaction, Reply(OFF))
            return
        await router.send(interaction, content=desk.privacy_text(), ephemeral=True,
                          view=ResearchView(desk, router, interaction.user.id), allowed_mentions=NO_MENTIONS)

    @tree.command(name="research", description="Whether your words may go into research exports")
    @app_commands.choices(choice=[app_commands.Choice(name="on", value="on"), app_commands.Choice(name="off", value="off")])
    async def research(interaction: discord.Interaction, choice: app_commands.Choice[str] | None = None) -> None:
        await router.defer(interaction)
        if desk is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        await router.show(interaction, Reply(await desk.research(user_of(interaction.user).key,
                                                                 choice.value if choice else None)))

    @tree.command(name="mydata", description="Everything Hushtable stores about you, as a file (only to you)")
    async def mydata(interaction: discord.Interaction) -> None:
        await router.defer(interaction)
        if desk is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        name, data = await desk.mydata(user_of(interaction.user).key)
        await router.send(interaction, content=f"Everything stored about you ({len(data)} bytes).", ephemeral=True,
                          file=discord.File(io.BytesIO(data), filename=name), allowed_mentions=NO_MENTIONS)

    @tree.command(name="forget-me", description="Erase yourself from Hushtable (asks you to confirm)")
    async def forget_me(interaction: discord.Interaction) -> None:
        if desk is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        text = await desk.forget_me(user_of(interaction.user).key, confirmed=False)
        await router.send(interaction, content=text, ephemeral=True, view=ForgetView(desk, router, interaction.user.id),
                          allowed_mentions=NO_MENTIONS)

    @tree.command(name="audit", description="Exports, data requests and erasures (admins)")
    @app_commands.default_permissions(manage_guild=True)  # hidden from members by default; re-checked below
    @app_commands.guild_only()
    async def audit(interaction: discord.Interaction) -> None:
        await router.defer(interaction)
        if desk is None:
            await router.show(interaction, Reply(OFF, ok=False))
            return
        await router.show(interaction, Reply(await desk.audit_text(is_admin=router.is_admin(interaction))))

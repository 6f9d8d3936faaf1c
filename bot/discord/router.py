"""Inbound Discord: interactions and DM replies become core `Command`s; the `Reply` goes back
to the author only (ephemerally).

Every slash command, button click, select, modal submission and DM reply becomes one
`Command` for `TableService.handle`, built through `bot.core.intake` like on every other
platform. Each command carries its tenant (``discord:<guild id>``; ``discord:dm`` for clicks
in a DM, which the service resolves through the member's seat) and the platform's admin
verdict for that guild: Manage Server there, or one of the configured admin role *ids*
(a role's name proves nothing: anyone can name a role). An interaction handler never lets
an exception escape into discord.py: the bot keeps running.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Collection, Mapping
from typing import Any

import discord

from bot.core import codec, intake
from bot.core.messages import Command, CommandKind, Outgoing, Place, Reply, UserRef
from bot.core.ports import ServicePort
from bot.discord.platform import PLATFORM, DiscordPlatform, delivery
from bot.discord.views import NO_MENTIONS, FormModal, modal_values
from bot.ops.masking import member_tag
from models.agent_names import canonical

log = logging.getLogger("hushtable.discord")

DM_TENANT = intake.dm_tenant(PLATFORM)


def user_of(who: discord.abc.User) -> UserRef:
    return UserRef(PLATFORM, str(who.id), getattr(who, "display_name", None) or who.name)


def place_of(channel: Any, channel_id: int | None) -> Place:
    if isinstance(channel, discord.Thread):
        return Place(PLATFORM, str(channel.parent_id), str(channel.id))
    return Place(PLATFORM, str(channel_id if channel_id is not None else getattr(channel, "id", "")))


def tenant_of(guild_id: int | None) -> str:
    return f"{PLATFORM}:{guild_id}" if guild_id else DM_TENANT


class Router:
    """Turns interactions into Commands, calls the service, shows the Reply ephemerally."""

    def __init__(self, service: ServicePort, platform: DiscordPlatform, *, default_agent: str,
                 admin_role_ids: Collection[int] = ()) -> None:
        self.service = service
        self.platform = platform
        self.configured_agent = default_agent
        self.admin_role_ids = frozenset(int(r) for r in admin_role_ids)

    # ---- helpers

    def is_admin(self, interaction: discord.Interaction) -> bool:
        """Discord's own verdict for the guild the interaction comes from (none in a DM)."""
        user = interaction.user
        if interaction.guild_id is None or not isinstance(user, discord.Member):
            return False
        # The member's permissions as Discord computed them for this interaction, in this guild.
        if interaction.permissions.manage_guild or interaction.permissions.administrator:
            return True
        return any(r.id in self.admin_role_ids for r in user.roles)

    def origin(self, interaction: discord.Interaction, inbound: bool = True) -> intake.Origin:
        return intake.Origin(
            user=user_of(interaction.user),
            place=place_of(interaction.channel, interaction.channel_id),
            tenant=tenant_of(interaction.guild_id),
            is_admin=self.is_admin(interaction),
            inbound_id=str(interaction.id) if inbound else None,
        )

    def command(self, interaction: discord.Interaction, kind: CommandKind, args: Mapping[str, Any] | None = None,
                inbound: bool = True) -> Command:
        return self.origin(interaction, inbound).command(kind, dict(args or {}))

    def default_agent(self) -> str:
        return intake.default_agent(self.service.agent_choices(), self.configured_agent)

    async def defer(self, interaction: discord.Interaction) -> None:
        if not interaction.response.is_done():
            await interaction.response.defer(ephemeral=True, thinking=True)

    async def show(self, interaction: discord.Interaction, reply: Reply) -> None:
        """The Reply, to the author only. Never raises."""
        text = reply.text or ("Already done." if reply.duplicate else ("Done." if reply.ok else "That did not work."))
        m = reply.outgoing
        if m is not None:
            parts = self.platform.messages(m, lead=text if text and text != m.text else "")
        else:
            parts = self.platform.messages(Outgoing(text))
        for kw in parts:
            await self.send(interaction, ephemeral=True, **kw)

    async def say(self, interaction: discord.Interaction, text: str) -> None:
        """A short ephemeral line of the adapter's own (escaped like everything else)."""
        await self.show(interaction, Reply(text, ok=False))

    async def send(self, interaction: discord.Interaction, **kw: Any) -> None:
        try:
            with delivery(f"answer to interaction {interaction.id}"):
                if interaction.response.is_done():
                    await interaction.followup.send(**kw)
                else:
                    await interaction.response.send_message(**kw)
        except Exception:  # noqa: BLE001 - logged by delivery(); the author simply gets no answer
            pass

    async def run(self, interaction: discord.Interaction, cmd: Command) -> None:
        """Defer (the service may take longer than Discord's 3 seconds), handle, show the reply."""
        try:
            await self.defer(interaction)
            reply = await self.service.handle(cmd)
        except Exception:
            log.exception("command %s failed", cmd.kind.value)
            reply = Reply.error("Something went wrong on our side; the table is unchanged or already saved.")
        await self.show(interaction, reply)

    # ---- components

    async def on_button(self, interaction: discord.Interaction, custom_id: str) -> None:
        try:
            d = codec.decode(custom_id)
        except codec.BadId:
            await self.say(interaction, "This button is not ours any more.")
            return
        cmd = intake.command_for(d, self.origin(interaction), agent=self.default_agent())
        if cmd is None:
            await self.open_form(interaction, custom_id, d)
        else:
            await self.run(interaction, cmd)

    async def open_form(self, interaction: discord.Interaction, custom_id: str, d: codec.Decoded) -> None:
        form = self.platform.forms.get(custom_id)
        if form is None:
            # After a restart: ask the service what this member may do now (a read; no inbound id).
            try:
                reply = await self.service.handle(self.command(interaction, CommandKind.SHOW, {"game_id": d.game_id},
                                                               inbound=False))
            except Exception:
                log.exception("could not look up the form %s", custom_id)
                reply = Reply.error("")
            m = reply.outgoing
            if m is not None and m.form is not None and m.form.id == custom_id:
                form = m.form
                self.platform.remember(m)
        if form is None:
            await self.say(interaction, "That prompt is closed: nothing to answer now.")
            return
        try:
            with delivery(f"modal {custom_id}"):
                await interaction.response.send_modal(FormModal(form))
        except Exception:  # noqa: BLE001 - logged by delivery()
            pass

    async def on_select(self, interaction: discord.Interaction, custom_id: str, values: list[str]) -> None:
        try:
            d = codec.decode(values[0]) if values else None
        except codec.BadId:
            d = None
        if d is None or d.scope is not codec.Scope.ACTION or d.option is None or not custom_id.startswith(values[0].rsplit(":", 1)[0]):
            await self.say(interaction, "That choice is not one of ours.")
            return
        cmd = intake.command_for(d, self.origin(interaction), agent=self.default_agent())
        assert cmd is not None
        await self.run(interaction, cmd)

    async def on_modal(self, interaction: discord.Interaction) -> None:
        data: Any = interaction.data or {}
        try:
            d = codec.decode(str(data.get("custom_id", "")))
        except codec.BadId:
            return  # not one of our forms
        if d.scope is not codec.Scope.ACTION or d.option is not None:
            return
        cmd = intake.command_for(d, self.origin(interaction), agent=self.default_agent(), values=modal_values(data))
        assert cmd is not None
        await self.run(interaction, cmd)

    async def on_dm(self, message: discord.Message) -> None:
        """A member's text in their DM with the bot answers their open text prompt, if any."""
        origin = intake.Origin(user_of(message.author), Place(PLATFORM, str(message.channel.id)), DM_TENANT,
                               inbound_id=str(message.id))
        cmd = origin.command(CommandKind.ACT, {"text": message.content})
        try:
            reply = await self.service.handle(cmd)
        except Exception:
            log.exception("DM reply from %s failed", member_tag(cmd.user.key))
            reply = Reply.error("Something went wrong on our side.")
        if reply.duplicate:
            return
        try:
            with delivery("answer to a DM"):
                for kw in self.platform.messages(reply.outgoing or Outgoing(reply.text or "Noted.")):
                    # A reply to the member's own message, so the answer sits under what it answers.
                    await message.reply(mention_author=False, **kw)
        except Exception:  # noqa: BLE001 - logged by delivery()
            pass

    # ---- slash commands with more than one step

    async def add_ai(self, interaction: discord.Interaction, agent: str | None, count: int,
                     game_id: int | None) -> None:
        """/ai: only an agent the operator offers (autocomplete shows them; typed text is checked)."""
        choices = list(self.service.agent_choices())
        if agent is not None and canonical(agent) not in choices:  # an old name reads as its new one
            await self.say(interaction, f"Pick an AI player from the list: {', '.join(choices) or 'none offered'}.")
            return
        args = {"agent": agent or self.default_agent(), "count": count}
        if game_id is not None:
            args["game_id"] = game_id
        await self.run(interaction, self.command(interaction, CommandKind.ADD_AI, args))

    async def export(self, interaction: discord.Interaction, fmt: str, game: str | None, since: str | None) -> None:
        """Run an export and attach the file to an ephemeral reply (or show the refusal)."""
        await self.defer(interaction)
        try:
            when = intake.parse_since(since)
        except intake.IntakeError as e:
            await self.say(interaction, str(e))
            return
        try:
            out = await self.service.export(self.command(interaction, CommandKind.EXPORT, {"export": fmt}),
                                            fmt, game=game, since=when)
        except Exception:
            log.exception("export failed")
            out = Reply.error("The export failed; see the bot's log.")
        if isinstance(out, Reply):
            await self.show(interaction, out)
            return
        name, data = out
        await self.send(interaction, content=f"Export ({fmt}, {len(data)} bytes).", ephemeral=True,
                        file=discord.File(io.BytesIO(data), filename=name), allowed_mentions=NO_MENTIONS)


"""The Discord adapter: turns Discord interactions and DMs into core `Command`s, and renders core
`Outgoing` messages as Discord messages, threads, DMs, modals and ephemeral replies.

It holds no game logic and no game state: every slash command, button click, select, modal
submission and DM reply becomes one `Command` for `TableService.handle`, whose `Reply` is shown
to the author only (ephemerally). Everything else the service says goes through
`DiscordPlatform` (post / dm / edit / open_thread).

Failure policy: a send that fails is logged and raised as `DeliveryFailed` to the service; an
interaction handler never lets an exception escape into discord.py (the bot keeps running).
Rate limits and transient HTTP errors are left to discord.py's own retry logic.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections import OrderedDict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

import discord
from discord.ext import commands

from bot.core import codec
from bot.core.messages import (
    Command,
    CommandKind,
    DeliveryFailed,
    Form,
    MessageRef,
    Outgoing,
    Place,
    Reply,
    UserRef,
)
from bot.discord.views import NO_MENTIONS, PERSISTENT_ITEMS, FormModal, content_of, modal_values, view_of

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger("hushtable.discord")

PLATFORM = "discord"
LOBBY_KINDS = {
    "join": CommandKind.JOIN,
    "leave": CommandKind.LEAVE,
    "ai": CommandKind.ADD_AI,
    "start": CommandKind.START,
    "abort": CommandKind.ABORT,
}
FORM_CACHE_SIZE = 10_000


class Service(Protocol):
    """The part of `bot.core.service.TableService` this adapter uses."""

    def attach(self, platform: Any) -> None: ...

    async def handle(self, cmd: Command) -> Reply: ...

    async def export(self, cmd: Command, fmt: str, game: str | None = None,
                     since: datetime | None = None) -> tuple[str, bytes] | Reply: ...

    def game_choices(self) -> Mapping[str, tuple[str, ...]]: ...

    def agent_choices(self) -> list[str]: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


# --------------------------------------------------------------------------- outbound


class DiscordPlatform:
    """`bot.core.platform.Platform` over a discord.py client. Channel ids are strings of snowflakes."""

    name = PLATFORM
    quiet_waiting, text_replies = False, True  # bot.core.platform.Platform

    def __init__(self, client: discord.Client) -> None:
        self.client = client
        # Forms by codec id, so a click on a form button opens the right modal without asking the
        # service; after a restart the router falls back to the service's SHOW view.
        self.forms: OrderedDict[str, Form] = OrderedDict()

    def remember(self, m: Outgoing | None) -> None:
        if m is not None and m.form is not None:
            self.forms[m.form.id] = m.form
            self.forms.move_to_end(m.form.id)
            while len(self.forms) > FORM_CACHE_SIZE:
                self.forms.popitem(last=False)

    def _kwargs(self, m: Outgoing) -> dict[str, Any]:
        self.remember(m)
        view = view_of(m)
        # Mentions are off for every message: player text can hold "@everyone" or role pings,
        # and the bot itself never needs to ping anyone.
        kw: dict[str, Any] = {"content": content_of(m), "allowed_mentions": NO_MENTIONS}
        if view is not None:
            kw["view"] = view
        return kw

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        channel_id = place.thread or place.channel
        try:
            msg = await self.client.get_partial_messageable(int(channel_id)).send(**self._kwargs(m))
        except discord.HTTPException as e:
            log.warning("post to channel %s failed: %s", channel_id, e)
            raise DeliveryFailed(str(e)) from e
        return MessageRef(PLATFORM, str(msg.channel.id), str(msg.id))

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        try:
            target = self.client.get_user(int(user.user_id)) or await self.client.fetch_user(int(user.user_id))
            channel = target.dm_channel or await target.create_dm()
            msg = await channel.send(**self._kwargs(m))
        except discord.Forbidden as e:
            # 50007: the member does not accept DMs from this server's members (or blocked the bot).
            log.info("DMs closed for %s: %s", user.key, e)
            raise DeliveryFailed(f"cannot DM {user.name or user.user_id}") from e
        except discord.HTTPException as e:
            log.warning("DM to %s failed: %s", user.key, e)
            raise DeliveryFailed(str(e)) from e
        return MessageRef(PLATFORM, str(msg.channel.id), str(msg.id))

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        kw = self._kwargs(m)
        kw.setdefault("view", None)  # an edit without controls removes the old ones
        try:
            await self.client.get_partial_messageable(int(ref.channel)).get_partial_message(int(ref.message_id)).edit(**kw)
        except discord.HTTPException as e:
            log.warning("edit of message %s failed: %s", ref.message_id, e)
            raise DeliveryFailed(str(e)) from e

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        if place.thread:
            return place
        name = (title or "game")[:100]
        try:
            # The cached channel knows its guild; a partial one cannot start threads.
            channel = self.client.get_channel(int(place.channel)) or await self.client.fetch_channel(int(place.channel))
            if not isinstance(channel, discord.TextChannel):
                return place  # no threads here (a DM, a forum we do not handle): play in place
            if anchor is not None and anchor.channel == place.channel:
                thread = await channel.get_partial_message(int(anchor.message_id)).create_thread(
                    name=name, auto_archive_duration=1440)
            else:
                thread = await channel.create_thread(name=name, type=discord.ChannelType.public_thread,
                                                     auto_archive_duration=1440)
        except discord.HTTPException as e:
            # Missing the thread permission is not fatal: the game runs in the channel itself.
            log.warning("could not open a thread in %s: %s", place.channel, e)
            return place
        return Place(PLATFORM, place.channel, str(thread.id))


# --------------------------------------------------------------------------- inbound


def user_of(who: discord.abc.User) -> UserRef:
    return UserRef(PLATFORM, str(who.id), getattr(who, "display_name", None) or who.name)


def place_of(channel: Any, channel_id: int | None) -> Place:
    if isinstance(channel, discord.Thread):
        return Place(PLATFORM, str(channel.parent_id), str(channel.id))
    return Place(PLATFORM, str(channel_id if channel_id is not None else getattr(channel, "id", "")))


class Router:
    """Turns interactions into Commands, calls the service, shows the Reply ephemerally."""

    def __init__(self, service: Service, settings: Settings, platform: DiscordPlatform) -> None:
        self.service = service
        self.settings = settings
        self.platform = platform

    # ---- helpers

    def is_admin(self, interaction: discord.Interaction) -> bool:
        user = interaction.user
        if f"{PLATFORM}:{user.id}" in self.settings.admins:
            return True
        if isinstance(user, discord.Member):
            if self.settings.admin_role and any(r.name == self.settings.admin_role for r in user.roles):
                return True
            # The member's permissions in this channel, as Discord computed them for the interaction.
            return interaction.permissions.manage_guild or interaction.permissions.administrator
        return False

    def command(self, interaction: discord.Interaction, kind: CommandKind, args: Mapping[str, Any] | None = None,
                inbound: bool = True) -> Command:
        return Command(
            kind=kind,
            user=user_of(interaction.user),
            place=place_of(interaction.channel, interaction.channel_id),
            args=dict(args or {}),
            inbound_id=str(interaction.id) if inbound else None,
            is_admin=self.is_admin(interaction),
        )

    def default_agent(self) -> str:
        choices = self.service.agent_choices()
        if self.settings.default_agent in choices or not choices:
            return self.settings.default_agent
        return choices[0]

    async def defer(self, interaction: discord.Interaction) -> None:
        if not interaction.response.is_done():
            await interaction.response.defer(ephemeral=True, thinking=True)

    async def show(self, interaction: discord.Interaction, reply: Reply) -> None:
        """The Reply, to the author only. Never raises."""
        text = reply.text or ("Already done." if reply.duplicate else ("Done." if reply.ok else "That did not work."))
        m = reply.outgoing
        kw: dict[str, Any] = {"allowed_mentions": NO_MENTIONS, "ephemeral": True}
        if m is not None:
            self.platform.remember(m)
            kw["content"] = (text + "\n\n" + content_of(m))[:2000] if text and text != m.text else content_of(m)
            view = view_of(m)
            if view is not None:
                kw["view"] = view
        else:
            kw["content"] = text[:2000]
        await self.send(interaction, **kw)

    async def send(self, interaction: discord.Interaction, **kw: Any) -> None:
        try:
            if interaction.response.is_done():
                await interaction.followup.send(**kw)
            else:
                await interaction.response.send_message(**kw)
        except discord.HTTPException as e:
            log.warning("could not answer interaction %s: %s", interaction.id, e)

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
            await self.send(interaction, content="This button is not ours any more.", ephemeral=True)
            return
        if d.scope == "l":
            args: dict[str, Any] = {"game_id": d.game_id}
            if d.verb == "ai":
                args |= {"agent": self.default_agent(), "count": 1}
            await self.run(interaction, self.command(interaction, LOBBY_KINDS[str(d.verb)], args))
        elif d.scope == "s":
            await self.run(interaction, self.command(interaction, CommandKind.SHOW, {"game_id": d.game_id}))
        elif d.option is not None:
            await self.run(interaction, self.command(interaction, CommandKind.ACT, {
                "game_id": d.game_id, "seat": d.seat, "kind": d.kind, "value": [d.option]}))
        else:
            await self.open_form(interaction, custom_id, d)

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
            await self.send(interaction, content="That prompt is closed: nothing to answer now.", ephemeral=True)
            return
        try:
            await interaction.response.send_modal(FormModal(form))
        except discord.HTTPException as e:
            log.warning("could not open the modal %s: %s", custom_id, e)

    async def on_select(self, interaction: discord.Interaction, custom_id: str, values: list[str]) -> None:
        try:
            d = codec.decode(values[0]) if values else None
        except codec.BadId:
            d = None
        if d is None or d.scope != "g" or d.option is None or not custom_id.startswith(values[0].rsplit(":", 1)[0]):
            await self.send(interaction, content="That choice is not one of ours.", ephemeral=True)
            return
        await self.run(interaction, self.command(interaction, CommandKind.ACT, {
            "game_id": d.game_id, "seat": d.seat, "kind": d.kind, "value": [d.option]}))

    async def on_modal(self, interaction: discord.Interaction) -> None:
        data: Any = interaction.data or {}
        try:
            d = codec.decode(str(data.get("custom_id", "")))
        except codec.BadId:
            return  # not one of our forms
        if d.scope != "g" or d.option is not None:
            return
        await self.run(interaction, self.command(interaction, CommandKind.ACT, {
            "game_id": d.game_id, "seat": d.seat, "kind": d.kind, "value": modal_values(data)}))

    async def on_dm(self, message: discord.Message) -> None:
        """A member's text in their DM with the bot answers their open text prompt, if any."""
        cmd = Command(CommandKind.ACT, user_of(message.author), Place(PLATFORM, str(message.channel.id)),
                      {"text": message.content}, inbound_id=str(message.id),
                      is_admin=f"{PLATFORM}:{message.author.id}" in self.settings.admins)
        try:
            reply = await self.service.handle(cmd)
        except Exception:
            log.exception("DM reply from %s failed", cmd.user.key)
            reply = Reply.error("Something went wrong on our side.")
        if reply.duplicate:
            return
        try:
            # A reply to the member's own message, so the answer sits under what it answers.
            await message.reply(**self.platform._kwargs(reply.outgoing or Outgoing(reply.text or "Noted.")),
                                mention_author=False)
        except discord.HTTPException as e:
            log.warning("could not answer a DM: %s", e)


# --------------------------------------------------------------------------- the client


class HushtableBot(commands.Bot):
    """The discord.py client, wired to a TableService. Construct, then `start(token)` or use `run_discord`."""

    def __init__(self, service: Service, settings: Settings, *, sync_commands: bool = True, **options: Any) -> None:
        intents = discord.Intents.none()
        intents.guilds = True  # channels and threads
        intents.dm_messages = True  # text replies to prompts; DM content needs no privileged intent
        options.setdefault("chunk_guilds_at_startup", False)
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, help_command=None,
                         allowed_mentions=NO_MENTIONS, **options)
        self.service = service
        self.settings = settings
        self.platform = DiscordPlatform(self)
        self.router = Router(service, settings, self.platform)
        self.sync_commands = sync_commands

    async def setup_hook(self) -> None:
        from bot.discord.commands import register

        # Registered before the gateway connects, so a click on any old message is routed.
        self.add_dynamic_items(*PERSISTENT_ITEMS)
        register(self.tree, self.router)
        if self.sync_commands:
            guild_id = self.settings.discord_guild_id
            if guild_id:
                guild = discord.Object(guild_id)
                self.tree.copy_global_to(guild=guild)  # guild commands update instantly while testing
                await self.tree.sync(guild=guild)
            else:
                await self.tree.sync()

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        if interaction.type is discord.InteractionType.modal_submit:
            await self.router.on_modal(interaction)

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or message.guild is not None or not isinstance(message.channel, discord.DMChannel):
            return
        await self.router.on_dm(message)


async def export_reply(router: Router, interaction: discord.Interaction, fmt: str, game: str | None,
                       since: str | None) -> None:
    """Run an export and attach the file to an ephemeral reply (or show the refusal)."""
    await router.defer(interaction)
    when = None
    if since:
        try:
            when = datetime.fromisoformat(since)
        except ValueError:
            await router.send(interaction, content="Give the date as YYYY-MM-DD.", ephemeral=True)
            return
        when = when if when.tzinfo else when.replace(tzinfo=UTC)
    try:
        out = await router.service.export(router.command(interaction, CommandKind.EXPORT, {"export": fmt}),
                                          fmt, game=game, since=when)
    except Exception:
        log.exception("export failed")
        out = Reply.error("The export failed; see the bot's log.")
    if isinstance(out, Reply):
        await router.show(interaction, out)
        return
    name, data = out
    await router.send(interaction, content=f"Export ({fmt}, {len(data)} bytes).", ephemeral=True,
                      file=discord.File(io.BytesIO(data), filename=name), allowed_mentions=NO_MENTIONS)


async def run_discord(service: Service, settings: Settings, *, start_service: bool = True, **options: Any) -> None:
    """Connect to Discord with ``settings.discord_token`` and serve until cancelled.

    Attaches the platform to ``service``; unless ``start_service`` is False (another adapter
    starts it once every platform is attached), starts the service once the gateway is ready
    (resumed games can then post to their threads) and stops it on the way out.
    ``options`` go to `HushtableBot` (discord.py client options).
    """
    if not settings.discord_token:
        raise ValueError("DISCORD_TOKEN is not set")
    bot = HushtableBot(service, settings, **options)
    service.attach(bot.platform)
    started = False
    async with bot:  # closes the HTTP session and the gateway when cancelled
        await bot.login(settings.discord_token)
        gateway = asyncio.create_task(bot.connect(), name="discord-gateway")
        try:
            if start_service:
                ready = asyncio.create_task(bot.wait_until_ready())
                await asyncio.wait({gateway, ready}, return_when=asyncio.FIRST_COMPLETED)
                if ready.done() and not gateway.done():
                    await service.start()
                    started = True
                else:
                    ready.cancel()
            await gateway
        finally:
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)
            if started:
                await service.stop()

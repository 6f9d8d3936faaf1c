"""The Discord adapter's client: `HushtableBot` (discord.py, wired to a TableService) and
`run_discord`, the production entry point.

The adapter is split by job: `platform.py` sends (post / dm / edit / open_thread),
`router.py` turns interactions into commands, `commands.py` declares the slash commands,
`views.py` renders components, `text.py` escapes and splits message text. This module only
wires them to the discord.py client. It holds no game logic and no game state.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
import yarl
from discord.ext import commands

from bot.core.ports import PrivacyPort, ServicePort, SneakPort, WebLinkPort
from bot.discord.commands import register
from bot.discord.platform import DiscordPlatform, fence_trace
from bot.discord.privacy import register as register_privacy
from bot.discord.router import Router
from bot.discord.sneak import register as register_sneak
from bot.discord.tournaments import register as register_tournaments
from bot.discord.views import NO_MENTIONS, PERSISTENT_ITEMS
from bot.discord.web import register as register_web
from bot.startup import NetworkDown, StartupError, network_reason
from bot.tournaments.port import TournamentPort

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger("hushtable.discord")

DISCORD_API_URL = "https://discord.com/api/v10"
DISCORD_GATEWAY_URL = "wss://gateway.discord.gg/"
REFUSED = ("DISCORD_TOKEN was refused by Discord (401 Unauthorized); copy the bot's token again "
           "(Developer Portal > your application > Bot > Reset Token) and restart")


def use_endpoints(settings: Settings) -> None:
    """Point discord.py at ``HUSHTABLE_DISCORD_API_URL`` / ``HUSHTABLE_DISCORD_GATEWAY_URL`` when they are
    set to something else than Discord's own (a proxy, a local fake); the defaults leave the library alone.
    Voice is never used, so discord.py's warning about the missing voice library is switched off."""
    discord.VoiceClient.warn_nacl = False
    if settings.discord_api_url.rstrip("/") != DISCORD_API_URL:
        discord.http.Route.BASE = settings.discord_api_url.rstrip("/")
    if settings.discord_gateway_url != DISCORD_GATEWAY_URL:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(settings.discord_gateway_url)


async def check_token(settings: Settings, *, timeout_s: float = 20.0) -> str:
    """Ask Discord who the token belongs to (``GET /users/@me``); returns the bot's name.

    `StartupError` when Discord refuses the token; `NetworkDown` when Discord cannot be reached
    (DNS, a refused connection, a timeout, a 5xx or 429 answer), which the caller retries."""
    token = settings.discord_token or ""
    url = settings.discord_api_url.rstrip("/") + "/users/@me"
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as session:
            async with session.get(url, headers={"Authorization": f"Bot {token}"}) as resp:
                if resp.status == 401:
                    raise StartupError(REFUSED)
                if resp.status >= 500 or resp.status == 429:
                    raise NetworkDown(f"Discord answered HTTP {resp.status}")
                if resp.status >= 400:
                    raise StartupError(f"DISCORD_TOKEN: Discord answered HTTP {resp.status} to the token check; "
                                       "check the token and HUSHTABLE_DISCORD_API_URL")
                data = await resp.json(content_type=None)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise NetworkDown(network_reason(exc)) from None
    except ValueError:
        raise NetworkDown("Discord's answer was not JSON") from None
    return str(data.get("username", "?")) if isinstance(data, dict) else "?"


class HushtableBot(commands.Bot):
    """The discord.py client, wired to a TableService. Construct, then `start(token)` or use `run_discord`."""

    def __init__(self, service: ServicePort, settings: Settings, *, sync_commands: bool = True,
                 admin_role_ids: Collection[int] = (), tournaments: TournamentPort | None = None,
                 sneak: SneakPort | None = None, privacy: PrivacyPort | None = None, web: WebLinkPort | None = None,
                 **options: Any) -> None:
        """``admin_role_ids``: roles (by id) whose members are admins of their guild, like Manage Server.
        ``tournaments``: the tournament service (``/tournament`` is offered only with one).
        ``sneak``: the SNEAK service (``/sneak`` and ``/judge`` say it is off without one).
        ``privacy``: the privacy desk (``/privacy``, ``/research``, ``/mydata``, ``/forget-me``, ``/audit``).
        ``web``: the web view's link maker (``/web``), None while the site is off."""
        intents = discord.Intents.none()
        intents.guilds = True  # channels and threads
        intents.dm_messages = True  # text replies to prompts; DM content needs no privileged intent
        options.setdefault("chunk_guilds_at_startup", False)
        options.setdefault("http_trace", fence_trace())  # a table's sends are fenced right before they leave
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, help_command=None,
                         allowed_mentions=NO_MENTIONS, **options)
        self.service = service
        self.settings = settings
        self.platform = DiscordPlatform(self)
        self.router = Router(service, self.platform, default_agent=settings.default_agent,
                             admin_role_ids=admin_role_ids)
        self.sync_commands = sync_commands
        self.tournaments = tournaments
        self.sneak = sneak
        self.privacy = privacy
        self.web = web

    async def setup_hook(self) -> None:
        # Registered before the gateway connects, so a click on any old message is routed.
        self.add_dynamic_items(*PERSISTENT_ITEMS)
        register(self.tree, self.router)
        if self.tournaments is not None:
            register_tournaments(self.tree, self.router, self.tournaments)
        register_sneak(self.tree, self.router, self.sneak)  # /sneak and /judge (bot/discord/sneak.py)
        register_privacy(self.tree, self.router, self.privacy)  # people's data (bot/discord/privacy.py)
        register_web(self.tree, self.router, self.web)  # a link to the web view (bot/discord/web.py)
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


class ShardedHushtableBot(HushtableBot, commands.AutoShardedBot):
    """The same bot over several gateway shards (``HUSHTABLE_DISCORD_SHARDS``): discord.py's
    AutoShardedBot runs them all in this process; ``shard_ids`` and ``shard_count`` pick this process's
    share when several split the gateway."""


def make_bot(service: ServicePort, settings: Settings, **options: Any) -> HushtableBot:
    """The plain bot, or the sharded one when ``settings.shard_plan`` asks for shards."""
    plan = settings.shard_plan
    if plan is None:
        return HushtableBot(service, settings, **options)
    if plan.ids is not None:
        options.update(shard_ids=list(plan.ids), shard_count=plan.count)
    return ShardedHushtableBot(service, settings, **options)


async def run_discord(service: ServicePort, settings: Settings, *, start_service: bool = True,
                      admin_role_ids: Collection[int] = (), tournaments: TournamentPort | None = None,
                      sneak: SneakPort | None = None, privacy: PrivacyPort | None = None, **options: Any) -> None:
    """Connect to Discord with ``settings.discord_token`` and serve until cancelled.

    Attaches the platform to ``service``; unless ``start_service`` is False (another adapter
    starts it once every platform is attached), starts the service once the gateway is ready
    (resumed games can then post to their threads) and stops it on the way out.
    ``admin_role_ids``, ``tournaments``, ``sneak``: see `HushtableBot`. ``options`` go to discord.py's client.
    """
    if not settings.discord_token:
        raise ValueError("DISCORD_TOKEN is not set")
    use_endpoints(settings)
    bot = make_bot(service, settings, admin_role_ids=admin_role_ids, tournaments=tournaments, sneak=sneak,
                   privacy=privacy, **options)
    service.attach(bot.platform)
    started = False
    async with bot:  # closes the HTTP session and the gateway when cancelled
        try:
            await bot.login(settings.discord_token)
        except discord.LoginFailure:
            raise StartupError(REFUSED) from None
        except discord.HTTPException as exc:
            raise StartupError(f"Discord refused the start (HTTP {exc.status}: {exc.text[:120]}); "
                               "check the bot's settings in the Developer Portal") from None
        except (aiohttp.ClientError, OSError) as exc:
            raise NetworkDown(network_reason(exc)) from None
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
            try:
                await gateway
            except discord.PrivilegedIntentsRequired:
                raise StartupError("Discord refused an intent the bot asks for; turn it on under Developer Portal > "
                                   "your application > Bot > Privileged Gateway Intents") from None
        finally:
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)
            if started:
                await service.stop()

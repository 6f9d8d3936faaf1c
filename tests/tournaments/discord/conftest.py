"""The Discord fixtures of tests/bot/discord, with a tournament service handed to the bot as the
startup point does (``HushtableBot(..., tournaments=...)``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.core.service import TableService
from bot.discord.adapter import HushtableBot
from bot.settings import Settings
from bot.tournaments.service import TournamentService
from models.agents.random_agent import RandomAgent
from storage.store import Store
from tests.bot.discord.conftest import Harness, _ErrorTrap, _set_on_ready, error_trap, fake, settings  # noqa: F401
from tests.bot.discord.fake_discord import FakeDiscord


class TournamentHarness(Harness):
    tournaments: TournamentService | None = None

    async def start(self) -> HushtableBot:
        self.store = await Store.open(self.settings.database_url)
        self.service = TableService(self.store, settings=self.settings,
                                    agents=lambda spec, seed: RandomAgent(spec, seed))
        self.tournaments = TournamentService(self.service)
        bot = HushtableBot(self.service, self.settings, guild_ready_timeout=0.1,
                           tournaments=self.tournaments)
        self.service.attach(bot.platform)
        await bot.login(self.settings.discord_token or "")
        ready = asyncio.Event()
        bot.add_listener(_set_on_ready(ready), "on_ready")
        self._task = asyncio.create_task(bot.connect(reconnect=False))
        await asyncio.wait_for(ready.wait(), 10)
        await self.service.start()
        self.bot = bot
        return bot

    async def stop(self) -> None:
        if self.tournaments is not None:
            await self.tournaments.aclose()
        await super().stop()


@pytest.fixture
async def harness(fake: FakeDiscord, settings: Settings, error_trap: _ErrorTrap) -> AsyncIterator[TournamentHarness]:  # noqa: F811
    h = TournamentHarness(fake, settings)
    try:
        await h.start()
        yield h
    finally:
        await h.stop()

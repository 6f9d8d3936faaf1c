"""The Discord fixtures of tests/bot/discord, with the SNEAK service handed to the bot as the startup
point does (``HushtableBot(..., sneak=...)``), reporting after each game."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.settings import Settings
from bot.sneak import SneakService
from tests.bot.discord.conftest import Harness, _ErrorTrap, error_trap, fake, settings  # noqa: F401
from tests.bot.discord.fake_discord import FakeDiscord
from tests.eval.logging_helpers import chat_sneak


class SneakHarness(Harness):
    sneak: SneakService | None = None

    def options_for_bot(self) -> dict[str, object]:
        assert self.store is not None and self.service is not None
        self.sneak = chat_sneak(self.store, self.service)
        return {**self.bot_options, "sneak": self.sneak}


@pytest.fixture
async def harness(fake: FakeDiscord, settings: Settings, error_trap: _ErrorTrap) -> AsyncIterator[SneakHarness]:  # noqa: F811
    h = SneakHarness(fake, settings)
    try:
        await h.start()
        yield h
    finally:
        await h.stop()

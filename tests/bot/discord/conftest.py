"""Fixtures: a fake Discord server, the real TableService on a SQLite file, and the real bot
(`HushtableBot`, discord.py 2.7) connected to the fake over real HTTP and websocket.

Any ERROR log from discord.py or from our adapter fails the test, because discord.py swallows
exceptions in event handlers and in the gateway parser (the bot then silently loses events).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path

import discord
import pytest
import yarl

from bot.core.service import TableService
from bot.discord.adapter import HushtableBot, make_bot
from bot.settings import Settings
from models.agents.random_agent import RandomAgent
from storage.store import Store
from tests.bot.discord.fake_discord import FakeDiscord


class _ErrorTrap(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def error_trap() -> Iterator[_ErrorTrap]:
    trap = _ErrorTrap()
    watched = [logging.getLogger(n) for n in ("discord", "hushtable.discord", "bot.core.service")]
    for lg in watched:
        lg.addHandler(trap)
    yield trap
    for lg in watched:
        lg.removeHandler(trap)
    msgs = [f"{r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info) if r.exc_info else ''}"
            for r in trap.records]
    assert not msgs, "ERROR logs during the test:\n" + "\n".join(msgs)


@pytest.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    monkeypatch.setattr(discord.http.Route, "BASE", server.api)
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(server.gateway))
    yield server
    await server.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'hush.db'}",
        discord_token="fake-token",
        default_agent="random",
        fallback_agent="random",
        agent_choices="random",
        ai_timeout_s=5,
        admin_users="",
        _env_file=None,  # type: ignore[call-arg]
    )


class Harness:
    """Starts and stops service + bot pairs over one database file, like a process restart."""

    def __init__(self, fake: FakeDiscord, settings: Settings) -> None:
        self.fake = fake
        self.settings = settings
        self.store: Store | None = None
        self.service: TableService | None = None
        self.bot: HushtableBot | None = None
        self._task: asyncio.Task[None] | None = None
        self.bot_options: dict[str, object] = {}  # e.g. admin_role_ids, for the next start()

    async def start(self) -> HushtableBot:
        self.store = await Store.open(self.settings.database_url)
        self.service = TableService(self.store, settings=self.settings,
                                    agents=lambda spec, seed: RandomAgent(spec, seed))
        # guild_ready_timeout: READY otherwise waits 2 s after the last GUILD_CREATE.
        bot = make_bot(self.service, self.settings, guild_ready_timeout=0.1, **self.options_for_bot())
        self.service.attach(bot.platform)
        await bot.login(self.settings.discord_token or "")
        ready = asyncio.Event()
        bot.add_listener(_set_on_ready(ready), "on_ready")
        self._task = asyncio.create_task(bot.connect(reconnect=False))
        await asyncio.wait_for(ready.wait(), 10)
        await self.service.start()
        self.bot = bot
        return bot

    def options_for_bot(self) -> dict[str, object]:
        """What the bot is handed beside the service, once the store and the service exist."""
        return self.bot_options

    async def stop(self) -> None:
        if self.service is not None:
            await self.service.stop()
        if self.bot is not None:
            await self.bot.close()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self.store is not None:
            await self.store.aclose()
        self.bot = self.service = self.store = None
        self._task = None

    async def idle(self) -> None:
        assert self.service is not None
        await self.service.wait_idle(30)
        await asyncio.sleep(0.05)  # let the bot's pending HTTP calls land on the fake


def _set_on_ready(ev: asyncio.Event) -> Callable[[], Coroutine[object, object, None]]:
    async def on_ready() -> None:
        ev.set()

    return on_ready


@pytest.fixture
async def harness(fake: FakeDiscord, settings: Settings, error_trap: _ErrorTrap) -> AsyncIterator[Harness]:
    h = Harness(fake, settings)
    try:
        await h.start()
        yield h
    finally:
        await h.stop()

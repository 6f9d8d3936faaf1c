"""Fixtures: a fake Slack Web API, and the real Bolt app with the real TableService over SQLite,
served over HTTP on 127.0.0.1 and driven by signed requests."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.core.ports import SneakPort
from bot.core.service import TableService
from bot.settings import Settings
from bot.slack.adapter import SlackBot, build_app, serve_http
from models.agents import AgentRegistry
from storage.store import Store
from tests.bot.debug_logging import debug_logging
from tests.bot.slack.fake_slack import FakeSlack, SlackClientSim

SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


@dataclass
class Stack:
    """One running bot: service + Bolt app + HTTP endpoint, and a simulated Slack client."""

    fake: FakeSlack
    settings: Settings
    store: Store
    service: TableService
    bot: SlackBot
    runner: object
    sim: SlackClientSim

    async def idle(self) -> None:
        await self.bot.idle()
        assert not self.bot.context.inflight.errors, self.bot.context.inflight.errors

    async def close(self) -> None:
        await self.bot.idle()
        await self.sim.close()
        await self.runner.cleanup()  # type: ignore[attr-defined]
        await self.service.stop()
        await self.bot.app.client.session.close() if self.bot.app.client.session else None
        await self.store.aclose()


def make_settings(fake: FakeSlack, db: Path, **over: object) -> Settings:
    values: dict[str, object] = {
        "database_url": f"sqlite+aiosqlite:///{db}",
        "slack_bot_token": "xoxb-test-token",
        "slack_app_token": "xapp-test-token",
        "slack_signing_secret": SECRET,
        "slack_mode": "http",
        "slack_api_url": fake.api_url,
        "default_agent": "random",
        "fallback_agent": "random",
        "agent_choices": "random",
        "ai_timeout_s": 5.0,
        "turn_deadline_s": 0.0,
    }
    values.update(over)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg,arg-type]


async def open_stack(fake: FakeSlack, db: Path, admin_users: tuple[str, ...] = (),
                     sneak_for: Callable[[Store, TableService], SneakPort] | None = None, **over: object) -> Stack:
    """``sneak_for``: builds the SNEAK service the app is handed, as the startup point does."""
    settings = make_settings(fake, db, **over)
    store = await Store.open(settings.database_url)
    service = TableService(store, settings=settings, agents=AgentRegistry())
    sneak = sneak_for(store, service) if sneak_for is not None else None
    from bot.core.privacy import PrivacyDesk

    privacy = PrivacyDesk(store, contact=settings.privacy_contact, consent=settings.research_consent,
                          retention_days=settings.retention_days)
    bot = build_app(service, settings, admin_users=admin_users, sneak_port=sneak, privacy_port=privacy)
    service.attach(bot.platform)
    await service.start()
    runner = await serve_http(bot, "127.0.0.1", 0, settings.slack_path)
    port = runner.addresses[0][1]
    sim = SlackClientSim(f"http://127.0.0.1:{port}{settings.slack_path}", fake, SECRET)
    return Stack(fake, settings, store, service, bot, runner, sim)


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    f = FakeSlack()
    await f.start()
    yield f
    await f.close()


@pytest.fixture
async def stack(fake: FakeSlack, tmp_path: Path) -> AsyncIterator[Stack]:
    s = await open_stack(fake, tmp_path / "hush.db")
    yield s
    await s.close()


@pytest.fixture(autouse=True)
def no_error_logs(caplog: pytest.LogCaptureFixture) -> object:
    """A listener that fails after its ack only logs: make any ERROR fail the test."""
    caplog.set_level(logging.WARNING)
    yield
    errors = [r for r in caplog.get_records("call") if r.levelno >= logging.ERROR]
    assert not errors, "\n".join(f"{r.name}: {r.getMessage()}" for r in errors)


LIBRARIES = ("slack_sdk", "slack_bolt", "aiohttp", "asyncio")  # levels restored after the test


@pytest.fixture
def debug_log(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """The bot's own file logging at DEBUG (``request.param``: text or json, default text); its file."""
    with debug_logging(tmp_path / "logs", getattr(request, "param", "text"), LIBRARIES, slack_bot_token="xoxb-test-token") as path:
        yield path

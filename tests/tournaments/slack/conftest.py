"""The Slack fixtures of tests/bot/slack, with a tournament service handed to the app as the
startup point does (``build_app(..., tournament_port=...)``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.core.service import TableService
from bot.slack.adapter import build_app, serve_http
from bot.tournaments.service import TournamentService
from models.agents import AgentRegistry
from storage.store import Store
from tests.bot.slack.conftest import SECRET, Stack, fake, make_settings, no_error_logs  # noqa: F401
from tests.bot.slack.fake_slack import FakeSlack, SlackClientSim


@pytest.fixture
async def stack(fake: FakeSlack, tmp_path: Path) -> AsyncIterator[Stack]:  # noqa: F811
    settings = make_settings(fake, tmp_path / "hush.db")
    store = await Store.open(settings.database_url)
    service = TableService(store, settings=settings, agents=AgentRegistry())
    tournaments = TournamentService(service)
    bot = build_app(service, settings, tournament_port=tournaments)
    service.attach(bot.platform)
    await service.start()
    runner = await serve_http(bot, "127.0.0.1", 0, settings.slack_path)
    port = runner.addresses[0][1]
    sim = SlackClientSim(f"http://127.0.0.1:{port}{settings.slack_path}", fake, SECRET)
    st = Stack(fake, settings, store, service, bot, runner, sim)
    st.tournaments = tournaments  # type: ignore[attr-defined]
    yield st
    await tournaments.aclose()
    await st.close()

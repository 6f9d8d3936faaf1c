"""The Slack fixtures of tests/bot/slack, with the SNEAK service handed to the app as the startup point
does (``build_app(..., sneak_port=...)``), reporting after each game."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.bot.slack.conftest import Stack, fake, no_error_logs, open_stack  # noqa: F401
from tests.bot.slack.fake_slack import FakeSlack
from tests.eval.logging_helpers import chat_sneak


@pytest.fixture
async def stack(fake: FakeSlack, tmp_path: Path) -> AsyncIterator[Stack]:  # noqa: F811
    s = await open_stack(fake, tmp_path / "hush.db", sneak_for=chat_sneak)
    yield s
    await s.close()

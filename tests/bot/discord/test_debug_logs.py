"""At HUSHTABLE_LOG_LEVEL=DEBUG no message body reaches the log file: a whole Who-is-Spy game is played
through the fake Discord with the bot's own logging set up at DEBUG (text and JSON), and the file is
searched for every secret the game dealt. discord.http logs every request body at DEBUG."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from games.base import contains_word
from tests.bot.debug_logging import debug_logging
from tests.bot.discord.conftest import Harness
from tests.bot.discord.driver import Players, open_table, secrets_of

LIBRARIES = ("discord", "discord.http", "discord.gateway", "discord.client", "discord.state", "aiohttp", "asyncio")


@pytest.fixture
def debug_log(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    with debug_logging(tmp_path / "logs", request.param, LIBRARIES, discord_token="fake-token") as path:
        yield path


@pytest.mark.parametrize("debug_log", ["text", "json"], indirect=True)
async def test_no_message_body_reaches_the_debug_log(harness: Harness, debug_log: Path) -> None:
    logging.getLogger("hushtable.test").debug("debug records are written")
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    gid, thread = await open_table(harness, alice, [bob], "spy", "spygame", 2)
    players = Players(harness, gid, thread, [alice, bob], dm_text_once=alice)
    await players.play()
    await harness.idle()
    secrets = await secrets_of(harness, gid)
    assert secrets.words, "the game dealt no secrets: the check would be empty"
    for h in logging.getLogger().handlers:
        h.flush()
    text = debug_log.read_text(encoding="utf-8")
    assert "debug records are written" in text, "the log is at DEBUG"
    leaked = sorted(w for w in secrets.words if contains_word(text, w))
    assert not leaked, f"secrets in the DEBUG log: {leaked}"

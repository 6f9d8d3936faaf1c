"""At HUSHTABLE_LOG_LEVEL=DEBUG no message body reaches the log file: a whole game is played through
Slack (secrets by DM, a description by DM reply) with the bot's own logging set up at DEBUG, in text
and JSON formats, and the file is searched for every secret the game dealt. slack_sdk logs every
request body at DEBUG, and Bolt quotes whole payloads."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from games.base import contains_word
from tests.bot.slack.conftest import Stack
from tests.bot.slack.play import play_to_end, secrets_of
from tests.bot.slack.test_games import ALICE, BOB, open_table


@pytest.mark.parametrize("debug_log", ["text", "json"], indirect=True)
async def test_no_message_body_reaches_the_debug_log(stack: Stack, debug_log: Path) -> None:
    logging.getLogger("hushtable.test").debug("debug records are written")
    game_id, _ = await open_table(stack, "play spy", 2)
    await play_to_end(stack, game_id, [ALICE, BOB], seed=game_id, text_by_dm={BOB})
    await stack.idle()
    glog = await stack.store.load_game(game_id)
    secrets = secrets_of(glog.events)
    assert secrets, "the game dealt no secrets: the check would be empty"
    for h in logging.getLogger().handlers:
        h.flush()
    text = debug_log.read_text(encoding="utf-8")
    assert "debug records are written" in text, "the log is at DEBUG"
    assert "hushtable" in text
    leaked = sorted(w for w in secrets if contains_word(text, w))
    assert not leaked, f"secrets in the DEBUG log: {leaked}"
    assert "Your word" not in text and "only you" not in text.lower()

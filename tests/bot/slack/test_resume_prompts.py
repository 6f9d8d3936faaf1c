"""The prompts a resumed table sends again show once on Slack: a new holder (here a second app over
the same SQLite file, after a restart) cannot know whether the one before it sent them, so it sends
them as messages that may be there already and Slack's adapter looks for each in the place's history
first. A first prompt stays one call, and a history that cannot be read still gets the prompt through.
The real Bolt app and slack_sdk against the fake Slack."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.slack import adapter
from tests.bot.slack.conftest import Stack, open_stack
from tests.bot.slack.fake_slack import FakeSlack, Message
from tests.bot.slack.test_games import CHANNEL, open_table


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "RETRY_PAUSE_S", 0.0)


def key_of(m: Message) -> str | None:
    key = (m.metadata or {}).get("event_payload", {}).get("key")
    return None if key is None else str(key)


def prompts(fake: FakeSlack, game_id: int) -> dict[str, list[Message]]:
    """Each prompt of this game on Slack, by its key, with every copy of it."""
    out: dict[str, list[Message]] = {}
    for m in fake.messages.values():
        key = key_of(m)
        if key is not None and key.startswith(f"{game_id}:") and key.endswith(":prompt"):
            out.setdefault(key, []).append(m)
    return out


async def first_holder(fake: FakeSlack, db: Path) -> tuple[int, str, dict[str, list[Message]]]:
    """A two-member table whose first prompts went out, then the process goes away."""
    first: Stack = await open_stack(fake, db)
    try:
        game_id, card = await open_table(first, "play spy", 1)
        await first.idle()
        sent = prompts(fake, game_id)
        assert sent, "nobody was prompted"
        assert all(len(v) == 1 for v in sent.values())
        # Prompts sent for the first time are one call each: nothing is looked for.
        assert fake.history_reads == []
    finally:
        await first.close()
    return game_id, card.ts, sent


async def test_a_restart_after_a_prompt_was_posted_shows_it_once(fake: FakeSlack, tmp_path: Path) -> None:
    db = tmp_path / "hush.db"
    game_id, card, before = await first_holder(fake, db)
    posts = len(fake.methods("chat.postMessage"))

    second = await open_stack(fake, db)
    try:
        await second.idle()
        assert game_id in second.service.tables
        # The same prompts, each looked for and found in its member's DM history: none posted again.
        assert {k: len(v) for k, v in prompts(fake, game_id).items()} == dict.fromkeys(before, 1)
        again = [c.get("metadata", {}).get("event_payload", {}).get("key")
                 for c in fake.methods("chat.postMessage")[posts:]]
        assert not set(again) & set(before)
        read = {args["channel"] for method, args in fake.history_reads if method == "conversations.history"}
        assert {m.channel for v in before.values() for m in v} <= read
        assert sum("is back after a restart" in m.text for m in fake.thread(CHANNEL, card)) == 1
    finally:
        await second.close()

    third = await open_stack(fake, db)  # a second restart before anyone moved: still once each
    try:
        await third.idle()
        assert {k: len(v) for k, v in prompts(fake, game_id).items()} == dict.fromkeys(before, 1)
        assert sum("is back after a restart" in m.text for m in fake.thread(CHANNEL, card)) == 1
    finally:
        await third.close()


async def test_a_failed_history_read_still_delivers_the_prompt(fake: FakeSlack, tmp_path: Path,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    db = tmp_path / "hush.db"
    game_id, _card, before = await first_holder(fake, db)
    # The first holder died before its prompts reached Slack, and the prompted members' DM
    # histories cannot be read (who is prompted first depends on the deal).
    dms = {m.channel for v in before.values() for m in v}
    for copies in before.values():
        for m in copies:
            del fake.messages[(m.channel, m.ts)]
    for channel in dms:
        fake.history_refused[channel] = "missing_scope"

    second = await open_stack(fake, db)
    try:
        await second.idle()
        now = prompts(fake, game_id)
        assert {k: len(v) for k, v in now.items()} == dict.fromkeys(before, 1)
        assert {m.channel for v in now.values() for m in v} == dms
        said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert all(any(f"reading the history of {c} failed" in s and "missing_scope" in s for s in said) for c in dms)
    finally:
        await second.close()


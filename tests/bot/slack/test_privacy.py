"""`/hushtable privacy` (with its research buttons), `research on|off`, `mydata`, `forget-me` (with its
Erase me button) and `audit` through real slack-bolt against the fake Slack: answers are ephemeral,
a button acts only for the member who asked, the data file goes to the author's DM, bad input is one
sentence and changes nothing, the audit is for admins only."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from storage import people
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import Message
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL


async def say(st: Stack, text: str, user: str = BOB) -> str:
    assert await st.sim.command(user, CHANNEL, text) == 200
    await st.idle()
    return str(st.fake.responses[-1]["text"])


async def press(st: Stack, label: str, user: str) -> str:
    """``user`` presses the button labelled ``label`` under the last ephemeral answer; the answer they get."""
    message = Message(CHANNEL, "1700000000.000100", str(st.fake.responses[-1]["text"]),
                      list(st.fake.responses[-1].get("blocks") or []))
    button = next(el for el in message.actions() if el["text"]["text"] == label)
    assert await st.sim.click(user, message, button) == 200
    await st.idle()
    return str(st.fake.responses[-1]["text"])


async def test_privacy_commands(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(BOB)
    me = f"slack:{BOB}"
    assert "forget-me" in await say(st, "privacy") and "admins" in await say(st, "privacy")
    assert "Say `research on`" in await say(st, "research maybe")
    assert await people.research_choices(st.store) == {}
    # The notice's Block Kit buttons: only the asker's click records a choice.
    await say(st, "privacy")
    assert "Only the member who asked" in await press(st, "Research: on", ALICE)
    assert await people.research_choices(st.store) == {}
    await say(st, "privacy")
    assert "left out" in await press(st, "Research: off", BOB)
    assert await people.research_choices(st.store) == {me: False}
    await say(st, "privacy")
    assert "Thanks" in await press(st, "Research: on", BOB)
    assert await people.research_choices(st.store) == {me: True}
    assert "Thanks" in await say(st, "research on")

    assert "sent to you by DM" in await say(st, "mydata")
    assert len(st.fake.files) == 1 and st.fake.files[0]["channel"] != CHANNEL
    data = json.loads(st.fake.files[0]["data"])
    assert data["member"] == me and data["research_consent"] is True

    assert "Only admins" in await say(st, "audit", ALICE)
    assert "nothing was erased" in await say(st, "forget-me confirm")  # confirmed by the button only
    assert "Confirm" in await say(st, "forget-me")
    assert await people.research_choices(st.store) == {me: True}  # nothing erased before confirming
    assert "Only the member who asked" in await press(st, "Erase me", ALICE)
    assert await people.research_choices(st.store) == {me: True}
    await say(st, "forget-me")
    assert "Erased from 0 game(s)." in await press(st, "Erase me", BOB)
    assert await people.research_choices(st.store) == {}
    audit = await say(st, "audit")
    assert "data export" in audit and "erasure done" in audit and me not in audit


async def test_the_log_file_never_names_a_member(stack: Stack, debug_log: Path) -> None:
    """Log files are not rewritten by an erasure, so they must not name members at all: a failed DM
    (the member's DMs are closed) is logged with a tag that links nothing after the process."""
    st = stack
    st.fake.closed_dms.add(BOB)
    assert "could not be sent" in await say(st, "mydata")
    await say(st, "forget-me")
    assert "Erased from 0 game(s)." in await press(st, "Erase me", BOB)
    for h in logging.getLogger().handlers:
        h.flush()
    text = debug_log.read_text(encoding="utf-8")
    assert "mydata upload to member-" in text, "the failure is logged"
    assert BOB not in text and BOB.lower() not in text.lower()

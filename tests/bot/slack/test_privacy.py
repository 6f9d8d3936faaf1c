"""`/hushtable privacy`, `research on|off`, `mydata`, `forget-me [confirm]` and `audit` through real
slack-bolt against the fake Slack: answers are ephemeral, the data file goes to the author's DM,
bad input is one sentence and changes nothing, the audit is for admins only."""

from __future__ import annotations

import json

from storage import people
from tests.bot.slack.conftest import Stack
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL


async def say(st: Stack, text: str, user: str = BOB) -> str:
    assert await st.sim.command(user, CHANNEL, text) == 200
    await st.idle()
    return str(st.fake.responses[-1]["text"])


async def test_privacy_commands(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(BOB)
    me = f"slack:{BOB}"
    assert "forget-me" in await say(st, "privacy") and "admins" in await say(st, "privacy")
    assert "Say `research on`" in await say(st, "research maybe")
    assert await people.research_choices(st.store) == {}
    assert "Thanks" in await say(st, "research on")
    assert await people.research_choices(st.store) == {me: True}

    assert "sent to you by DM" in await say(st, "mydata")
    assert len(st.fake.files) == 1 and st.fake.files[0]["channel"] != CHANNEL
    data = json.loads(st.fake.files[0]["data"])
    assert data["member"] == me and data["research_consent"] is True

    assert "Only admins" in await say(st, "audit", ALICE)
    assert "forget-me confirm" in await say(st, "forget-me")
    assert await people.research_choices(st.store) == {me: True}  # nothing erased before confirming
    assert "Say `/hushtable forget-me`" in await say(st, "forget-me please")
    assert "Erased from 0 game(s)." in await say(st, "forget-me confirm")
    assert await people.research_choices(st.store) == {}
    audit = await say(st, "audit")
    assert "data export" in audit and "erasure done" in audit and me not in audit

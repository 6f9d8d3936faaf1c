"""A table's send is made only while its fence holds, checked right before ``chat.postMessage``."""

from __future__ import annotations

import pytest

from bot.core.messages import Outgoing, Place, UserRef
from bot.core.platform import SendFenced, send_fence
from tests.bot.slack.conftest import Stack


async def test_a_fenced_send_never_reaches_slack(stack: Stack) -> None:
    platform = stack.bot.platform
    place = Place("slack", "C1")
    with send_fence(lambda: False):
        with pytest.raises(SendFenced):
            await platform.post(place, Outgoing("late"))
        with pytest.raises(SendFenced):
            await platform.dm(UserRef("slack", "U1", "u"), Outgoing("late"))
    assert stack.fake.methods("chat.postMessage") == []
    with send_fence(lambda: True):
        await platform.post(place, Outgoing("on time"))
    assert [c["text"] for c in stack.fake.methods("chat.postMessage")] == ["on time"]

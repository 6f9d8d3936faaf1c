"""A table's send leaves only while its fence holds, checked by the Discord client's own HTTP
hook right before the request; a keyed message (a turn's outbox id) is created once on Discord
however often it is sent, by its nonce with ``enforce_nonce``, as the fake server answers like
Discord."""

from __future__ import annotations

import pytest

from bot.core.messages import Outgoing, Place
from bot.core.platform import SendFenced, send_fence
from tests.bot.discord.conftest import Harness


def _posts(harness: Harness) -> int:
    return sum(1 for r in harness.fake.requests if r.method == "POST" and r.path.endswith("/messages"))


async def test_a_keyed_message_sent_again_is_created_once(harness: Harness) -> None:
    fake = harness.fake
    assert harness.bot is not None
    place = Place("discord", str(fake.channel_id))
    long = "\n".join(f"line {i} " + "word " * 30 for i in range(100))  # split into several messages
    before = len(fake.in_channel(fake.channel_id))
    first = await harness.bot.platform.post(place, Outgoing(long, key="a" * 32))
    parts = len(fake.in_channel(fake.channel_id)) - before
    again = await harness.bot.platform.post(place, Outgoing(long, key="a" * 32))  # a new holder's copy
    assert parts > 1 and len(fake.in_channel(fake.channel_id)) - before == parts
    assert again == first  # Discord answers the repeat with the first copy
    await harness.bot.platform.post(place, Outgoing("plain", key="b" * 32))
    await harness.bot.platform.post(place, Outgoing("plain"))
    await harness.bot.platform.post(place, Outgoing("plain"))  # no key: every send is a new message
    assert len(fake.in_channel(fake.channel_id)) - before == parts + 3


async def test_a_fenced_send_never_reaches_discord(harness: Harness) -> None:
    fake = harness.fake
    assert harness.bot is not None
    place = Place("discord", str(fake.channel_id))
    before = _posts(harness)
    with send_fence(lambda: False), pytest.raises(SendFenced):
        await harness.bot.platform.post(place, Outgoing("late"))
    assert _posts(harness) == before
    # The fence goes down while a long message is on its way (the hold ran out between two of its
    # parts): the first part was sent, nothing after it leaves.
    long = "\n".join(f"line {i} " + "word " * 30 for i in range(100))
    with send_fence(lambda: _posts(harness) == before), pytest.raises(SendFenced):
        await harness.bot.platform.post(place, Outgoing(long))
    assert _posts(harness) == before + 1
    await harness.bot.platform.post(place, Outgoing("outside any fence"))
    assert _posts(harness) == before + 2

"""Connect the real bot to the fake and open a lobby (the quickest check the wiring holds)."""

from __future__ import annotations

from tests.bot.discord.conftest import Harness


async def test_connects_syncs_and_opens_a_lobby(harness: Harness) -> None:
    fake = harness.fake
    names = {c["name"] for c in fake.commands}
    assert {"play", "join", "leave", "ai", "removeai", "start", "abort", "rules", "status", "export"} <= names
    alice = fake.add_member(name="alice")
    ix = await fake.slash(alice, "play", game="spy")
    assert ix.ephemeral and "is open" in ix.text
    await harness.idle()
    cards = fake.in_channel(fake.channel_id)
    assert len(cards) == 1
    assert any(cid.startswith("l:") and cid.endswith(":join") for cid in fake.custom_ids(cards[0]))

"""Gateway shards (HUSHTABLE_DISCORD_SHARDS): the setting's forms, the bot class it picks, and a real
sharded bot against the fake gateway: every shard of its range identifies, the guild's events come on
its own shard, and a member plays there as on an unsharded bot."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bot.discord.adapter import ShardedHushtableBot
from bot.settings import Settings, ShardPlan, parse_shards
from tests.bot.discord.conftest import Harness
from tests.bot.discord.fake_discord import FakeDiscord


def test_the_shard_setting_reads_ranges_lists_and_auto() -> None:
    assert parse_shards("") is None
    assert parse_shards("auto") == ShardPlan(None, None)
    assert parse_shards("0-3/8") == ShardPlan((0, 1, 2, 3), 8)
    assert parse_shards(" 5/8 ") == ShardPlan((5,), 8)
    assert parse_shards("0,2-3/4") == ShardPlan((0, 2, 3), 4)
    plan = ShardPlan((1,), 4)
    guild = (17 << 22) | 12345  # Discord's rule: (guild id >> 22) % shard count
    assert plan.owns_guild(guild) and not ShardPlan((0, 2, 3), 4).owns_guild(guild)


@pytest.mark.parametrize(("value", "says"), [("8", "of the total"), ("0-8/8", "from 0 to 7"), ("3-1/8", "from 0 to 7"),
                                             ("a/8", "not a shard"), ("0/0", "of the total"), ("٣/8", "not a shard")])
def test_a_bad_shard_setting_is_one_sentence(value: str, says: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings(discord_shards=value, _env_file=None)  # type: ignore[call-arg]
    [e] = err.value.errors()
    assert "HUSHTABLE_DISCORD_SHARDS" in e["msg"] and says in e["msg"]


async def test_a_sharded_bot_identifies_each_shard_and_plays_on_the_guilds_shard(
        fake: FakeDiscord, settings: Settings, error_trap: object) -> None:
    settings.discord_shards = "0-1/2"
    harness = Harness(fake, settings)
    try:
        bot = await harness.start()
        assert isinstance(bot, ShardedHushtableBot) and bot.shard_count == 2
        assert sorted(fake.shards_identified) == [(0, 2), (1, 2)]
        alice = fake.add_member(name="alice")
        ix = await fake.slash(alice, "play", game="spy")
        assert ix.ephemeral and "is open" in ix.text
        await harness.idle()
        assert len(fake.in_channel(fake.channel_id)) == 1
    finally:
        await harness.stop()

"""Which tenants a process serves, and which live process a table of a tenant belongs with."""

from __future__ import annotations

from bot.core.serving import Served, owner_of
from bot.settings import Settings


def test_a_process_serves_its_tenants_platforms_and_discord_shards() -> None:
    guild = (5 << 22) + 123  # Discord puts a guild on shard (id >> 22) % count: 5 % 4 = 1
    served = Served(tenants=frozenset({"memory:g1"}), platforms=frozenset({"slack"}), shards=frozenset({1}),
                    shard_count=4)
    assert served.covers("memory:g1") and not served.covers("memory:g2")
    assert served.covers("slack:T1") and served.covers(f"discord:{guild}")
    assert not served.covers(f"discord:{guild + (1 << 22)}") and not served.covers("discord:dm")
    assert Served.from_json(served.to_json()) == served
    assert Served.from_json({"shards": ["x"], "shard_count": 4, "tenants": ["memory:g1"]}) \
        == Served(tenants=frozenset({"memory:g1"}))
    assert not Served() and not Served(shards=frozenset({1}))


def test_the_settings_say_what_a_process_serves() -> None:
    sharded = Settings(_env_file=None, discord_shards="0-1/4")  # type: ignore[call-arg]
    assert Served.of_settings(sharded, ["discord", "console"]) == Served(shards=frozenset({0, 1}), shard_count=4)
    plain = Settings(_env_file=None)  # type: ignore[call-arg]
    assert Served.of_settings(plain, ["discord", "slack"]) == Served(platforms=frozenset({"discord", "slack"}))
    assert not Served.of_settings(plain, ["console", "memory"])


def test_a_table_goes_to_the_first_live_process_serving_its_tenant_unless_this_one_does() -> None:
    mine = Served(tenants=frozenset({"memory:a"}))
    peers = {"p2": Served(tenants=frozenset({"memory:b"})).to_json(),
             "p1": Served(platforms=frozenset({"memory"})).to_json()}
    assert owner_of("memory:a", mine, peers) is None  # this process serves it too: it stays
    assert owner_of("memory:b", mine, peers) == "p1"  # both serve it: every holder picks the same one
    assert owner_of("slack:T1", mine, peers) is None  # nobody alive serves it: it stays

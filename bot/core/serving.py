"""Which tenants a bot process serves: the ones whose commands the platforms send to it.

Several processes on one PostgreSQL split the platforms' traffic: a Discord gateway shard
delivers the events of the guilds it covers, a Slack app connection those of its workspace.
Each process writes what it serves in its heartbeat row (``storage.ownership``), and a process
holding a table of a tenant that another live process serves (it took the table over while
that process was down) hands the table back to it, so the member's commands and the table
meet in one process again, whether or not anybody types.

A process serves nothing unless it says so (the tables it starts stay where they are): the
startup point derives it from the settings (``Served.of_settings``), a test names tenants.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.settings import Settings

DISCORD = "discord"
_SHARD_SHIFT = 22  # a guild's shard is (guild id >> 22) % shard count (Discord's gateway sharding)


@dataclass(frozen=True, slots=True)
class Served:
    """Whole platforms (every tenant of theirs), single tenants, and a share of Discord's guilds
    (``shards`` of ``shard_count``)."""

    platforms: frozenset[str] = frozenset()
    tenants: frozenset[str] = frozenset()
    shards: frozenset[int] = frozenset()
    shard_count: int = 0

    def __bool__(self) -> bool:
        return bool(self.platforms or self.tenants or (self.shards and self.shard_count))

    def covers(self, tenant: str) -> bool:
        """Whether this process receives the commands of ``tenant`` (``platform:id``)."""
        if tenant in self.tenants:
            return True
        platform, _, ident = tenant.partition(":")
        if platform in self.platforms:
            return True
        if platform == DISCORD and self.shard_count and ident.isdigit():
            return (int(ident) >> _SHARD_SHIFT) % self.shard_count in self.shards
        return False

    def to_json(self) -> dict[str, Any]:
        return {"platforms": sorted(self.platforms), "tenants": sorted(self.tenants), "shards": sorted(self.shards),
                "shard_count": self.shard_count}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Served:
        def names(key: str) -> frozenset[str]:
            return frozenset(str(v) for v in raw.get(key) or ())

        try:
            shards = frozenset(int(v) for v in raw.get("shards") or ())
            count = int(raw.get("shard_count") or 0)
        except (TypeError, ValueError):  # a row another version wrote: it serves nothing we can read
            shards, count = frozenset(), 0
        return cls(names("platforms"), names("tenants"), shards, count)

    @classmethod
    def of_settings(cls, settings: Settings, platforms: Iterable[str]) -> Served:
        """What a process serves by its configuration: the Discord shards it runs (every guild when
        it runs the gateway unsharded or all recommended shards), Slack's workspaces when it runs
        Slack. Other platforms (the console) receive nothing another process could hand back."""
        attached = set(platforms)
        whole: set[str] = set()
        shards: frozenset[int] = frozenset()
        count = 0
        if DISCORD in attached:
            plan = settings.shard_plan
            if plan is None or plan.ids is None or plan.count is None:
                whole.add(DISCORD)
            else:
                shards, count = frozenset(plan.ids), plan.count
        if "slack" in attached:
            whole.add("slack")
        return cls(frozenset(whole), frozenset(), shards, count)


def owner_of(tenant: str, me: Served, peers: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The live process a table of ``tenant`` belongs with, when it is not this one: None when this
    process serves the tenant too, or no live process does (the table stays where it is). With
    several, the first by name, so that every holder picks the same one."""
    if me.covers(tenant):
        return None
    owners = sorted(owner for owner, raw in peers.items() if Served.from_json(raw).covers(tenant))
    return owners[0] if owners else None

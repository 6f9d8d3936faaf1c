"""Agent names only from the operator's choices, everything scoped to its
tenant, and lobby controls (host-only AI seats, a cap on open lobbies, host hand-over)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from bot.core.messages import Command, CommandKind, Place, Reply, UserRef
from bot.core.tables import Lobby
from models.agents import AgentRegistry
from storage.tables import GameRow
from tests.bot.core.conftest import ALICE, BOB, HERE, Harness, make_harness

GUILD_A, GUILD_B = "discord:1", "discord:2"
EVE = UserRef("memory", "666", "Eve")
HOSTILE_SPECS = ["llm:openai:http://attacker/v1#m", "llm:http://attacker.example/v1", "llm:/any/path",
                 "embed:../..", "random?x=1", "RANDOM"]


async def send(h: Harness, kind: CommandKind, user: UserRef, place: Place = HERE, *, tenant: str = GUILD_A,
               admin: bool = False, **args: Any) -> Reply:
    return await h.service.handle(Command(kind, user, place, args, inbound_id=f"i{next(h.ids)}", tenant=tenant,
                                          is_admin=admin))


async def stored(h: Harness, game_id: int | None) -> GameRow:
    """The game's row, which must exist."""
    assert game_id is not None
    row = await h.store.game(game_id)
    assert row is not None, game_id
    return row


async def export(h: Harness, cmd: Command) -> tuple[str, bytes]:
    """An export the command's user may make: its file name and bytes."""
    exported = await h.service.export(cmd)
    assert isinstance(exported, tuple), exported
    return exported


class Recording(AgentRegistry):
    """The real registry, noting every spec it is asked to build."""

    def __init__(self) -> None:
        super().__init__()
        self.built: list[str] = []

    def __call__(self, spec: str, seed: int):
        self.built.append(spec)
        return super().__call__(spec, seed)


async def test_agent_names_outside_the_choices_are_refused_and_never_built(tmp_path) -> None:
    """Item 1 (failed before: any spec string reached the agent factory)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/a.db")
    registry = Recording()
    h.service.agents = registry
    h.service.runner.factory = registry
    try:
        assert (await send(h, CommandKind.CREATE, ALICE, game="spy")).ok
        row = await h.store.lobby_at("memory", HERE.key)
        assert row is not None
        for spec in HOSTILE_SPECS:
            r = await send(h, CommandKind.ADD_AI, ALICE, agent=spec, count=3)
            assert not r.ok and "Choose one of" in r.text, spec
            assert "attacker" not in r.text
        assert Lobby.of(await stored(h, row.id)).seats == Lobby.of(row).seats
        assert registry.built == []
        assert (await send(h, CommandKind.ADD_AI, ALICE, agent="random", count=3)).ok
        assert (await send(h, CommandKind.START, ALICE)).ok
        await h.play_humans()
        assert registry.built and set(registry.built) <= set(h.service.agent_choices())
    finally:
        await h.close()


async def test_a_logged_agent_no_longer_offered_plays_as_the_default(tmp_path) -> None:
    """Item 1: a seat logged with a spec the operator does not offer (an old database) is played by
    the default agent; the logged string never reaches the factory."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/b.db")
    registry = Recording()
    h.service.runner.factory = registry
    try:
        gid = await h.service.ai_tables.open_ai_table(tenant="t", place=Place("memory", "p"), game="chameleon", variant=None,
                                            options={}, agents=["random"] * 4, seed=2)
        table = h.service.tables[gid]
        table.seats[1].agent = "llm:http://attacker/v1"
        await asyncio.wait_for(h.service.ai_tables.wait_finished(gid), 60)
        assert "llm:http://attacker/v1" not in registry.built
    finally:
        await h.close()


async def test_ids_lists_and_exports_never_cross_tenants(tmp_path) -> None:
    """Item 2 (failed before: /abort game_id=N aborted another guild's game, LIST showed every lobby)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/t.db", admin_users="memory:999")
    try:
        assert (await send(h, CommandKind.CREATE, ALICE, game="chameleon")).ok
        assert (await send(h, CommandKind.JOIN, BOB)).ok
        assert (await send(h, CommandKind.ADD_AI, ALICE, agent="random", count=2)).ok
        lobby = await h.store.lobby_at("memory", HERE.key)
        assert lobby is not None and lobby.id is not None
        gid = lobby.id
        assert (await stored(h, gid)).tenant == GUILD_A
        elsewhere = Place("memory", "b-chan")
        for kind in (CommandKind.JOIN, CommandKind.STATUS, CommandKind.ABORT, CommandKind.START,
                     CommandKind.ADD_AI, CommandKind.SET_DEADLINE):
            r = await send(h, kind, ALICE, elsewhere, tenant=GUILD_B, admin=True, game_id=gid, seconds=5)
            assert not r.ok and "no such table" in r.text.lower(), kind
        # Even at the same place key, another tenant finds nothing.
        r = await send(h, CommandKind.STATUS, ALICE, HERE, tenant=GUILD_B)
        assert not r.ok
        listed = await send(h, CommandKind.LIST, EVE, elsewhere, tenant=GUILD_B)
        assert f"#{gid}" not in listed.text
        assert f"#{gid}" in (await send(h, CommandKind.LIST, EVE, elsewhere)).text
        assert (await send(h, CommandKind.START, ALICE)).ok
        await h.service.wait_idle()
        for kind in (CommandKind.SHOW, CommandKind.ACT):
            r = await send(h, kind, ALICE, elsewhere, tenant=GUILD_B, game_id=gid, seat=0, kind_="x", value=["x"])
            assert not r.ok, kind
        assert (await stored(h, gid)).status == "running"
        await h.play_humans()  # in the game's own tenant, the game plays to its end
    finally:
        await h.close()


async def test_export_is_per_tenant_and_operators_are_admins_everywhere(tmp_path) -> None:
    """Item 2 (failed before: /export returned every ended game on every platform)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/e.db", admin_users="memory:999")
    try:
        a = await h.service.ai_tables.open_ai_table(tenant=GUILD_A, place=Place("memory", "a"), game="chameleon",
                                          variant=None, options={}, agents=["random"] * 3, seed=1)
        b = await h.service.ai_tables.open_ai_table(tenant=GUILD_B, place=Place("memory", "b"), game="chameleon",
                                          variant=None, options={}, agents=["random"] * 3, seed=2)
        await asyncio.gather(h.service.ai_tables.wait_finished(a), h.service.ai_tables.wait_finished(b))
        cmd = Command(CommandKind.EXPORT, BOB, Place("memory", "a"), tenant=GUILD_A, is_admin=True)
        name, data = await export(h, cmd)
        assert data.count(b"\n") == 1 and f'"id": {a},'.encode() in data
        operator = replace(cmd, user=UserRef("memory", "999", "Op"), is_admin=False, tenant=GUILD_B)
        name, data = await export(h, operator)
        assert data.count(b"\n") == 1 and f'"id": {b},'.encode() in data
        # An admin of guild A is nobody in guild B.
        r = await send(h, CommandKind.EXPORT, BOB, tenant=GUILD_B)
        assert not r.ok and "admin" in r.text
    finally:
        await h.close()


async def test_only_the_host_changes_ai_seats(harness: Harness) -> None:
    """Item 3 (failed before: any member could fill or empty a lobby with AI seats)."""
    h = harness
    assert (await send(h, CommandKind.CREATE, ALICE, game="spy")).ok
    assert (await send(h, CommandKind.ADD_AI, ALICE, agent="random", count=1)).ok
    row = await h.store.lobby_at("memory", HERE.key)
    assert row is not None
    for kind in (CommandKind.ADD_AI, CommandKind.REMOVE_AI):
        r = await send(h, kind, EVE, agent="random", count=5)
        assert not r.ok and "host" in r.text, kind
        r = await send(h, kind, BOB, agent="random", count=5)
        assert not r.ok
    assert Lobby.of(await stored(h, row.id)).seats == Lobby.of(row).seats


async def test_open_lobbies_are_capped_per_member(tmp_path) -> None:
    """Item 3: a documented cap (HUSHTABLE_MAX_OPEN_LOBBIES) per member and tenant."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/c.db", max_open_lobbies=2)
    try:
        for i in range(2):
            assert (await send(h, CommandKind.CREATE, ALICE, Place("memory", f"c{i}"), game="spy")).ok
        r = await send(h, CommandKind.CREATE, ALICE, Place("memory", "c2"), game="spy")
        assert not r.ok and "2 open table" in r.text
        assert (await send(h, CommandKind.CREATE, ALICE, Place("memory", "c3"), tenant=GUILD_B, game="spy")).ok
        assert (await send(h, CommandKind.CREATE, BOB, Place("memory", "c4"), game="spy")).ok
        assert (await send(h, CommandKind.ABORT, ALICE, Place("memory", "c0"))).ok
        assert (await send(h, CommandKind.CREATE, ALICE, Place("memory", "c5"), game="spy")).ok
    finally:
        await h.close()


async def test_the_host_leaves_and_the_next_human_hosts(harness: Harness) -> None:
    """Item 3 (failed before: games.host kept the departed host, who could still start and abort)."""
    h = harness
    carol = UserRef("memory", "300", "Carol")
    assert (await send(h, CommandKind.CREATE, ALICE, game="chameleon")).ok
    assert (await send(h, CommandKind.JOIN, BOB)).ok
    assert (await send(h, CommandKind.JOIN, carol)).ok
    assert (await send(h, CommandKind.LEAVE, ALICE)).ok
    row = await h.store.lobby_at("memory", HERE.key)
    assert row is not None
    assert row.host == BOB.key and Lobby.of(row).host.key == BOB.key
    assert (await send(h, CommandKind.JOIN, ALICE)).ok  # back as a player, not as host
    r = await send(h, CommandKind.START, ALICE)
    assert not r.ok and "host" in r.text
    r = await send(h, CommandKind.ABORT, ALICE)
    assert not r.ok and "host" in r.text
    assert (await send(h, CommandKind.ADD_AI, BOB, agent="random", count=1)).ok
    assert (await send(h, CommandKind.START, BOB)).ok

"""Spymasters through the table service on a real SQLite file and the in-memory platform: humans
and AI seats (random and the embedding baseline) play whole games; the key reaches the two
spymasters by direct message and nobody else; the log replays to the announced result."""

from __future__ import annotations

import asyncio
import itertools

from bot.core.memory import MemoryPlatform
from bot.core.messages import CommandKind, Place, UserRef
from bot.core.service import TableService
from games import get
from games.base import Action, replay
from models.agents import AgentRegistry
from models.agents.wiring import register_agents
from models.types import Inference
from models.worker.embedding_backend import embedder_for
from storage.store import Store
from tests.bot.core.conftest import ALICE, BOB, CAROL, HERE, Harness, human, make_harness, settings

DAVE = UserRef("memory", "400", "Dave")
KEY_LINE = "The key, for the spymasters only."


async def test_four_humans_play_a_whole_game_and_only_spymasters_see_the_key(harness: Harness) -> None:
    h = harness
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spymasters", variant="classic")).ok
    for user in (BOB, CAROL, DAVE):
        assert (await h.send(CommandKind.JOIN, user, HERE)).ok
    row = await h.store.lobby_at(HERE.platform, HERE.key)
    assert row is not None and row.id is not None
    gid = row.id
    r = await h.send(CommandKind.START, ALICE, HERE)
    assert r.ok, r.text
    table = h.service.tables[gid]
    masters = {human(table.seats[s]).key for s in table.state.spymasters}
    await h.play_humans(seed=3)
    row = await h.store.game(gid)
    assert row is not None
    assert row.status == "finished" and row.result is not None
    for user in (ALICE, BOB, CAROL, DAVE):
        got_key = any(KEY_LINE in m.text for m in h.platform.dms_to(user.key))
        assert got_key == (user.key in masters), user
    assert not any(KEY_LINE in s.message.text for s in h.platform.public())
    # The log replays to the stored result.
    glog = await h.store.load_game(gid)
    assert glog.row.seed is not None
    engine = get("spymasters")
    actions = [(a.seat, Action(a.kind, tuple(a.value))) for a in glog.actions]
    state, _ = replay(engine, engine.config_from_dict(glog.row.config), len(glog.seats), glog.row.seed, actions)
    result = engine.result(state)
    assert result is not None and result.to_json() == row.result


async def _no_inference(location: str, api_key: str | None) -> Inference:
    raise RuntimeError("no language model in this test")


async def test_ai_tables_of_random_and_embedding_players_finish(tmp_path) -> None:
    registry = AgentRegistry()
    register_agents(registry, connect=_no_inference, embedder_for=embedder_for)
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    service = TableService(store, settings=settings(agent_choices="random,embed:minilm", ai_timeout_s=120), agents=registry)
    service.attach(MemoryPlatform())
    await service.start()
    h = Harness(service, MemoryPlatform(), store, "", itertools.count(1))
    try:
        place = Place("memory", "arena")
        line_ups = (["random"] * 4, ["embed:minilm", "embed:minilm", "random", "embed:minilm", "random", "random"])
        for seed, agents in enumerate(line_ups, start=1):
            gid = await h.service.ai_tables.open_ai_table(tenant="console", place=place, game="spymasters", variant="classic",
                                                options={}, agents=agents, seed=seed)
            result = await asyncio.wait_for(h.service.ai_tables.wait_finished(gid), 240)
            assert result is not None
            details = result.result.details
            winners = set(result.result.winners)
            assert winners == set(details["teams"][details["winner"]])
            glog = await h.store.load_game(gid)
            sources = {a.source for a in glog.actions}
            assert sources <= {"ai", "fallback"}, sources
            if "embed:minilm" in agents:
                embed_seats = {i for i, a in enumerate(agents) if a == "embed:minilm"}
                assert any(a.seat in embed_seats and a.source == "ai" for a in glog.actions)
    finally:
        await h.close()


async def test_a_restarted_bot_gives_the_key_back_to_the_spymasters_only(tmp_path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/r.db")
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spymasters")).ok
    for user in (BOB, CAROL, DAVE):
        assert (await h.send(CommandKind.JOIN, user, HERE)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    await h.service.wait_idle()
    gid = next(iter(h.service.tables))
    table = h.service.tables[gid]
    masters = {table.seats[s].user.key for s in table.state.spymasters}
    before = {u.key: len(h.platform.dms_to(u.key)) for u in (ALICE, BOB, CAROL, DAVE)}
    h2 = await h.restart()
    try:
        for user in (ALICE, BOB, CAROL, DAVE):
            after = [m.text for m in h2.platform.dms_to(user.key)[before[user.key]:]]
            assert any(KEY_LINE in t for t in after) == (user.key in masters), user
            shown = await h2.send(CommandKind.SHOW, user, h2.service.tables[gid].place, game_id=gid)
            assert shown.ok and (KEY_LINE in shown.text) == (user.key in masters)
        await h2.play_humans(seed=5)
        row = await h2.store.game(gid)
        assert row is not None and row.status == "finished"
    finally:
        await h2.close()

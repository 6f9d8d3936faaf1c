"""Human turn deadlines: the policy acts for an absent player, also after a restart."""

from __future__ import annotations

import asyncio

from bot.core.messages import CommandKind
from tests.bot.core.conftest import ALICE, BOB, HERE, Harness, make_harness


async def start_spy(h: Harness, deadline: float) -> int:
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", deadline_s=deadline)).ok
    assert (await h.send(CommandKind.JOIN, BOB, HERE)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    return next(iter(h.service.tables))


async def wait_for(pred, timeout: float = 10.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not pred():
        if asyncio.get_running_loop().time() > end:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.05)


async def test_deadline_hands_the_turn_to_the_policy(tmp_path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/d.db", deadline_policy="takeover")
    try:
        gid = await start_spy(h, deadline=0.3)
        t = h.service.tables[gid]
        await h.service.wait_idle()
        humans = {s.seat for s in t.seats if not s.is_ai}
        # Nobody answers: deadlines make AIs take the human turns until the game ends.
        await wait_for(lambda: t.over, timeout=60)
        glog = await h.store.load_game(gid)
        taken = [a for a in glog.actions if a.seat in humans]
        assert taken and all(a.source in ("takeover", "timeout") for a in taken)
        assert any("ran out of time" in s.message.text for s in h.platform.public())
        assert not await h.store.pending_deadlines()
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_abstain_policy_uses_the_rules_neutral_action(tmp_path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/d.db", deadline_policy="abstain")
    try:
        gid = await start_spy(h, deadline=0.3)
        t = h.service.tables[gid]
        await wait_for(lambda: t.over, timeout=60)
        glog = await h.store.load_game(gid)
        humans = {s.seat for s in t.seats if not s.is_ai}
        votes = [a for a in glog.actions if a.seat in humans and a.kind == "vote"]
        assert votes and all(a.value == ["abstain"] and a.source == "timeout" for a in votes)
        texts = [a for a in glog.actions if a.seat in humans and a.kind != "vote"]
        assert all(a.source == "takeover" for a in texts), "no neutral description exists: an AI writes it"
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_deadline_survives_a_restart(tmp_path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/d.db", deadline_policy="takeover")
    gid = await start_spy(h, deadline=1.5)
    await h.service.wait_idle()
    pending = await h.store.pending_deadlines()
    assert pending, "a human owes a move and has a stored deadline"
    before = len((await h.store.load_game(gid)).actions)
    # Restart before the deadline: the new service re-arms the stored deadline and it fires.
    h2 = await h.restart(deadline_policy="takeover")
    try:
        assert gid in h2.service.tables
        t = h2.service.tables[gid]
        await wait_for(lambda: t.over, timeout=90)
        glog = await h2.store.load_game(gid)
        assert len(glog.actions) > before
        assert any(a.source == "takeover" for a in glog.actions)
    finally:
        await h2.close()


async def test_deadline_expired_while_down_fires_on_start(tmp_path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/d.db", deadline_policy="abstain")
    gid = await start_spy(h, deadline=0.5)
    await h.service.wait_idle()
    humans = {s.seat for s in h.service.tables[gid].seats if not s.is_ai}
    before = len((await h.store.load_game(gid)).actions)
    h2 = await h.restart(deadline_policy="abstain", pause_s=0.8)  # the deadline passes while the bot is down
    try:
        t = h2.service.tables[gid]
        await wait_for(lambda: t.over, timeout=90)
        after = (await h2.store.load_game(gid)).actions[before:]
        stood_in = [a for a in after if a.seat in humans]
        # Like its takeover twin, the abstain policy says who played: the rules' abstain for votes,
        # an AI for descriptions (no neutral description exists).
        assert stood_in and all((a.source, a.value) == ("timeout", ["abstain"]) if a.kind == "vote"
                                else a.source == "takeover" for a in stood_in)
    finally:
        await h2.close()

"""One option schema at every entry, start() that survives a
bad game, broken games marked and listed, deadlines of running games persisted, malformed ids
answered, finished tables let go, a read-only database refused at start."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.core.messages import CommandKind, Place
from games.play import random_action
from storage.store import DatabaseReadOnly, Store
from tests.bot.core.conftest import ALICE, BOB, HERE, Harness, human, make_harness
from tests.vocabulary import NONSENSE

ROOT = Path(__file__).resolve().parents[3]
ABSURD = [1e12, float("nan"), float("inf"), -1, "soon", "1e400", True, 10**30]


async def test_absurd_deadlines_and_options_are_refused_at_create_and_deadline(harness: Harness) -> None:
    """Item 4 (failed before: deadline=1e12 was accepted and every restart raised in start())."""
    h = harness
    for bad in ABSURD:
        r = await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", deadline_s=bad)
        assert not r.ok and "deadline" in r.text.lower(), bad
    for bad in [{"rounds": float("nan")}, {"x": float("inf")}, {"rounds": 10**40}, {"bad key": 1}, "rounds=3"]:
        r = await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", options=bad)
        assert not r.ok and "option" in r.text.lower(), bad
    assert not await h.store.games()
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", deadline_s="90")).ok
    for bad in ABSURD:
        r = await h.send(CommandKind.SET_DEADLINE, ALICE, HERE, seconds=bad)
        assert not r.ok and "deadline" in r.text.lower(), bad
    row = await h.store.lobby_at("memory", HERE.key)
    assert row is not None
    assert row.lobby["deadline_s"] == 90


async def test_malformed_ids_get_a_reply_not_an_exception(harness: Harness) -> None:
    """Item 25 (failed before: handle() raised ValueError/OverflowError)."""
    h = harness
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy")).ok
    cases: list[tuple[CommandKind, dict[str, Any]]] = [
        (CommandKind.JOIN, {"game_id": "abc"}), (CommandKind.STATUS, {"game_id": 2**63}),
        (CommandKind.ABORT, {"game_id": -5}), (CommandKind.SHOW, {"game_id": None}),
        (CommandKind.SHOW, {"game_id": "1.5"}), (CommandKind.ACT, {"game_id": "x", "seat": 0, "kind": "v", "value": ["a"]}),
        (CommandKind.ACT, {"game_id": 1, "seat": "one", "kind": "v", "value": ["a"]}),
        (CommandKind.ACT, {"game_id": 1, "seat": 2**70, "kind": "v", "value": ["a"]}),
        (CommandKind.ACT, {"game_id": 1, "seat": 0, "kind": None, "value": ["a"]}),
        (CommandKind.ACT, {"text": 42}), (CommandKind.ADD_AI, {"count": "lots"}),
        (CommandKind.ADD_AI, {"count": 10**20}), (CommandKind.START, {"seed": "x"}), (CommandKind.START, {"seed": 2**63}),
        (CommandKind.CREATE, {"game": 7}), (CommandKind.CREATE, {}),
    ]
    for kind, args in cases:
        r = await h.send(kind, ALICE, HERE, **args)
        assert not r.ok and r.text, (kind, args)


async def test_deadline_of_a_running_game_survives_a_restart(tmp_path) -> None:
    """Item 12 (failed before: update_lobby refused running games; the old value came back)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/d.db")
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy")).ok
    assert (await h.send(CommandKind.JOIN, BOB, HERE)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    gid = next(iter(h.service.tables))
    r = await h.send(CommandKind.SET_DEADLINE, ALICE, HERE, game_id=gid, seconds=3600)
    assert r.ok, r.text
    assert h.service.tables[gid].deadline_s == 3600
    h2 = await h.restart()
    try:
        assert h2.service.tables[gid].deadline_s == 3600
        row = await h2.store.game(gid)
        assert row is not None and row.lobby["deadline_s"] == 3600
    finally:
        await h2.close()


def _poke(db: Path, sql: str, *params: object) -> None:
    with sqlite3.connect(db) as c:
        c.execute(sql, params)


async def _running_spy(h: Harness, place: Place) -> int:
    assert (await h.send(CommandKind.CREATE, ALICE, place, game="spy")).ok
    assert (await h.send(CommandKind.JOIN, BOB, place)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, place, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, place)).ok
    row = await h.store.lobby_at("memory", place.key)
    assert row is not None and row.id is not None
    gid = row.id
    await h.service.wait_idle()
    table = h.service.tables[gid]
    while not (await h.store.load_game(gid)).actions:  # at least one logged move
        seat = next(s for s in sorted(table.engine.to_act(table.state)) if not table.seats[s].is_ai)
        spec = table.engine.legal(table.state, seat)
        assert spec is not None
        a = random_action(spec, random.Random(seat), NONSENSE)
        assert (await h.send(CommandKind.ACT, human(table.seats[seat]), place, game_id=gid, seat=seat,
                             kind=a.kind, value=list(a.value))).ok
        await h.service.wait_idle()
    return gid


async def test_a_game_that_no_longer_replays_is_marked_broken_and_frees_its_channel(tmp_path) -> None:
    """Items 4 and 13 (failed before: skipped with one ERROR line, channel blocked, nobody told;
    an absurd stored deadline made every start() raise)."""
    db = tmp_path / "b.db"
    h = await make_harness(f"sqlite+aiosqlite:///{db}")
    bad, good, absurd = Place("memory", "bad"), Place("memory", "good"), Place("memory", "absurd")
    bad_id, good_id, absurd_id = [await _running_spy(h, p) for p in (bad, good, absurd)]
    assert (await h.store.load_game(bad_id)).actions, "the bad game has logged actions"
    await h.close()
    _poke(db, "update actions set value = ? where game_id = ? and seq = 1", json.dumps([]), bad_id)  # no answer at all
    lobby = json.loads(sqlite3.connect(db).execute("select lobby from games where id=?", (absurd_id,)).fetchone()[0])
    lobby["deadline_s"] = 1e12  # written before options were checked
    _poke(db, "update games set lobby = ? where id = ?", json.dumps(lobby), absurd_id)
    h2 = await make_harness(f"sqlite+aiosqlite:///{db}", platform=h.platform)  # start() must not raise
    try:
        row = await h2.store.game(bad_id)
        assert row is not None
        assert row.status == "broken" and row.status_reason is not None and "logged action 1" in row.status_reason
        assert good_id in h2.service.tables and absurd_id in h2.service.tables and bad_id not in h2.service.tables
        told = [s.message.text for s in h2.platform.public() if f"Game #{bad_id} cannot go on" in s.message.text]
        assert told, "the channel is told"
        r = await h2.send(CommandKind.CREATE, ALICE, bad, game="chameleon")
        assert r.ok, "the channel is free for a new table"
    finally:
        await h2.close()
    out = subprocess.run([sys.executable, "-m", "bot.cli", "doctor", "--database", f"sqlite+aiosqlite:///{db}"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and f"#{bad_id} spy" in out.stdout and "logged action 1" in out.stdout
    assert f"#{good_id} " not in out.stdout


async def test_finished_tables_leave_memory(harness: Harness) -> None:
    """Item 25 (failed before: every finished table stayed in TableService.tables)."""
    h = harness
    gid = await h.service.ai_tables.open_ai_table(tenant="", place=Place("memory", "m"), game="chameleon", variant=None,
                                        options={}, agents=["random"] * 3, seed=4)
    await h.service.ai_tables.wait_finished(gid)
    await h.service.wait_idle()
    assert gid not in h.service.tables


async def test_a_read_only_database_is_refused_at_start(tmp_path, monkeypatch) -> None:
    """Item 25 (failed before: the bot started and failed on the first move). The URI URL names the file
    after ``file:``; opening it made a stray ``./file:`` tree in the working folder (the repository root)."""
    monkeypatch.chdir(tmp_path)
    db = tmp_path / "ro.db"
    (await Store.open(f"sqlite+aiosqlite:///{db}")).engine.sync_engine.dispose()
    h = await make_harness(f"sqlite+aiosqlite:///{db}")
    await h.close()
    store = await Store.open(f"sqlite+aiosqlite:///file:{db}?mode=ro&uri=true")
    try:
        with pytest.raises(DatabaseReadOnly, match="read-only"):
            await store.check_writable()
    finally:
        await store.aclose()
    assert not (tmp_path / "file:").exists()


async def test_duplicates_say_so_and_a_resumed_game_shows_secrets_and_history(tmp_path) -> None:
    """Item 8, service side (failed before: "Already done." with no word of why, and after a restart
    only the prompt came back, without the member's secrets or what had happened)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/r.db")
    first = await h.send(CommandKind.CREATE, ALICE, HERE, inbound="same", game="spy")
    again = await h.send(CommandKind.CREATE, ALICE, HERE, inbound="same", game="spy")
    assert first.ok and again.duplicate and "handled before" in again.text
    assert (await h.send(CommandKind.JOIN, BOB, HERE)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    await h.service.wait_idle()
    gid = next(iter(h.service.tables))
    table = h.service.tables[gid]
    alice = table.seat_of(ALICE)
    assert alice is not None
    words = [x.value for x in table.engine.secrets(table.state) if alice.seat in x.known_by and not x.among]
    sent_before = len(h.platform.dms_to(ALICE.key))
    h2 = await h.restart()
    try:
        after = [m.text for m in h2.platform.dms_to(ALICE.key)[sent_before:]]
        digest = next(t for t in after if t.startswith(f"Your secrets in game #{gid}"))
        assert all(w in digest for w in words) and "So far:" in digest
        shown = await h2.send(CommandKind.SHOW, ALICE, h2.service.tables[gid].place, game_id=gid)
        assert shown.ok and all(w in shown.text for w in words) and "So far:" in shown.text
    finally:
        await h2.close()

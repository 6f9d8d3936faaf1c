"""Each turn is written exactly once, even when the answer to its COMMIT is lost.

A TCP proxy (tests/storage/commit_proxy.py) sits between the bot and the real PostgreSQL and drops
the connection of a transaction that wrote a turn right after forwarding its COMMIT (the turn is
committed, the writer cannot know), or, now and then, just before (nothing is committed). The
writer reads back the place the turn was meant for instead of writing it again.

``HUSHTABLE_COMMIT_DROPS`` sets how many COMMITs the game run drops (6 in ``make test``; the soak
sets 20 or more, and plays the script's tables once more for every 8 drops).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.core.replays import record_of
from games.base import replay
from storage.records import ActionRecord, EventRecord, SeatRecord
from storage.store import Store
from storage.tables import ActionSource, GameStatus, SeatKind
from tests.bot.core import crash_worker
from tests.keys import RELAY_KEY
from tests.storage.commit_proxy import CommitDropProxy, Drops
from tests.storage.test_backends import Probe, normalised
from tests.storage.test_backends import pg_url_2 as pg_url_2  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
DROPS = int(os.environ.get("HUSHTABLE_COMMIT_DROPS", "6"))
COPIES = 1 + DROPS // 8


async def _running_game(store: Store) -> int:
    gid = await store.create_game(game="spy", variant="classic", config={}, platform="memory", place="chan",
                                  place_name="", host="memory:1", lobby={})
    assert gid is not None
    await store.start_game(gid, seed=1, config={}, rules_version="",
                           seats=[SeatRecord(i, SeatKind.AI, f"AI-{i}", agent_spec="random") for i in range(4)],
                           events=[EventRecord("dealt", {})])
    return gid


def _hint(seat: int, word: str, source: ActionSource = ActionSource.HUMAN) -> ActionRecord:
    return ActionRecord(seat, "describe", (word,), source, "memory:1" if source is ActionSource.HUMAN else "random")


async def test_a_turn_whose_commit_answer_is_lost_is_logged_once(pg_url: str) -> None:
    drops = Drops(every=1, limit=3, before_every=3)  # after, after, then before
    with CommitDropProxy(pg_url, drops) as proxy:
        store = await Store.open(proxy.url)
        try:
            gid = await _running_game(store)
            # A member's move: committed, answer lost; it reads back as logged, not as a redelivery.
            assert await store.append_turn(gid, action=_hint(0, "alpha"), events=[EventRecord("said", {})],
                                           inbound_key="memory:ev-1", seq=1)
            # An AI move without an inbound key: committed, answer lost; found by its content.
            assert await store.append_turn(gid, action=_hint(1, "beta", ActionSource.AI), events=[], inbound_key=None,
                                           seq=2)
            # The COMMIT itself lost: nothing committed, so the retry writes it.
            assert await store.append_turn(gid, action=_hint(2, "gamma"), events=[], inbound_key="memory:ev-3", seq=3)
            assert (drops.after, drops.before) == (2, 1)
            assert store.log._turns.recovered == 2
            glog = await store.load_game(gid)
            assert [(a.seq, a.value) for a in glog.actions] == [(1, ["alpha"]), (2, ["beta"]), (3, ["gamma"])]
            # A real redelivery of the first event (the table has moved on) is still a duplicate.
            assert not await store.append_turn(gid, action=_hint(0, "alpha"), events=[], inbound_key="memory:ev-1",
                                               seq=4)
            assert len((await store.load_game(gid)).actions) == 3
        finally:
            await store.aclose()


async def test_a_copy_behind_its_log_is_told_so_and_nothing_is_written(pg_url: str) -> None:
    from storage.records import LogAhead

    store = await Store.open(pg_url)
    try:
        gid = await _running_game(store)
        assert await store.append_turn(gid, action=_hint(0, "alpha"), events=[], inbound_key=None, seq=1)
        try:
            await store.append_turn(gid, action=_hint(1, "beta"), events=[], inbound_key="memory:ev-2", seq=1)
        except LogAhead as exc:
            assert exc.seq == 1
        else:
            raise AssertionError("a second action at one place was accepted")
        assert not await store.inbound_seen("memory:ev-2")  # the key stays unclaimed for the retry
        assert len((await store.load_game(gid)).actions) == 1
    finally:
        await store.aclose()


def test_games_through_lost_commit_answers_equal_an_undisturbed_run(request: pytest.FixtureRequest,
                                                                     pg_url_2: str) -> None:
    """The scripted AI tables of tests/bot/core/crash_worker.py, once straight and once through the
    proxy dropping turn COMMITs: the two logs are equal (no turn written twice, none lost) and
    every stored game replays to its stored result."""
    # One copy of the script: the run's shared reference (tests/storage/conftest.py); more: played here.
    url = str(request.getfixturevalue("crash_reference" if COPIES == 1 else "pg_url"))
    ref_probe, probe = Probe(url), Probe(pg_url_2)
    try:
        if COPIES > 1:
            assert crash_worker.run(url, ref_probe.actions, copies=COPIES, timeout=120 * COPIES)
        reference = normalised(ref_probe)
        turns = len(reference["actions"])
        # Every other turn transaction loses its COMMIT's answer (one drop in four loses the COMMIT
        # itself) until DROPS are done; the group commit bundles turns, so there are fewer such
        # transactions than turns.
        drops = Drops(every=2, limit=DROPS, before_every=4)
        with CommitDropProxy(pg_url_2, drops) as proxy:
            extra = [] if COPIES == 1 else ["none", "", "0", "1", str(COPIES)]
            out = subprocess.run([sys.executable, "-m", "tests.bot.core.crash_worker", proxy.url, *extra], cwd=ROOT,
                                 capture_output=True, text=True, timeout=240 * COPIES)
        assert out.returncode == 0, out.stderr[-3000:]
        assert drops.after + drops.before == DROPS, (drops, turns)
        got = normalised(probe)
        for table in ("games", "seats", "actions", "events", "inbound"):
            assert got[table] == reference[table], table
        assert {r[0] for r in probe("select status from games")} == {"finished"}
        twice = probe("select count(*) from (select game_id, inbound_id from actions where inbound_id is not null "
                      "group by game_id, inbound_id having count(*) > 1) d")[0][0]
        assert twice == 0
        print(f"exactly-once: {len(reference['games'])} games, {turns} turns, {drops.seen} turn COMMITs, "
              f"{drops.after} answers dropped after the commit, {drops.before} COMMITs dropped before it; "
              f"log equal to the undisturbed run's: 0 turns written twice, 0 lost")
    finally:
        ref_probe.close()
        probe.close()
    _replays(pg_url_2)


def _replays(url: str) -> None:
    import asyncio

    async def check() -> None:
        store = await Store.open(url)
        try:
            for row in await store.games():
                assert row.id is not None and row.status == GameStatus.FINISHED
                rec = record_of(await store.load_game(row.id))
                state, _ = replay(rec.game, rec.config, rec.seats, rec.seed, rec.actions)
                result = rec.game.result(state)
                assert result is not None and result.to_json() == row.result
        finally:
            await store.aclose()

    asyncio.run(check())


async def test_lobby_edits_a_start_and_an_abort_whose_commit_answers_are_lost_are_written_once(pg_url: str) -> None:
    """A member's lobby edits, the host's start and abort, through the proxy losing the answers to
    their COMMITs (``UPDATE games``): each reads back and is answered as done, or is written again when
    it did not land; twice lost, the member gets one sentence and nothing changed. Every reply is
    the one an undisturbed run gives; nothing is written twice."""
    from bot.core.lobby import NOT_SAVED
    from bot.core.memory import MemoryPlatform
    from bot.core.messages import Command, CommandKind, Place, UserRef
    from bot.core.service import TableService
    from bot.core.turns import DUPLICATE
    from bot.settings import Settings
    from models.agents import AgentRegistry

    host, member, place = UserRef("memory", "1", "Host"), UserRef("memory", "2", "Mia"), Place("memory", "chan")
    drops = Drops(writes=(b"UPDATE games",))
    with CommitDropProxy(pg_url, drops) as proxy:
        store = await Store.open(proxy.url)
        await store.own_tables("proc-a", timedelta(seconds=30), relay_key=RELAY_KEY)
        settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]
        service = TableService(store, settings=settings, agents=AgentRegistry())
        service.attach(MemoryPlatform())
        unknown: list[int] = []
        store.log.on_unknown = lambda: unknown.append(1)

        async def say(kind: CommandKind, args: dict[str, object], key: str, who: UserRef = host,
                      script: tuple[str | None, ...] = ()) -> tuple[bool, str]:
            drops.script[:] = script
            reply = await service.handle(Command(kind, who, place, dict(args), key, tenant="memory:t"))
            assert not drops.script, "a planned drop never happened"
            return reply.ok and not reply.duplicate, reply.text

        try:
            await service.start()
            assert await say(CommandKind.CREATE, {"game": "spy", "variant": "classic"}, "c1") \
                == (True, "Table #1 for spy (classic) is open: 3-12 seats. Others can join; add AI seats, then start.")
            # Committed, the answer lost: read back as done, not as a redelivery.
            assert await say(CommandKind.JOIN, {}, "j1", member, ("after",)) == (True, "You joined table #1.")
            # The COMMIT itself lost: nothing there, so it is written again.
            assert await say(CommandKind.ADD_AI, {"agent": "random", "count": 1}, "a1", script=("before",)) \
                == (True, "Added 1 AI seat(s) (random).")
            # Lost twice: one sentence, nothing changed; sent again, it is written once.
            assert await say(CommandKind.ADD_AI, {"agent": "random", "count": 1}, "a2",
                             script=("before", "before")) == (False, NOT_SAVED)
            assert await say(CommandKind.ADD_AI, {"agent": "random", "count": 1}, "a2") \
                == (True, "Added 1 AI seat(s) (random).")
            # The start: the lobby's thread is written, then the start's own COMMIT answer is lost.
            assert await say(CommandKind.START, {"seed": 5}, "s1", script=(None, "after")) \
                == (True, "Game #1 started.")
            assert await say(CommandKind.START, {"seed": 5}, "s1") == (False, DUPLICATE)
            assert (drops.after, drops.before) == (2, 3)
            assert len(unknown) == 5
            assert store.leases is not None and 1 in store.leases.held and 1 in service.tables
            glog = await store.load_game(1)
            assert glog.row.status == GameStatus.RUNNING
            assert sorted(s.user_key or s.agent_spec or "" for s in glog.seats) == ["memory:1", "memory:2", "random",
                                                                                     "random"]
            assert [e.seq for e in glog.events] == list(range(1, len(glog.events) + 1))
            # An abort whose answer is lost: aborted once, and its key claimed with it.
            assert await say(CommandKind.ABORT, {}, "x1", script=("after",)) == (True, "Table #1 aborted.")
            assert await say(CommandKind.ABORT, {}, "x1") == (False, DUPLICATE)
            assert (await store.load_game(1)).row.status == GameStatus.ABORTED and len(unknown) == 6
        finally:
            await service.stop()
            await store.aclose()


async def test_a_broken_mark_and_an_announcement_whose_commit_answers_are_lost_are_written_once(pg_url: str) -> None:
    """A game marked broken and a result's once-only announcement mark, through the proxy losing the
    answers to their COMMITs: each reads back instead of failing, and the announcement still answers
    True to the one caller that made it (written again, it would find the game announced, and
    nobody would post the result)."""
    drops = Drops(writes=(b"UPDATE games",))
    with CommitDropProxy(pg_url, drops) as proxy:
        store = await Store.open(proxy.url)
        unknown: list[int] = []
        store.log.on_unknown = lambda: unknown.append(1)
        try:
            ended = []
            for _ in range(2):
                gid = await _running_game(store)
                await store.finish_game(gid, status=GameStatus.FINISHED, result={"winners": [0]})
                ended.append(gid)
            # Committed, the answer lost: read back as this call's mark.
            drops.script[:] = ["after"]
            assert await store.mark_announced(ended[0])
            assert not await store.mark_announced(ended[0])  # once only
            # The COMMIT itself lost: nothing there, so it is written again.
            drops.script[:] = ["before"]
            assert await store.mark_announced(ended[1])
            # A broken mark whose answer is lost: no error, written once, its deadline cancelled with it.
            broken = await _running_game(store)
            await store.set_deadline(broken, 0, datetime.now(UTC) + timedelta(minutes=10))
            drops.script[:] = ["after"]
            await store.mark_broken(broken, "logged action 1 no longer replays with these rules")
            assert not drops.script and (drops.after, drops.before) == (2, 1) and len(unknown) == 3
            row = await store.game(broken)
            assert row is not None and row.status == GameStatus.BROKEN
            assert row.status_reason == "logged action 1 no longer replays with these rules"
            assert not [d for d in await store.pending_deadlines() if d.game_id == broken]
            assert not {r.id for r in await store.unannounced_finished()} & set(ended)
        finally:
            await store.aclose()

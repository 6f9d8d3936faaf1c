"""Several bot processes on one PostgreSQL: each running game held by one process through a lease
row with a fencing token; a dead holder's games taken over once its leases run out; a turn from a
process that lost its game refused, never applied twice. SQLite refuses a second bot process."""

from __future__ import annotations

import asyncio
import itertools
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa

from bot.core.memory import MemoryPlatform
from bot.core.messages import CommandKind
from bot.core.service import TableService
from bot.tournaments.schedule import LEASE_NAME
from models.agents import AgentRegistry
from storage.store import ActionRecord, EventRecord, NotOwner, SeatRecord, SingleProcessOnly, Store
from storage.tables import ActionSource, GameStatus, SchedulerLeaseRow, SeatKind, utcnow
from tests.bot.core.conftest import ALICE, HERE, Harness, settings
from tests.keys import RELAY_KEY

ROOT = Path(__file__).resolve().parents[2]
SEATS = [SeatRecord(0, SeatKind.HUMAN, "Alice", user_key="memory:1"), SeatRecord(1, SeatKind.AI, "AI-1", agent_spec="random")]


async def running_game(store: Store, place: str) -> int:
    gid = await store.create_game(game="spy", variant="classic", config={}, platform="memory", place=place,
                                  place_name="", host="memory:1", lobby={})
    assert gid is not None
    await store.start_game(gid, seed=1, config={}, seats=SEATS, events=[EventRecord("deal", {})], rules_version="1")
    return gid


def turn(text: str) -> ActionRecord:
    return ActionRecord(0, "hint", [text], ActionSource.HUMAN, "memory:1")


async def test_one_holder_per_game_and_a_stale_holder_logs_nothing(pg_url: str) -> None:
    ttl = timedelta(seconds=30)
    a, b = await Store.open(pg_url), await Store.open(pg_url)
    try:
        la, lb = await a.own_tables("proc-a", ttl, relay_key=RELAY_KEY), await b.own_tables("proc-b", ttl, relay_key=RELAY_KEY)
        assert la is not None and lb is not None
        games = [await running_game(a, f"c{i}") for i in range(3)]
        assert la.held == {g: 1 for g in games}  # whoever starts a game drives it
        assert await lb.acquire() == {}  # held and unexpired: nothing to take
        assert await a.append_turn(games[0], action=turn("one"), events=[], inbound_key="k1")
        with pytest.raises(NotOwner):  # b never held it
            await b.append_turn(games[0], action=turn("two"), events=[], inbound_key="k2")

        # a stops renewing (paused, or dead): once its leases ran out, b takes the games over.
        taken = await lb.acquire(now=utcnow() + ttl * 2)
        assert taken == {g: 2 for g in games}  # each takeover moves the token on
        # a wakes up and tries to log a turn under its old hold: refused, its key left unclaimed.
        with pytest.raises(NotOwner):
            await a.append_turn(games[0], action=turn("stale"), events=[], inbound_key="k3")
        assert await la.renew() == set(games)  # and renewing tells a it lost them all
        assert la.held == {}
        assert await b.append_turn(games[0], action=turn("fresh"), events=[], inbound_key="k3")
        log = await b.load_game(games[0])
        assert [(x.seq, list(x.value)) for x in log.actions] == [(1, ["one"]), (2, ["fresh"])]
        # a clean stop releases at once: a takes nothing back while b holds, everything once b lets go.
        assert await la.acquire() == {}
        await lb.release()
        assert set(await la.acquire()) == set(games)
    finally:
        await a.aclose()
        await b.aclose()


def test_a_killed_holder_is_taken_over_once_its_leases_run_out(pg_url: str) -> None:
    ttl_s = 1.5

    async def setup() -> list[int]:
        async with await Store.open(pg_url) as s:
            return [await running_game(s, f"c{i}") for i in range(4)]

    games = asyncio.run(setup())
    holder = subprocess.Popen([sys.executable, "-m", "tests.storage.lease_worker", pg_url, "holder", str(ttl_s)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == f"HELD {len(games)}"

        async def standby() -> tuple[dict[int, int], float]:
            async with await Store.open(pg_url) as s:
                leases = await s.own_tables("standby", timedelta(seconds=ttl_s), relay_key=RELAY_KEY)
                assert leases is not None
                for _ in range(5):  # the live holder keeps every game
                    assert await leases.acquire() == {}
                    await asyncio.sleep(ttl_s / 5)
                holder.kill()
                holder.wait()
                killed = time.monotonic()
                taken: dict[int, int] = {}
                while len(taken) < len(games):
                    assert time.monotonic() - killed < 20 * ttl_s, "the dead holder's games were never taken over"
                    taken |= await leases.acquire()
                    await asyncio.sleep(0.05)
                waited = time.monotonic() - killed
                assert await s.append_turn(games[0], action=turn("after"), events=[], inbound_key="after-1")
                return taken, waited

        taken, waited = asyncio.run(standby())
        assert taken == {g: 2 for g in games}
        print(f"takeover after SIGKILL: {waited:.2f} s (lease {ttl_s} s)")
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_sqlite_refuses_a_second_bot_process(tmp_path: Path) -> None:
    db = tmp_path / "one.db"
    script = ("import asyncio, sys\nfrom datetime import timedelta\nfrom storage.store import Store, SingleProcessOnly\n"
              "async def main():\n    s = await Store.open(sys.argv[1])\n    try:\n"
              "        await s.own_tables('second', timedelta(seconds=5))\n        print('OPENED')\n"
              "    except SingleProcessOnly as exc:\n        print('REFUSED', exc)\n    finally:\n        await s.aclose()\n"
              "asyncio.run(main())\n")

    async def first() -> None:
        async with await Store.open(f"sqlite+aiosqlite:///{db}") as s:
            assert await s.own_tables("first", timedelta(seconds=5)) is None  # SQLite: no leases, one process
            out = subprocess.run([sys.executable, "-c", script, f"sqlite+aiosqlite:///{db}"], cwd=ROOT,
                                 capture_output=True, text=True, timeout=60)
            assert out.stdout.startswith("REFUSED"), out.stderr
            assert "SQLite serves one bot process" in out.stdout and "PostgreSQL" in out.stdout
            with pytest.raises(SingleProcessOnly):
                async with await Store.open(f"sqlite+aiosqlite:///{db}") as again:
                    await again.own_tables("third", timedelta(seconds=5))
        # Once the first bot closed its store, the file is free for the next one.
        out = subprocess.run([sys.executable, "-c", script, f"sqlite+aiosqlite:///{db}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
        assert out.stdout.startswith("OPENED"), out.stderr

    asyncio.run(first())


async def _service(url: str, owner: str) -> Harness:
    store = await Store.open(url)
    await store.own_tables(owner, timedelta(seconds=30), relay_key=RELAY_KEY)
    service = TableService(store, settings=settings(), agents=AgentRegistry())
    platform = MemoryPlatform()
    service.attach(platform)
    await service.start()
    return Harness(service, platform, store, url, itertools.count(1))


async def test_a_table_moves_to_the_process_that_takes_it_over(pg_url: str) -> None:
    a = await _service(pg_url, "proc-a")
    b = await _service(pg_url, "proc-b")
    try:
        assert (await a.send(CommandKind.CREATE, ALICE, HERE, game="spy")).ok
        assert (await a.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=3)).ok
        assert (await a.send(CommandKind.START, ALICE, HERE)).ok
        gid = next(iter(a.service.tables))
        await a.service.wait_idle()
        assert gid not in b.service.tables  # a drives it; b resumed nothing
        await b.service.holding.hold_tables()
        assert gid not in b.service.tables
        logged = len((await b.store.load_game(gid)).actions)

        # a stops renewing; once its lease ran out, b takes the table over and resumes it.
        assert b.store.leases is not None
        assert await b.store.leases.acquire(now=utcnow() + timedelta(minutes=5)) == {gid: 2}
        await b.service.holding.hold_tables()
        assert gid in b.service.tables
        assert b.platform.dms_to(ALICE.key), "the new holder re-sent Alice her secret and the story"
        await a.service.holding.hold_tables()  # a's next renewal: it lost the game and lets the table go
        assert gid not in a.service.tables
        assert len((await a.store.load_game(gid)).actions) == logged

        await b.play_humans()
        row = await b.store.game(gid)
        assert row is not None and row.status == "finished"
    finally:
        await a.close()
        await b.close()


def test_one_scheduler_per_database_and_a_standby_takes_over(pg_url: str) -> None:
    """The tournament scheduler's lease across processes: the first process runs it, a second stands
    by, and once the first is SIGKILLed the standby runs it within about one lease time."""
    ttl_s = 1.5

    def scheduler(owner: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "tests.storage.scheduler_worker", pg_url, owner, str(ttl_s)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    async def migrate() -> None:
        async with await Store.open(pg_url):
            pass

    asyncio.run(migrate())  # the schema first, so the two start-ups only race for the lease
    first = scheduler("first")
    standby = None
    try:
        assert first.stdout is not None and first.stdout.readline().strip() == "ACTIVE"
        standby = scheduler("standby")
        assert standby.stdout is not None and standby.stdout.readline().strip() == "STANDBY"
        first.kill()
        first.wait()

        async def holder_after_kill() -> tuple[str, float]:
            killed = time.monotonic()
            async with await Store.open(pg_url) as s:
                while True:
                    assert time.monotonic() - killed < 20 * ttl_s, "the standby never took the scheduler over"
                    async with s.read() as session:
                        row = await session.get(SchedulerLeaseRow, LEASE_NAME)
                    if row is not None and row.owner == "standby":
                        return row.owner, time.monotonic() - killed
                    await asyncio.sleep(0.05)

        owner, waited = asyncio.run(holder_after_kill())
        assert owner == "standby"
        print(f"scheduler taken over {waited:.2f} s after SIGKILL (lease {ttl_s} s)")
    finally:
        for p in (first, standby):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


async def test_a_hold_past_its_lease_writes_nothing_by_the_local_clock_and_by_the_database_clock(pg_url: str) -> None:
    ttl = timedelta(seconds=30)
    store = await Store.open(pg_url)
    try:
        leases = await store.own_tables("proc-a", ttl, relay_key=RELAY_KEY)
        assert leases is not None
        gid = await running_game(store, "c0")
        assert leases.live(gid)
        assert await store.append_turn(gid, action=turn("one"), events=[], inbound_key="k1")
        frozen_for = 0.0
        leases.clock = lambda: time.monotonic() + frozen_for
        frozen_for = ttl.total_seconds() + 1  # as after a pause past the lease: nothing asked the database yet
        assert not leases.live(gid) and leases.fence(gid) is not None
        with pytest.raises(NotOwner):
            await store.append_turn(gid, action=turn("stale"), events=[], inbound_key="k2")
        with pytest.raises(NotOwner):
            await store.set_deadline(gid, 0, utcnow())
        with pytest.raises(NotOwner):
            await store.finish_game(gid, status=GameStatus.FINISHED, result={})
        assert await leases.renew() == set()  # nobody took it: renewed, live again
        assert leases.live(gid)
        assert await store.set_deadline(gid, 0, utcnow() + ttl)
        # The database's clock decides too: a lease that ran out there refuses the write even when
        # this process believes it is live.
        async with store.engine.begin() as conn:
            await conn.execute(sa.text("update table_leases set expires_at = now() - interval '1 second'"))
        with pytest.raises(NotOwner):
            await store.append_turn(gid, action=turn("late"), events=[], inbound_key="k3")
        with pytest.raises(NotOwner):
            await store.clear_deadlines(gid)
        log = await store.load_game(gid)
        assert [list(a.value) for a in log.actions] == [["one"]]
        assert [d.seat for d in await store.pending_for([gid])] == [0]
    finally:
        await store.aclose()

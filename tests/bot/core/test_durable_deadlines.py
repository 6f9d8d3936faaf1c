"""Deadlines survive database errors: a timer whose write fails waits and tries again instead of
dying, and a supervisor round arms a stored deadline that has no timer (on a real SQLite log;
the failures are injected into the store's deadline write, the rest is the real service)."""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa

from bot.core.messages import CommandKind, Place
from tests.bot.core.conftest import ALICE, HERE, Harness


async def timeouts(h: Harness, game_id: int) -> int:
    log = await h.store.load_game(game_id)
    return sum(a.source == "timeout" for a in log.actions)


async def start_spy(h: Harness, deadline_s: float) -> int:
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", deadline_s=deadline_s)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=3)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE, seed=3)).ok
    (gid,) = list(h.service.tables)
    return gid


async def wait_for(check: Any, what: str, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not await check():
        assert loop.time() < end, what
        await asyncio.sleep(0.02)


async def test_a_deadline_whose_write_fails_is_tried_again_and_still_fires(harness: Harness) -> None:
    h = harness
    real = h.store.finish_deadline
    failures = 0

    async def flaky(deadline_id: int, game_id: int | None = None, **kw: Any) -> bool:
        nonlocal failures
        if failures < 2:  # the database is away for the first two tries
            failures += 1
            raise sa.exc.OperationalError("UPDATE deadlines", {}, ConnectionError("server closed the connection"))
        return await real(deadline_id, game_id, **kw)

    h.store.finish_deadline = flaky
    gid = await start_spy(h, 0.2)

    async def timed_out() -> bool:
        return await timeouts(h, gid) > 0

    await wait_for(timed_out, "the deadline died with the database error")
    assert failures == 2


async def test_a_stored_deadline_without_a_timer_is_armed_by_the_supervisor(harness: Harness) -> None:
    h = harness
    gid = await start_spy(h, 0.5)

    async def armed() -> bool:
        return h.service.deadlines.open > 0

    await wait_for(armed, "Alice was never given a deadline")
    h.service.deadlines.cancel(gid)  # the timer is gone (as a timer that died would be); the row stays pending
    assert h.service.deadlines.open == 0 and await h.store.pending_for([gid])
    await asyncio.sleep(0.6)
    assert await timeouts(h, gid) == 0  # nothing fires it: the seat would wait for ever
    await h.service.holding.supervise_once()

    async def timed_out() -> bool:
        return await timeouts(h, gid) > 0

    await wait_for(timed_out, "the supervisor did not arm the stored deadline")


async def test_a_game_whose_end_meets_a_database_error_still_ends_once(harness: Harness) -> None:
    """The write of a game's end fails twice: once before it committed, then once after (its
    answer was lost). The game still ends for good, is announced once and leaves memory."""
    h = harness
    real = h.store.finish_game
    failures = 0

    async def flaky(game_id: int, **kw: Any) -> bool:
        nonlocal failures
        if failures < 2:
            failures += 1
            if failures == 2:
                await real(game_id, **kw)  # committed; the answer never arrives
            raise sa.exc.OperationalError("UPDATE games", {}, ConnectionError("server closed the connection"))
        return await real(game_id, **kw)

    h.store.finish_game = flaky
    gid = await start_spy(h, 0.05)

    async def ended() -> bool:
        row = await h.store.game(gid)
        return row is not None and row.status == "finished" and gid not in h.service.tables

    await wait_for(ended, "the game's end was never saved, or the table never left memory")
    assert failures == 2
    await asyncio.sleep(0.2)
    assert sum(f"Game #{gid} is over" in (s.message.title or "") for s in h.platform.public()) == 1


async def test_an_ai_table_whose_turns_meet_a_database_error_is_driven_again_soon(harness: Harness) -> None:
    """Every AI turn write fails for a while (more tries than the driver makes): the table is
    driven again seconds later, not only by the supervisor's next round (30 s)."""
    h = harness
    real = h.store.append_turn
    failures = 0

    async def flaky(*args: Any, **kw: Any) -> bool:
        nonlocal failures
        if failures < 6:
            failures += 1
            raise sa.exc.OperationalError("INSERT INTO actions", {}, ConnectionError("server closed the connection"))
        return await real(*args, **kw)

    h.store.append_turn = flaky
    gid = await h.service.ai_tables.open_ai_table(tenant="console", place=Place("memory", "arena"), game="spy",
                                        variant="classic", options={}, agents=["random"] * 4, seed=3)
    result = await asyncio.wait_for(h.service.ai_tables.wait_finished(gid), 20)
    assert result is not None and failures == 6


async def test_a_deadline_whose_done_mark_lost_its_commit_answer_still_fires_at_once(harness: Harness) -> None:
    """Marking a deadline done commits, but its answer is lost: the retry reads the deadline back
    as done by itself and plays the timeout, instead of leaving the seat to the supervisor."""
    h = harness
    real = h.store.finish_deadline
    lost = 0

    async def answer_lost(deadline_id: int, game_id: int | None = None, **kw: Any) -> bool:
        nonlocal lost
        done = await real(deadline_id, game_id, **kw)
        if lost == 0:
            lost += 1
            raise sa.exc.OperationalError("COMMIT", {}, ConnectionError("server closed the connection"))
        return done

    h.store.finish_deadline = answer_lost
    gid = await start_spy(h, 0.2)

    async def timed_out() -> bool:
        return await timeouts(h, gid) > 0

    await wait_for(timed_out, "a deadline whose done mark lost its answer never fired", timeout=10)
    assert lost == 1

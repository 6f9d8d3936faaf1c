"""The outbox's sent marks written by the turn log (``storage.turnlog``), on both backends: in
the next group's transaction when turns are queued, alone when none is, apart from a group that
fails, and once only."""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa

from storage.records import EventRecord, OutboxRecord
from storage.store import Store
from tests.storage.test_store import UNSERIALISABLE, hint, new_running_game


def commits(store: Store) -> list[int]:
    """A list that grows by one at each commit of the turn log's engine."""
    turnlog = store._turnlog  # noqa: SLF001 - the engine its groups commit on
    engine = turnlog.engine if turnlog.engine is not None else turnlog.writer.sync_engine
    seen: list[int] = []
    sa.event.listen(engine, "commit", lambda conn: seen.append(1))
    return seen


def messages(*ids: str) -> list[OutboxRecord]:
    return [OutboxRecord(i, None, {"text": f"message {i}"}) for i in ids]


async def unsent_ids(store: Store, gid: int) -> list[str]:
    return [r.id for r in await store.unsent([gid])]


async def test_marks_ride_in_the_next_turns_transaction(store: Store) -> None:
    gid = await new_running_game(store)
    assert await store.append_turn(gid, action=hint(), events=[EventRecord("hint", {})], inbound_key="k1",
                                   outbox=messages("a", "b"))
    seen = commits(store)
    logged, marked = await asyncio.gather(
        store.append_turn(gid, action=hint(seat=1, actor="discord:222"), events=[], inbound_key="k2",
                          outbox=messages("c")),
        store.mark_sent(["a", "b", "a"]))
    assert logged is True and marked == 2
    assert len(seen) == 1  # the turn and the marks: one transaction
    assert await unsent_ids(store, gid) == ["c"]
    # Alone when no turn is queued, and once only.
    assert await store.mark_sent(["b", "c"]) == 1
    assert len(seen) == 2
    assert await store.mark_sent(["c"]) == 0 and await store.mark_sent([]) == 0
    assert await unsent_ids(store, gid) == []


async def test_a_failing_group_does_not_lose_the_marks(store: Store) -> None:
    gid = await new_running_game(store)
    assert await store.append_turn(gid, action=hint(), events=[], inbound_key="k1", outbox=messages("a"))
    bad: Any = {"x": object()}
    results = await asyncio.gather(
        store.append_turn(gid, action=hint(), events=[EventRecord("bad", bad)], inbound_key="k2"),
        store.mark_sent(["a"]), return_exceptions=True)
    assert isinstance(results[0], UNSERIALISABLE)
    assert results[1] == 1
    assert await unsent_ids(store, gid) == []


async def test_two_writers_marking_the_same_messages_in_opposite_orders_never_wait_for_each_other(
        pg_url: str) -> None:
    """During a takeover the old holder and the new one may mark the same messages sent, each in
    a group commit of its own that carries several batches of marks in any order: one marks a then
    b, the other b then a. A mark waits for no other writer's row (it is that writer's to mark), so
    neither waits and the server has no deadlock to break (it used to roll one group back)."""
    from storage.outbox import mark_sent_in

    store = await Store.open(pg_url)
    try:
        gid = await new_running_game(store)
        assert await store.append_turn(gid, action=hint(0), events=[EventRecord("hint", {})], inbound_key=None,
                                       outbox=messages("m-a", "m-b"))
        async with store.engine.connect() as one, store.engine.connect() as two:
            for conn in (one, two):
                await conn.begin()
                await conn.execute(sa.text("SET LOCAL lock_timeout = '5s'"))
            assert await one.run_sync(mark_sent_in, ["m-a"]) == 1
            assert await two.run_sync(mark_sent_in, ["m-b"]) == 1
            crossed = asyncio.ensure_future(one.run_sync(mark_sent_in, ["m-b"]))
            await asyncio.sleep(0.2)  # the first one's second batch is at the server first
            second = await asyncio.wait_for(two.run_sync(mark_sent_in, ["m-a"]), 10)
            first = await asyncio.wait_for(crossed, 10)
            assert (first, second) == (0, 0)  # each the other's: marked once, by the other
            await one.commit()
            await two.commit()
        async with store.engine.connect() as conn:
            marked = (await conn.execute(sa.text("select count(*) from outbox where sent_at is not null"))).scalar()
        assert marked == 2
    finally:
        await store.aclose()

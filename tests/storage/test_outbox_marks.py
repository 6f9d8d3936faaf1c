"""The outbox's sent marks written by the turn log (``storage.turnlog``), on both backends: in
the next group's transaction when turns are queued, alone when none is, apart from a group that
fails, and once only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import sqlalchemy as sa

from storage.records import EventRecord, OutboxRecord
from storage.store import Store
from tests.storage.test_store import UNSERIALISABLE, hint, new_running_game


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    st = await Store.open(db_url)
    try:
        yield st
    finally:
        await st.aclose()


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

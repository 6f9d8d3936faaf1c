"""How a store writes a real SQLite file: WAL checkpoints off the writers' path
(``storage.checkpoint``), and commits on the event loop only while no other process holds the
file's write lock (``storage.engine.write_now``).

What the database file itself holds is read through ``immutable=1``, which ignores the WAL: a row
found there has been checkpointed."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import sqlalchemy as sa

from storage.checkpoint import Checkpointer
from storage.store import ActionRecord, EventRecord, SeatRecord, Store
from storage.tables import ActionSource, GameStatus, SeatKind

BIG = "x" * 6000  # about two pages an event: the WAL passes SQLite's automatic threshold quickly


async def running_game(store: Store) -> int:
    gid = await store.create_game(game="spy", variant="classic", config={}, platform="console", place="c",
                                  place_name="#c", host="console:a", lobby={})
    assert gid is not None
    await store.start_game(gid, seed=1, config={}, seats=[SeatRecord(0, SeatKind.HUMAN, "A", user_key="console:a")],
                           events=[], rules_version="spy/1")
    return gid


async def write_turns(store: Store, gid: int, n: int, key: str = "k") -> None:
    await asyncio.gather(*(
        store.append_turn(gid, action=ActionRecord(0, "clue", [f"w{i}"], ActionSource.HUMAN, "console:a"),
                          events=[EventRecord("note", {"pad": BIG}, [0])], inbound_key=f"{key}{i}")
        for i in range(n)))


def checkpointed_actions(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM actions").fetchone()[0])
    finally:
        conn.close()


async def restart(cp: Checkpointer, every_s: float) -> None:
    """Start the checkpointer's loop again at ``every_s``: one checkpoint now, then a wait."""
    if cp._task is not None:
        cp._task.cancel()
        await asyncio.gather(cp._task, return_exceptions=True)
    cp.every_s = every_s
    runs = cp.runs
    cp.wrote()
    for _ in range(200):
        if cp.runs > runs:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the checkpointer did not run")


def wal_pages(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return (wal.stat().st_size - 32) // (4096 + 24) if wal.exists() else 0


async def test_commits_never_checkpoint_and_the_checkpointer_does(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    store = await Store.open(f"sqlite:///{path}")
    try:
        assert store.checkpointer is not None
        async with store.engine.connect() as conn:
            assert (await conn.execute(sa.text("PRAGMA wal_autocheckpoint"))).scalar_one() == 0
        assert store.sync_writer is not None
        with store.sync_writer.connect() as sync_conn:
            assert sync_conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar_one() == 0
        gid = await running_game(store)
        # Stall the checkpointer (one run now, then it waits an hour): whatever reaches the database
        # file while it waits was copied by a commit, and nothing may be.
        await restart(store.checkpointer, 3600.0)
        stalled_at = store.checkpointer.runs
        await write_turns(store, gid, 700)
        assert wal_pages(path) > 1000, "the WAL passed SQLite's automatic-checkpoint threshold"
        assert checkpointed_actions(path) == 0, "a commit ran a checkpoint"
        assert store.checkpointer.runs == stalled_at
        # The checkpointer, woken, copies the WAL into the database file.
        await restart(store.checkpointer, 0.05)
        for _ in range(200):
            if checkpointed_actions(path) == 700:
                break
            await asyncio.sleep(0.05)
        assert checkpointed_actions(path) == 700
        assert store.checkpointer.failures == 0
    finally:
        await store.aclose()
    assert checkpointed_actions(path) == 700


async def test_a_failed_checkpoint_is_logged_and_writes_go_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "h.db"
    store = await Store.open(f"sqlite:///{path}")
    try:
        assert store.checkpointer is not None
        await restart(store.checkpointer, 0.05)
        await asyncio.sleep(0.1)  # idle now (nothing written since)
        store.checkpointer._close_conn()  # idle now: the next checkpoint opens the path again
        store.checkpointer.path = tmp_path / "no-such-folder" / "h.db"  # which can no longer be opened
        gid = await running_game(store)
        with caplog.at_level(logging.WARNING, logger="storage.checkpoint"):
            await write_turns(store, gid, 5)
            for _ in range(100):
                if store.checkpointer.failures:
                    break
                await asyncio.sleep(0.05)
        assert store.checkpointer.failures >= 1
        assert "WAL checkpoint failed (OperationalError)" in caplog.text
        await write_turns(store, gid, 5, key="after")  # writes never wait on it
        assert len((await store.load_game(gid)).actions) == 10
    finally:
        await store.aclose()


async def test_a_write_waits_for_another_process_in_a_thread_not_on_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    store = await Store.open(f"sqlite:///{path}")
    other = sqlite3.connect(path, isolation_level=None)  # another process's write, as SQLite sees it
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick = asyncio.create_task(ticker())
    try:
        gid, ended = await running_game(store), await running_game(store)
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE games SET place_name = '#other' WHERE id = ?", (gid,))
        turn = asyncio.create_task(write_turns(store, gid, 3))  # a group commit
        end = asyncio.create_task(store.finish_game(ended, status=GameStatus.FINISHED, result={"winners": [0]}))  # write_sync
        await asyncio.sleep(0.5)
        assert not turn.done() and not end.done(), "written while another process held the file"
        assert ticks >= 20, f"the event loop stood still while the writes waited ({ticks} ticks in 0.5 s)"
        other.execute("COMMIT")
        await asyncio.wait_for(asyncio.gather(turn, end), 10)
        log = await store.load_game(gid)
        assert len(log.actions) == 3 and log.row.place_name == "#other"
        assert (await store.load_game(ended)).row.status == GameStatus.FINISHED
    finally:
        tick.cancel()
        other.close()
        await store.aclose()


async def test_a_long_write_runs_off_the_loop_and_a_short_one_on_it(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    loop_thread = threading.get_ident()
    ran: list[tuple[str, bool]] = []

    def note(name: str) -> Callable[[sa.Connection], int]:
        def fn(conn: sa.Connection) -> int:
            ran.append((name, threading.get_ident() == loop_thread))
            return int(conn.exec_driver_sql("SELECT count(*) FROM games").scalar_one())
        return fn

    try:
        assert await store.write_sync(note("turn")) == 0  # the lock free: on the loop, about a millisecond
        assert await store.write_sync(note("erasure"), on_loop=False) == 0
        assert ran == [("turn", True), ("erasure", False)]
    finally:
        await store.aclose()


async def test_an_erasure_writes_in_a_worker_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from storage import people

    store = await Store.open(f"sqlite:///{tmp_path / 'h.db'}")
    seen: list[bool] = []
    real = people._erase_games

    def spy(conn: sa.Connection, key: str, plans: Sequence[people.GameErasure]) -> people.ErasedGames:
        seen.append(threading.get_ident() == threading.main_thread().ident)
        return real(conn, key, plans)

    monkeypatch.setattr(people, "_erase_games", spy)
    try:
        done = await people.erase_games(store, "memory:1", [])
        assert done.rows == 0 and seen == [False]
    finally:
        await store.aclose()

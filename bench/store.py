"""Micro-benchmark of the game log: per-turn latency of ``Store.append_turn`` on SQLite (WAL,
synchronous=NORMAL), against the naive ORM way (one ``session.add`` per row), plus load time.

    .venv/bin/python bench/store.py [--turns 2000] [--games 4]

Prints numbers and ratios; asserts nothing (tests assert behaviour, not timings).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from sqlmodel.ext.asyncio.session import AsyncSession

from storage.store import ActionRecord, AgentCallRecord, EventRecord, SeatRecord, Store
from storage.tables import ActionRow, ActionSource, AgentOperation, EventRow, InboundRow, SeatKind, utcnow

SEATS = [SeatRecord(0, SeatKind.HUMAN, "A", user_key="discord:1"), SeatRecord(1, SeatKind.AI, "B", agent_spec="llm:x")]


async def _game(store: Store) -> int:
    gid = await store.create_game(
        game="decrypto", variant="benchmark", config={}, platform="discord", place="c", place_name="", host="discord:1", lobby={}
    )
    assert gid is not None, "the store gave the new game no id"
    await store.start_game(gid, seed=1, config={}, seats=SEATS, events=[EventRecord("deal", {})], rules_version="1")
    return gid


def _turn(i: int) -> tuple[ActionRecord, list[EventRecord], list[AgentCallRecord]]:
    action = ActionRecord(i % 2, "hint", ["alpha", "beta", "gamma"], ActionSource.HUMAN if i % 2 == 0 else ActionSource.AI, "discord:1")
    events = [EventRecord("hint", {"words": ["alpha", "beta", "gamma"], "i": i}), EventRecord("private", {"i": i}, [1])]
    calls = [] if i % 2 == 0 else [AgentCallRecord(1, "llm:x", AgentOperation.GENERATE, "x", [{"role": "user", "content": "p" * 400}], "alpha")]
    return action, events, calls


async def bench_store(path: Path, turns: int, games: int) -> dict[str, float]:
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    try:
        gids = [await _game(store) for _ in range(games)]
        lat: list[float] = []
        t0 = time.perf_counter()
        for i in range(turns):
            action, events, calls = _turn(i)
            s = time.perf_counter()
            await store.append_turn(gids[i % games], action=action, events=events, inbound_key=f"k{i}", agent_calls=calls)
            lat.append(time.perf_counter() - s)
        seq_total = time.perf_counter() - t0

        # Many games at once, as a busy bot would see them.
        t0 = time.perf_counter()
        await asyncio.gather(
            *(
                store.append_turn(gids[i % games], action=_turn(i)[0], events=_turn(i)[1], inbound_key=f"c{i}")
                for i in range(turns)
            )
        )
        conc_total = time.perf_counter() - t0

        t0 = time.perf_counter()
        logs = await store.unfinished_games()
        load = time.perf_counter() - t0
        assert sum(len(log.actions) for log in logs) == 2 * turns
        return {
            "mean_ms": 1000 * statistics.fmean(lat),
            "p50_ms": 1000 * statistics.median(lat),
            "p99_ms": 1000 * sorted(lat)[int(0.99 * (len(lat) - 1))],
            "turns_per_s": turns / seq_total,
            "concurrent_turns_per_s": turns / conc_total,
            "load_all_ms": 1000 * load,
        }
    finally:
        await store.aclose()


async def bench_orm_naive(path: Path, turns: int) -> float:
    """The same rows through ORM objects, one commit per turn: the baseline the store avoids."""
    store = await Store.open(f"sqlite+aiosqlite:///{path}")
    try:
        gid = await _game(store)
        t0 = time.perf_counter()
        for i in range(turns):
            action, events, _ = _turn(i)
            async with AsyncSession(store.engine) as s:
                now = utcnow()
                s.add(InboundRow(key=f"k{i}", game_id=gid, created_at=now))
                s.add(ActionRow(game_id=gid, seq=i + 1, seat=action.seat, kind=action.kind, value=list(action.value),
                                source=action.source, actor=action.actor, created_at=now))
                for j, e in enumerate(events):
                    s.add(EventRow(game_id=gid, seq=2 + 2 * i + j, action_seq=i + 1, kind=e.kind, data=dict(e.data),
                                   audience=e.audience_json, created_at=now))
                await s.commit()
        return turns / (time.perf_counter() - t0)
    finally:
        await store.aclose()


async def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--turns", type=int, default=2000)
    p.add_argument("--games", type=int, default=4)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        r = await bench_store(Path(d) / "store.db", a.turns, a.games)
        orm = await bench_orm_naive(Path(d) / "orm.db", a.turns)
    print(f"append_turn: mean {r['mean_ms']:.2f} ms, p50 {r['p50_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms "
          f"({r['turns_per_s']:.0f} turns/s sequential, {r['concurrent_turns_per_s']:.0f} turns/s gathered)")
    print(f"ORM add+commit per turn: {orm:.0f} turns/s; store/ORM ratio {r['turns_per_s'] / orm:.2f}x")
    print(f"load {a.games} running games with {2 * a.turns} actions: {r['load_all_ms']:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())

"""Table service load: N concurrent lobbies of random players on a real SQLite file.

Every command goes through TableService.handle (validate, apply, durable append in one
transaction, fan-out to an in-memory platform). Two loads are measured side by side:

- paced: each player thinks for a random while (mean --think seconds) before acting,
  as people do; this is the latency a player sees with N tables running;
- saturated: players act as fast as the service answers; this is the ceiling.

Prints actions per second, p50/p99 latency of handling a command, log rows per second, and the
garbage collections during play (how many, and the longest: each stops every command in flight).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.core.memory import MemoryPlatform  # noqa: E402
from bot.core.messages import Command, CommandKind, MessageRef, Outgoing, Place, Reply, UserRef  # noqa: E402
from bot.core.service import TableService  # noqa: E402
from bot.settings import Settings  # noqa: E402
from games.play import random_action  # noqa: E402
from models.agents import AgentRegistry  # noqa: E402
from storage.store import Store  # noqa: E402

GAMES = [("chameleon", "classic", 4), ("spy", "classic", 4), ("decrypto", "benchmark", 3)]


class Lean(MemoryPlatform):
    """Counts messages instead of keeping them, so memory does not skew a long run."""

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        return _ref()

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        return _ref()

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        return None


def _ref() -> MessageRef:
    return MessageRef("memory", "c", "1")


async def log_rows(store: Store) -> int:
    import sqlalchemy as sa

    total = 0
    async with store.engine.connect() as conn:
        for t in ("actions", "events", "inbound", "agent_calls"):
            total += (await conn.execute(sa.text(f"select count(*) from {t}"))).scalar() or 0
    return total


async def run(n: int, think: float, seed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        store = await Store.open(f"sqlite+aiosqlite:///{d}/bench.db")
        service = TableService(store, settings=Settings(_env_file=None, default_agent="random"), agents=AgentRegistry())  # type: ignore[call-arg]  # _env_file: a pydantic-settings init-only option the plugin does not see
        service.attach(Lean())
        await service.start()
        ids = iter(range(10**9))
        latencies: list[float] = []

        async def handle(command: CommandKind, user: UserRef, place: Place, **args: Any) -> Reply:
            t0 = time.perf_counter()
            reply = await service.handle(Command(command, user, place, args, inbound_id=f"b{next(ids)}"))
            latencies.append(time.perf_counter() - t0)
            return reply

        # Open the tables (not timed as play).
        tables = []
        for i in range(n):
            game, variant, seats = GAMES[i % len(GAMES)]
            place = Place("memory", f"chan-{i}")
            users = [UserRef("memory", f"{i}-{k}", f"P{k}") for k in range(seats)]
            await service.handle(Command(CommandKind.CREATE, users[0], place, {"game": game, "variant": variant}))
            for u in users[1:]:
                await service.handle(Command(CommandKind.JOIN, u, place, {}))
            await service.handle(Command(CommandKind.START, users[0], place, {"seed": seed + i}))
            tables.append((place, users))
        latencies.clear()

        # Found once: a scan of every table for each player would stop the loop while the timed
        # play starts (a second at 1,000 tables), a cost of the harness, not of the service.
        by_channel = {t.place.channel: t for t in service.tables.values()}

        async def play(i: int) -> int:
            r = random.Random(seed * 7919 + i)
            table = by_channel[f"chan-{i}"]
            moves = 0
            while not table.over:
                acting = sorted(table.engine.to_act(table.state))
                if not acting:
                    await asyncio.sleep(0.001)
                    continue
                s = r.choice(acting)
                spec = table.engine.legal(table.state, s)
                if spec is None:  # the seat has nothing to do after all
                    continue
                a = random_action(spec, r)
                if think:
                    await asyncio.sleep(r.expovariate(1 / think))
                    if table.over or s not in table.engine.to_act(table.state):
                        continue
                user = table.seats[s].user
                assert user is not None, "every seat of these tables is a member's"
                reply = await handle(CommandKind.ACT, user, table.place, game_id=table.game_id,
                                     seat=s, kind=a.kind, value=list(a.value))
                moves += reply.ok
            return moves

        pauses: list[float] = []
        began = [0.0]

        def collected(phase: str, info: dict[str, Any]) -> None:
            if phase == "start":
                began[0] = time.perf_counter()
            else:
                pauses.append(time.perf_counter() - began[0])

        rows0 = await log_rows(store)
        gc.callbacks.append(collected)
        t0 = time.perf_counter()
        try:
            moves = sum(await asyncio.gather(*(play(i) for i in range(n))))
        finally:
            gc.callbacks.remove(collected)
        wall = time.perf_counter() - t0
        rows1 = await log_rows(store)
        await service.stop()
        await store.aclose()
    lat = sorted(latencies)
    return {
        "lobbies": n,
        "think_s": think,
        "actions": moves,
        "actions_per_s": moves / wall,
        "p50_ms": 1000 * statistics.median(lat),
        "p99_ms": 1000 * lat[int(0.99 * (len(lat) - 1))],
        "rows_per_s": (rows1 - rows0) / wall,
        "wall_s": wall,
        "gc_collections": len(pauses),
        "gc_max_ms": 1000 * max(pauses, default=0.0),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lobbies", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--think", type=float, default=5.0, help="mean seconds a player thinks before acting (paced load)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print(f"{'lobbies':>8} {'load':>10} {'actions':>8} {'act/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'rows/s':>8} {'wall s':>7} {'gcs':>5} {'gc max ms':>9}")
    for n in args.lobbies:
        for think in (args.think, 0.0):
            r = asyncio.run(run(n, think, args.seed))
            load = f"paced {think:g}s" if think else "saturated"
            print(f"{r['lobbies']:>8} {load:>10} {r['actions']:>8} {r['actions_per_s']:>8.0f} {r['p50_ms']:>8.2f} "
                  f"{r['p99_ms']:>8.2f} {r['rows_per_s']:>8.0f} {r['wall_s']:>7.1f} {r['gc_collections']:>5} "
                  f"{r['gc_max_ms']:>9.1f}", flush=True)


if __name__ == "__main__":
    main()

"""Server time of the web view's two heaviest pages, over a real database played by the table service:

- a replay of a game of at least 100 moves (target: under 300 ms), beside the way a page per step
  would rebuild each seat's view (``observe`` for every seat at every step), which the replay page
  avoids by sorting each event to its audience once, as the game is replayed;
- a leaderboard of a tournament with 2,000 matches (target: under 500 ms), its games read in one
  query instead of one per match.

    .venv/bin/python bench/web.py [--requests 15]

Times are whole requests over loopback (aiohttp client to the site's server: routing, the signed-link
check, the store's reads, the replay, Jinja2), median and worst of ``--requests`` after one warm-up.
Prints numbers; asserts nothing (tests assert behaviour, not timings).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
import sqlalchemy as sa

from bot.core.memory import MemoryPlatform
from bot.core.messages import Place
from bot.core.replays import record_of
from bot.core.service import TableService
from bot.settings import Settings
from bot.web import links
from bot.web.server import Site, WebServer
from models.agents import AgentRegistry
from storage import tournaments as repo
from storage.export_secret import export_secret
from storage.store import Store
from storage.tables import MatchStatus, TournamentMatchRow, table_of

TENANT = "console"
REPLAY_TARGET_MS, BOARD_TARGET_MS = 300.0, 500.0
ENTRANTS = [f"random:{c}" for c in "abcdefgh"]


async def _long_game(service: TableService, store: Store, moves: int) -> int:
    """An AI-only game of at least ``moves`` moves (8 seats of Spymasters or Who-is-Spy, seeds in turn)."""
    for seed in range(1, 200):
        for game in ("spymasters", "spy"):
            gid = await service.ai_tables.open_ai_table(tenant=TENANT, place=Place("memory", f"b{seed}{game}"), game=game,
                                              variant="classic", options={}, agents=["random"] * 8, seed=seed,
                                              spectate=False)
            await service.ai_tables.wait_finished(gid)
            if len((await store.load_game(gid)).actions) >= moves:
                return gid
    raise SystemExit("no game reached the length asked for")


async def _big_tournament(store: Store, game_id: int, matches: int) -> int:
    plans = [repo.MatchPlanRecord(i, [ENTRANTS[(i + k) % len(ENTRANTS)] for k in range(8)], i, i // 2) for i in range(matches)]
    tid = await repo.create_tournament(store, tenant=TENANT, name="bench", game="spy", variant="classic", options={},
                                       entrants=ENTRANTS, format="round_robin", seats=8, games_per_pairing=1,
                                       duplicate=False, seed=1, matches=plans)
    m = table_of(TournamentMatchRow)
    async with store.write() as conn:  # every match played: each points at a finished game, as the runner leaves them
        await conn.execute(sa.update(m).where(m.c.tournament_id == tid).values(status=MatchStatus.FINISHED.value, game_id=game_id))
    await repo.save_ratings(store, tid, "spy", "classic", [
        repo.RatingRecord(e, i + 1, 30.0 - i, 1.0, 28.0 - i, 32.0 - i, matches, {}) for i, e in enumerate(ENTRANTS)])
    return tid


def _naive_views(store_log: object) -> float:
    """The page-per-step way: each seat's whole observation rebuilt at every step."""
    rec = record_of(store_log)  # type: ignore[arg-type]
    start = time.perf_counter()
    state, _ = rec.game.new(rec.config, rec.seats, rec.seed)
    for seat, action in rec.actions:
        state, _ = rec.game.apply(state, seat, action)
        for s in range(rec.seats):
            obs = rec.game.observe(state, s)
            [rec.game.text(e, [str(i) for i in range(rec.seats)]) for e in obs.events]
    return (time.perf_counter() - start) * 1000


async def _time(http: aiohttp.ClientSession, url: str, n: int) -> tuple[float, float, int]:
    async with http.get(url) as r:  # warm-up
        await r.read()
    times = []
    for _ in range(n):
        t = time.perf_counter()
        async with http.get(url) as r:
            body = await r.read()
            assert r.status == 200, r.status
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), max(times), len(body)


async def main(requests: int, moves: int, matches: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        store = await Store.open(url)
        settings = Settings(_env_file=None, default_agent="random", fallback_agent="random",  # type: ignore[call-arg]
                            agent_choices=",".join(["random", *ENTRANTS]), turn_deadline_s=0)
        service = TableService(store, settings=settings, agents=AgentRegistry())
        service.attach(MemoryPlatform())
        await service.start()
        try:
            gid = await _long_game(service, store, moves)
        finally:
            await service.stop()
        tid = await _big_tournament(store, gid, matches)
        log = await store.load_game(gid)
        key = links.signing_key(Path(tmp) / "key")
        server = await WebServer.start(Site(store, key, export_secret(store.plan)))
        base = f"http://127.0.0.1:{server.port}/s/{links.make(key, TENANT)}"
        try:
            async with aiohttp.ClientSession() as http:
                r_med, r_max, r_size = await _time(http, f"{base}/game/{gid}", requests)
                b_med, b_max, b_size = await _time(http, f"{base}/tournament/{tid}", requests)
        finally:
            await server.aclose()
            await store.aclose()
        naive = statistics.median(_naive_views(log) for _ in range(3))
    print(f"replay of game #{gid} ({log.row.game}, {len(log.actions)} moves, {len(log.seats)} seats, {r_size // 1024} KiB): "
          f"median {r_med:.0f} ms, worst {r_max:.0f} ms (target < {REPLAY_TARGET_MS:.0f} ms)")
    print(f"  baseline: every seat's view rebuilt at every step (observe per seat per step), the views alone: {naive:.0f} ms")
    print(f"leaderboard of {matches} matches ({b_size // 1024} KiB): median {b_med:.0f} ms, worst {b_max:.0f} ms "
          f"(target < {BOARD_TARGET_MS:.0f} ms)")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--requests", type=int, default=15)
    p.add_argument("--moves", type=int, default=100)
    p.add_argument("--matches", type=int, default=2000)
    a = p.parse_args()
    asyncio.run(main(a.requests, a.moves, a.matches))

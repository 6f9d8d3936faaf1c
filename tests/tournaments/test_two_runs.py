"""Two processes start ``run`` of the same tournament at once: one plays, the other is told so in a
sentence; every match is played exactly once and the stored leaderboard counts every game."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bot.tournaments import manage
from tests.tournaments.agents import SLOW, open_service, spec

ROOT = Path(__file__).resolve().parents[2]


async def _create(url: str) -> int:
    async with open_service(url) as b:
        return await manage.create(b.service, "console", spec(game="chameleon", variant="classic",
                                                              entrants=[SLOW, "random"], seats=3,
                                                              games_per_pairing=3, seed=8))


def _rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return c.execute(sql).fetchall()


def test_two_concurrent_runs_play_each_match_once_and_store_one_true_board(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    url = f"sqlite+aiosqlite:///{db}"
    tid = asyncio.run(_create(url))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-m", "tests.tournaments.run_worker", url, str(tid)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for _ in range(2)]
    deadline = time.monotonic() + 240
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert p.returncode == 0, err[-3000:]
            outs.append(out.strip())
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    done = [o for o in outs if o.startswith("DONE")]
    busy = [o for o in outs if o.startswith("BUSY")]
    # Both processes raced for the run; the database's lease let exactly one play (or, had the first
    # finished before the second looked, the second finds nothing left and plays nothing).
    assert len(done) + len(busy) == 2 and done, outs
    assert all("already being played" in o for o in busy)
    matches = _rows(db, "select idx, game_id, status, attempts from tournament_matches order by idx")
    assert len(matches) == 6 and all(status == "finished" and attempts == 1 for _, _, status, attempts in matches)
    game_ids = [gid for _, gid, _, _ in matches]
    assert len(set(game_ids)) == 6
    assert sorted(g for (g,) in _rows(db, "select id from games")) == sorted(game_ids), "no game played twice"
    ratings = dict(_rows(db, f"select entrant, games from tournament_ratings where tournament_id = {tid}"))
    assert ratings == {SLOW: 6, "random": 6}, "the board counts every game of the tournament"
    assert _rows(db, "select status from tournaments") == [("finished",)]

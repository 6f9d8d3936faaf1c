"""A tournament survives a SIGKILL mid-way: finished matches stay, running games resume from
the log (same game, not a new one), the rest are played, and each match is played once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _rows(db: Path, sql: str) -> list[tuple]:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2) as c:
            return c.execute(sql).fetchall()
    except sqlite3.Error:
        return []


def _run(db: Path, kill_when_finished: int | None = None, timeout: float = 180) -> str:
    proc = subprocess.Popen([sys.executable, "-m", "tests.tournaments.kill_worker", f"sqlite+aiosqlite:///{db}"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            assert time.monotonic() < deadline, "the tournament process hung"
            if kill_when_finished is not None:
                done = _rows(db, "select count(*) from tournament_matches where status = 'finished'")
                running = _rows(db, "select count(*) from tournament_matches where status = 'running' "
                                    "and game_id is not null")
                if done and done[0][0] >= kill_when_finished and running and running[0][0] >= 1:
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    return "killed"
            time.sleep(0.005)
        out, err = proc.communicate()
        assert proc.returncode == 0, err[-3000:]
        return out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_tournament_survives_sigkill_and_plays_each_match_once(tmp_path: Path) -> None:
    db = tmp_path / "t.db"
    assert _run(db, kill_when_finished=2) == "killed"
    before = dict(_rows(db, "select idx, game_id from tournament_matches where status = 'finished'"))
    in_flight = dict(_rows(db, "select idx, game_id from tournament_matches where status = 'running' "
                               "and game_id is not null"))
    assert len(before) >= 2 and in_flight
    ids = ",".join(map(str, in_flight.values()))
    # Killed mid-game (or, at worst, between the game's end and the match's record of it).
    statuses = {s for (s,) in _rows(db, f"select status from games where id in ({ids})")}
    assert statuses and statuses <= {"running", "finished"}

    out = _run(db)
    assert "DONE 8 0" in out
    after = _rows(db, "select idx, game_id, status, attempts from tournament_matches order by idx")
    assert len(after) == 8 and all(status == "finished" for _, _, status, _ in after)
    by_idx = {idx: gid for idx, gid, _, _ in after}
    assert all(by_idx[i] == g for i, g in before.items()), "finished matches stay as they were"
    assert all(by_idx[i] == g for i, g in in_flight.items()), "running games resume from the log, not anew"
    assert len(set(by_idx.values())) == 8
    finished_games = _rows(db, "select id from games where status = 'finished'")
    assert sorted(g for (g,) in finished_games) == sorted(by_idx.values()), "no match was played twice"
    assert _rows(db, "select count(*) from games where status = 'running'") == [(0,)]
    assert _rows(db, "select status from tournaments") == [("finished",)]

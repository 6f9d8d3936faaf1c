"""Crash and resume: SIGKILL a process mid-game, start a new one over the same SQLite file,
finish the games, and compare the logs with an uninterrupted run of the same seeds."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from tests.bot.core import crash_worker


def run_worker(db: Path, kill_after_actions: int | None = None, timeout: float = 120) -> bool:
    """The scripted games on this SQLite file; SIGKILLed once that many actions are logged."""
    return crash_worker.run(f"sqlite+aiosqlite:///{db}", lambda: count_actions(db) if db.exists() else 0,
                            kill_after_actions, timeout)


def count_actions(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2) as c:
            return c.execute("select count(*) from actions").fetchone()[0]
    except sqlite3.Error:
        return 0


def dump(db: Path) -> dict:
    with sqlite3.connect(db) as c:
        return {
            "games": c.execute("select id, game, variant, config, seed, place, status, result from games order by id").fetchall(),
            "seats": c.execute("select game_id, seat, kind, user_key, agent_spec from seats order by game_id, seat").fetchall(),
            "actions": c.execute("select game_id, seq, seat, kind, value, source, actor, inbound_id from actions "
                                 "order by game_id, seq").fetchall(),
            "events": c.execute("select game_id, seq, action_seq, kind, data, audience from events "
                                "order by game_id, seq").fetchall(),
            "inbound": sorted(r[0] for r in c.execute("select key from inbound")),
        }


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    db = tmp_path_factory.mktemp("ref") / "ref.db"
    assert run_worker(db)
    return dump(db)


@pytest.mark.parametrize("trial", range(4))
def test_sigkill_and_resume_loses_and_duplicates_nothing(tmp_path: Path, reference: dict, trial: int) -> None:
    total = len(reference["actions"])
    r = random.Random(trial)
    db = tmp_path / "crash.db"
    kills = 0
    # Kill at one or two random points, then let a fresh process finish the games.
    for _ in range(1 + trial % 2):
        done = count_actions(db) if db.exists() else 0
        if done >= total - 1:
            break
        if not run_worker(db, kill_after_actions=r.randint(done + 1, total - 1)):
            kills += 1
    assert kills >= 1
    assert run_worker(db)
    got = dump(db)
    assert got["games"] == reference["games"]
    assert got["seats"] == reference["seats"]
    assert got["actions"] == reference["actions"]
    assert got["events"] == reference["events"]
    assert got["inbound"] == reference["inbound"]

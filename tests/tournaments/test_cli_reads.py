"""`hushtable tournament list` and `leaderboard` only read rows, and `create` and `schedule` only plan: they open the store and nothing else, so
they never load the model stack (torch, transformers), the inference clients or the clue reports, and
never resume a game. Checked by which modules a real command imported, in a process of its own (the
test process's own imports do not count), not by the time it took."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from storage import tournaments as repo
from storage.store import Store

ROOT = Path(__file__).resolve().parents[2]
PLAYING = ("torch", "transformers", "models.client", "models.worker", "models.agents.wiring", "bot.sneak")
PROBE = """
import sys
from bot.cli import app
for args in (["list"], ["leaderboard", "1"], ["leaderboard", "1", "--format", "csv"], ["leaderboard", "9"]):
    try:
        app(["tournament", *args], prog_name="hushtable")
    except SystemExit as exc:
        print("EXIT", exc.code)
print("LOADED", *sorted(m for m in sys.modules if m in {playing}))
"""


async def _seed(url: str) -> None:
    """A finished two-entrant tournament with its standings, written straight to the rows."""
    store = await Store.open(url)
    try:
        plans = [repo.MatchPlanRecord(i, ["random", "embed:minilm", "random"], 10 + i, i) for i in range(2)]
        tid = await repo.create_tournament(
            store, tenant="console", name="stored", game="chameleon", variant="classic", options={},
            entrants=["random", "embed:minilm"], format="round_robin", seats=3, games_per_pairing=1, duplicate=False,
            seed=3, matches=plans)
        await repo.save_ratings(store, tid, "chameleon", "classic", [
            repo.RatingRecord("embed:minilm", 1, 27.5, 6.0, 24.0, 31.0, 2, {}),
            repo.RatingRecord("random", 2, 22.5, 6.0, 19.0, 26.0, 2, {}),
        ])
    finally:
        await store.aclose()


def test_listing_and_the_leaderboard_load_no_model_stack(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'reads.db'}"
    asyncio.run(_seed(url))
    env = dict(os.environ, PYTHONPATH=str(ROOT), HUSHTABLE_DATABASE_URL=url, HUSHTABLE_LOG_DIR=str(tmp_path / "logs"),
               HUSHTABLE_AGENT_CHOICES="random,embed:minilm", HUSHTABLE_DEFAULT_AGENT="random",
               HUSHTABLE_FALLBACK_AGENT="random")
    run = subprocess.run([sys.executable, "-c", PROBE.format(playing=PLAYING)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "#1 stored: chameleon (classic)" in out and "entrants random, embed:minilm" in out, out
    assert "Tournament #1 stored" in out and "27.5" in out, out  # the table
    assert "1,chameleon,classic,1,embed:minilm,27.500,,,2" in out, out  # the CSV
    assert "There is no tournament #9 here." in out and "EXIT 2" in out, out  # a wrong id: one sentence
    loaded = next(ln for ln in run.stdout.splitlines() if ln.startswith("LOADED")).split()[1:]
    assert loaded == [], loaded


PLAN = """
import sys
from bot.cli import app
for args in (["create", "--game", "spy", "--variant", "classic", "--entrant", "random", "--entrant", "embed:minilm",
              "--seats", "4", "--seed", "5", "--name", "planned"],
             ["create", "--game", "spy", "--entrant", "llm:http://evil"],
             ["schedule", "1", "0 3 * * *"], ["schedule", "1", "nightly"], ["list"]):
    try:
        app(["tournament", *args], prog_name="hushtable")
    except SystemExit as exc:
        print("EXIT", exc.code)
print("LOADED", *sorted(m for m in sys.modules if m in {playing}))
"""


def test_create_and_schedule_plan_on_the_store_beside_a_running_bot(tmp_path: Path) -> None:
    # A bot serving the SQLite file holds its lock; planning a tournament needs neither the lock nor the
    # agents (the old path started a table service: "another Hushtable bot is already running").
    from storage.store import lock_sqlite_file

    path = tmp_path / "plan.db"
    url = f"sqlite+aiosqlite:///{path}"

    async def make() -> None:
        await (await Store.open(url)).aclose()

    asyncio.run(make())
    bot_lock = lock_sqlite_file(path)
    try:
        env = dict(os.environ, PYTHONPATH=str(ROOT), HUSHTABLE_DATABASE_URL=url, HUSHTABLE_LOG_DIR=str(tmp_path / "logs"),
                   HUSHTABLE_AGENT_CHOICES="random,embed:minilm", HUSHTABLE_DEFAULT_AGENT="random",
                   HUSHTABLE_FALLBACK_AGENT="random")
        run = subprocess.run([sys.executable, "-c", PLAN.format(playing=PLAYING)], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=300)
    finally:
        bot_lock.close()
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    assert "created #1 planned: spy (classic)" in out, out
    assert "Unknown entrant(s) llm:http://evil; choose among random, embed:minilm." in out, out
    assert "tournament #1 scheduled '0 3 * * *' (UTC)" in out, out
    assert "nightly" in out and out.count("EXIT 2") == 2, out  # a typed URL and a bad crontab: one sentence each

    async def stored() -> tuple[str | None, int]:
        store = await Store.open(url)
        try:
            t = await repo.tournament(store, 1)
            assert t is not None and t.entrants == ["random", "embed:minilm"]
            return t.schedule, len(await repo.matches(store, 1))
        finally:
            await store.aclose()

    schedule, matches = asyncio.run(stored())
    assert schedule == "0 3 * * *" and matches > 0
    assert f"; {matches} games" in out, out
    loaded = next(ln for ln in run.stdout.splitlines() if ln.startswith("LOADED")).split()[1:]
    assert loaded == [], loaded

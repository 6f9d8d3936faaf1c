"""Commands that only read a SQLite log never wait on its write lock: ``hushtable stats`` and
``hushtable export`` run whole while another process holds the file's write lock (``BEGIN
IMMEDIATE``, as the bot's writes take it) for longer than the busy timeout.

Opening a log whose schema is current reads its revision and takes no write lock (``storage.database``);
in WAL mode SQLite's readers never wait on its writer. A reader that took the write lock to migrate an
already current schema failed with "database is locked" once a write outlasted the busy timeout."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bot.settings import default_model_cache

ROOT = Path(__file__).resolve().parents[2]

# Another process's write: takes the write lock, writes, says so, and commits only when told.
HOLDER = textwrap.dedent("""
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE games SET place_name = '#held' WHERE id = 1")
    print("holding", flush=True)
    sys.stdin.readline()
    conn.execute("COMMIT")
    print("committed", flush=True)
""")


def env(cwd: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "PYTHONPATH": str(ROOT),
           "HUSHTABLE_LOG_DIR": str(cwd / "logs"), "HUSHTABLE_DATABASE_URL": f"sqlite:///{cwd / 'log.db'}",
           "HUSHTABLE_MODEL_CACHE": str(default_model_cache()), "COLUMNS": "200"}


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], cwd=cwd, env=env(cwd), capture_output=True, text=True, timeout=300)


def test_stats_and_export_read_while_another_process_holds_the_write_lock(tmp_path: Path) -> None:
    sim = cli("sim", "chameleon", "--json", cwd=tmp_path)
    assert sim.returncode == 0, sim.stderr[-2000:]
    (tmp_path / "sim.jsonl").write_text(sim.stdout, encoding="utf-8")
    imported = cli("import", "record", "sim.jsonl", cwd=tmp_path)
    assert imported.returncode == 0 and "logged as #1" in imported.stdout, imported.stdout + imported.stderr

    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "log.db")], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "holding", holder.stderr.read() if holder.stderr else ""
        # The lock is held until stats is done: a command that waited on it would fail after the busy timeout.
        stats = cli("stats", cwd=tmp_path)
        assert stats.returncode == 0 and "chameleon (classic)" in stats.stdout, (stats.stdout + stats.stderr)[-2000:]
        # Export reads every game with the lock held; then it audits itself, a write, which waits for the lock.
        export = subprocess.Popen([sys.executable, "-m", "bot.cli", "export", "--out", "games.jsonl"], cwd=tmp_path,
                                  env=env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = tmp_path / "games.jsonl"
        deadline = time.monotonic() + 240
        while not (out.is_file() and out.read_text(encoding="utf-8").endswith("\n")) and export.poll() is None:
            assert time.monotonic() < deadline, "export wrote no file"
            time.sleep(0.05)
        assert holder.poll() is None, "the write lock was let go before the readers were done"
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "committed"  # the other process's write went on and landed
        stdout, stderr = export.communicate(timeout=120)
        assert export.returncode == 0, (stdout + stderr)[-2000:]
        assert "exported 1 game(s)" in stderr
        games = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert [g["game"] for g in games] == ["chameleon"]
        with sqlite3.connect(tmp_path / "log.db") as conn:
            assert conn.execute("SELECT place_name FROM games WHERE id = 1").fetchone() == ("#held",)
            assert conn.execute("SELECT count(*) FROM privacy_audit WHERE action = 'export'").fetchone() == (1,)
    finally:
        holder.kill()
        holder.wait()

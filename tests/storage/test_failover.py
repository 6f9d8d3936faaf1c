"""Two bot processes on one PostgreSQL share the scripted AI tables of tests/bot/core/crash_worker.py:
each drives the tables it started; one is SIGKILLed at a random point and the other takes its tables
over once their leases run out. Every game finishes, and the log equals an uninterrupted
single-process run's: no turn lost, none applied twice."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

from tests.storage.test_backends import Probe, normalised
from tests.storage.test_backends import pg_url_2 as pg_url_2  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
LEASE_S = 3.0


def start(url: str, owner: str, part: int) -> subprocess.Popen[str]:
    """A bot process that starts every other table of the script and drives what it holds."""
    return subprocess.Popen([sys.executable, "-m", "tests.bot.core.crash_worker", url, str(LEASE_S), owner, str(part), "2"],
                            cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_killed_process_tables_are_taken_over_and_finish_exactly_once(crash_reference: str, pg_url_2: str) -> None:
    ref_probe, probe = Probe(crash_reference), Probe(pg_url_2)  # the reference: one process, never killed
    procs: list[subprocess.Popen[str]] = []
    try:
        reference = normalised(ref_probe)
        total = len(reference["actions"])
        kill_at = random.Random(5).randint(total // 4, total // 2)
        procs = [start(pg_url_2, "proc-a", 0), start(pg_url_2, "proc-b", 1)]
        deadline = time.monotonic() + 300
        while probe.actions() < kill_at:
            assert time.monotonic() < deadline, "the two processes made no progress"
            for p in procs:
                assert p.poll() is None, f"a process ended before the kill: {p.communicate()[1][-2000:]}"
            time.sleep(0.005)
        owners = {r[0] for r in probe("select owner from table_leases")}
        part = 0 if "proc-a" in owners else 1  # kill a process that holds tables
        victim, victim_name = procs[part], ("proc-a", "proc-b")[part]
        victim.kill()
        victim.wait()
        killed = time.monotonic()
        held_by_victim = {r[0] for r in probe(
            f"select l.game_id from table_leases l join games g on g.id = l.game_id "
            f"where l.owner = '{victim_name}' and g.status = 'running'")}
        # The killed process comes back as a new one (its part of the script may not be sent yet).
        procs.append(start(pg_url_2, "proc-c", part))
        running = [procs[1 - part], procs[2]]
        taken_after: float | None = None
        while any(p.poll() is None for p in running):
            assert time.monotonic() < deadline, "the games never finished"
            if taken_after is None and held_by_victim and not {r[0] for r in probe(
                    f"select game_id from table_leases where owner = '{victim_name}'")} & held_by_victim:
                taken_after = time.monotonic() - killed
            time.sleep(0.01)
        for p in running:
            out, err = p.communicate()
            assert p.returncode == 0, err[-3000:]
            assert "ALL DONE" in out
        got = normalised(probe)
        for table in ("games", "seats", "actions", "events", "inbound"):
            assert got[table] == reference[table], table
        owners = {r[0] for r in probe("select owner from table_leases")}
        assert owners <= {"proc-a", "proc-b", "proc-c"}
        if held_by_victim:
            assert taken_after is not None
            print(f"{len(held_by_victim)} running tables taken over {taken_after:.2f} s after SIGKILL (lease {LEASE_S} s)")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        ref_probe.close()
        probe.close()

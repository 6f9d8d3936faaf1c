"""PostgreSQL stops under two running bot processes (an immediate shutdown, as in a crash) and
comes back after 2 s (the soak adds 10 s: ``HUSHTABLE_OUTAGE_S=2,10``): no deadline is lost
and no game stays stuck. The bots run on a server of this test's own (the shared one serves
other tests); every game has a human seat that never answers, so a game finishes only if each
of its deadlines fires after the outage. Judged by the database (tests/storage/fencing.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tests.postgres import URL_ENV, PostgresServer, disabled_reason
from tests.storage.fencing import prepare, start_all, stop_all
from tests.storage.test_backends import Probe

LEASE_S = 2.0
DEADLINE_S = 1.0
WANT = 3
OUTAGES = [float(x) for x in os.environ.get("HUSHTABLE_OUTAGE_S", "2").split(",")]
STUCK_S = 90.0  # a game that was running at the outage and has not finished this long after it is stuck


@pytest.fixture
def own_server() -> Iterator[tuple[PostgresServer, Any]]:
    reason = disabled_reason()
    if reason:
        pytest.skip(reason)
    if os.environ.get(URL_ENV):
        pytest.skip(f"stops its server: runs on a pgserver of its own, not on {URL_ENV}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
    folder = tempfile.mkdtemp(prefix="hushpgo-")
    os.chmod(folder, 0o755)
    handle = pgserver.get_server(folder, cleanup_mode="stop")  # type: ignore[attr-defined]
    server = PostgresServer(make_url(handle.get_uri()), handle, folder)
    try:
        yield server, handle
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def ask(probe: Probe, sql: str) -> list[Any]:
    """A query that waits for the server to be back (the probe's pooled connections died with it)."""
    for _ in range(100):
        try:
            return probe(sql)
        except (sa.exc.DBAPIError, OSError):
            time.sleep(0.2)
    raise AssertionError("the database never came back")


def test_no_deadline_is_lost_and_no_game_stuck_after_a_database_outage(
        own_server: tuple[PostgresServer, Any], tmp_path: Path) -> None:
    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]  # the binaries pgserver ships

    server, handle = own_server
    url = server.create_database()
    prepare(url)
    probe = Probe(url)
    stop = tmp_path / "stop"
    procs = list(start_all(url, ["proc-a", "proc-b"], LEASE_S, WANT, DEADLINE_S, stop).values())
    report = []
    try:
        for n, outage in enumerate(OUTAGES):
            deadline = time.monotonic() + 60
            while ask(probe, "select count(*) from deadlines where state = 'pending'")[0][0] < 2:
                assert time.monotonic() < deadline, "no deadline was pending"
                time.sleep(0.05)
            running = [int(g) for (g,) in ask(probe, "select id from games where status = 'running'")]
            pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=handle.pgdata, user=handle.system_user)
            time.sleep(outage)
            handle.ensure_postgres_running()
            back = time.monotonic()
            if n == len(OUTAGES) - 1:
                stop.touch()  # no new tables after the last outage: the final wait below is the last games'
            ids = ",".join(map(str, running))
            while left := ask(probe, f"select id from games where id in ({ids}) and status = 'running'"):
                assert time.monotonic() - back < STUCK_S, f"stuck after a {outage} s outage: games {left}"
                time.sleep(0.1)
            report.append(f"{outage:g} s outage: {len(running)} running games all finished, the last "
                          f"{time.monotonic() - back:.1f} s after the server was back")
        stop.touch()
        deadline = time.monotonic() + 120
        while left := ask(probe, "select id from games where status = 'running'"):
            assert time.monotonic() < deadline, f"games stuck: {left}"
            time.sleep(0.1)
        # Every deadline ended one way or the other: fired (its seat timed out) or cancelled.
        assert ask(probe, "select count(*) from deadlines where state = 'pending'") == [(0,)]
        assert ask(probe, "select count(*) from fence_audit where stale") == [(0,)]
        timeouts = ask(probe, "select count(*) from actions where source = 'timeout'")[0][0]
        # How late the latest deadline fired: its seat's timeout turn against its due time.
        late = ask(probe, "select max(extract(epoch from (select min(a.created_at) from actions a where "
                          "a.game_id = d.game_id and a.seat = d.seat and a.source = 'timeout' and "
                          "a.created_at >= d.due_at) - d.due_at)) from deadlines d where d.state = 'done'")[0][0]
        report.append(f"the latest deadline fired {float(late or 0):.1f} s after it was due")
        finished = ask(probe, "select count(*) from games where status = 'finished'")[0][0]
        print(f"outage: {'; '.join(report)}; {finished} games finished, {timeouts} turns timed out")  # shown with -s
    finally:
        stop_all(procs)
        probe.close()
        server.drop_database(url)

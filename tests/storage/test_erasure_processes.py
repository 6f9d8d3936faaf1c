"""Erasure beside a bot that plays, in real processes on one database (a SQLite file, then PostgreSQL).

One process (tests/storage/erasure_worker.py) plays tables of every kind through the table service
(the member seated in some, writing their own words) while the operator's ``hushtable data forget``
runs in another. Judged by the database only: when the forget ran, some of the member's games had
ended and some were running (read from the log before it ran and from the audit it wrote); after
every game has ended, the member's words, id and name are nowhere in the database's bytes (the
file with its WAL, while the bot still holds it open, and after; on PostgreSQL a ``pg_dump``);
every finished game replays to the outcome its table reached in memory (the ``witness`` table);
no logged turn is lost (each game's log holds every action the table took, the other seats' values
unchanged); no erasure is left waiting. Neither the bot's log files (it logs at DEBUG) nor a backup
made after the erasure (``hushtable backup``, while the bot runs) holds them either.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from bot.core.replays import record_of
from games.record import replay_record
from storage import people
from storage.store import Store
from storage.tables import ENDED, GameRow, GameStatus, SeatRow, table_of
from tests.storage.erasure_worker import KINDS, MEMBER, MEMBER_WORDS, WITNESS
from tests.storage.test_people import dump

ROOT = Path(__file__).resolve().parents[2]
SECRETS = (*MEMBER_WORDS, MEMBER.key, MEMBER.user_id, MEMBER.name)
_games, _seats = table_of(GameRow), table_of(SeatRow)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


async def _member_statuses(store: Store) -> list[GameStatus]:
    async with store.connect() as conn:
        q = sa.select(_games.c.status).join(_seats, _seats.c.game_id == _games.c.id).where(_seats.c.user_key == MEMBER.key)
        return [GameStatus(s) for s in (await conn.execute(q)).scalars()]


async def _wait_for(cond: Any, what: str, timeout: float = 240.0) -> None:
    end = time.monotonic() + timeout
    while not await cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def _pg_dump(url: str) -> str:
    import pgserver

    u = make_url(url)
    binary = Path(pgserver.__file__).parent / "pginstall" / "bin" / "pg_dump"
    args = [str(binary), "--data-only", "--no-owner", "-d", str(u.database), "-U", str(u.username)]
    host = u.query.get("host") or u.host
    if host:
        args += ["-h", str(host)]
    if u.port:
        args += ["-p", str(u.port)]
    env = {**os.environ, "PGPASSWORD": u.password or ""}
    out = subprocess.run(args, capture_output=True, text=True, env=env, check=True, timeout=120)
    return out.stdout


def _database_bytes(store: Store) -> bytes:
    path = store.plan.sqlite_file
    assert path is not None
    return b"".join(p.read_bytes() for p in sorted(path.parent.iterdir()) if p.name.startswith(path.name))


async def _nowhere(store: Store, url: str, when: str) -> None:
    if store.plan.sqlite_file is not None:
        raw = _database_bytes(store)
        assert raw, "the database file is there"
        found = [s for s in SECRETS if s.encode() in raw or s.lower().encode() in raw.lower()]
        assert not found, f"{when}: {found} left in the SQLite file or its WAL"
    else:
        text = await asyncio.to_thread(_pg_dump, url)
        assert "witness" in text  # the dump holds the data
        found = [s for s in SECRETS if s.lower() in text.lower()]
        assert not found, f"{when}: {found} left in pg_dump"
    rows = await dump(store)
    assert not [s for s in SECRETS if s.lower() in rows.lower()], when


async def test_forget_while_a_bot_plays_in_another_process(db_url: str, tmp_path: Path) -> None:
    stop, exit_file, logs = tmp_path / "stop", tmp_path / "exit", tmp_path / "logs"
    errors = (tmp_path / "worker.err").open("w")
    worker = subprocess.Popen([sys.executable, "-m", "tests.storage.erasure_worker", db_url, str(stop), str(exit_file),
                               str(logs)],
                              cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=errors, text=True)

    def err() -> str:
        return (tmp_path / "worker.err").read_text()[-3000:]

    store: Store | None = None
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "READY", err()
        store = await Store.open(db_url)

        async def some_ended_some_running() -> bool:
            assert worker.poll() is None, err()
            st = await _member_statuses(store)
            return sum(s in ENDED for s in st) >= 2 and sum(s == GameStatus.RUNNING for s in st) >= 2

        await _wait_for(some_ended_some_running, "the member's first games to end and later ones to run")
        forget = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "bot.cli", "data", "forget", "--member",
                                                          MEMBER.key, "--database", db_url],
                                         cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
        assert forget.returncode == 0, forget.stderr
        stop.touch()
        line = await asyncio.to_thread(worker.stdout.readline)
        assert line.startswith("IDLE"), (line, err())

        # The forget met ended games and running ones: its audit says so (written in its transaction order).
        entries = [e for e in await people.audit_log(store, limit=1000) if e.action == "erasure done"]
        first = entries[-1]  # the oldest: the operator's own run; later ones are the pending erasure's
        erased_now, waiting = (int(w) for w in first.scope.replace(" game(s) erased,", "").replace(" waiting", "").split())
        assert erased_now >= 2 and waiting >= 1, first.scope
        assert await people.pending_erasures(store) == []
        assert await _member_statuses(store) == []  # the member sits nowhere any more

        await _nowhere(store, db_url, "with the bot still open")
        if store.plan.sqlite_file is not None:  # a backup made after the erasure, while the bot runs
            backup = tmp_path / "after.db"
            made = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "bot.cli", "backup", str(backup),
                                                            "--database", db_url],
                                           cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
            assert made.returncode == 0, made.stderr
            raw = backup.read_bytes()
            assert b"witness" in raw and not [s for s in SECRETS if s.lower().encode() in raw.lower()]

        # Every finished game: the whole log is there and replays to the outcome the table reached.
        async with store.connect() as conn:
            witnessed = {int(r.game_id): r for r in (await conn.execute(sa.select(WITNESS))).all()}
            finished = [int(g) for g in (await conn.execute(sa.select(_games.c.id).where(
                _games.c.status == GameStatus.FINISHED))).scalars()]
        assert sorted(witnessed) == sorted(finished) and len(finished) >= 6
        assert sum(bool(w.member_seats) for w in witnessed.values()) == len(KINDS)  # the member sat at a table of every kind
        for gid, w in witnessed.items():
            log = await store.load_game(gid)
            assert [[a.seat, a.kind, None if a.seat in w.member_seats else list(a.value)] for a in log.actions] == w.actions, gid
            assert [a.seq for a in log.actions] == sorted({a.seq for a in log.actions}), gid
            _, _, again = replay_record(record_of(log))
            assert again is not None, gid
            out = again.to_json()
            assert (out["winners"], out["scores"]) == (w.winners, w.scores), gid
    finally:
        stop.touch()
        exit_file.touch()
        try:
            worker.wait(timeout=60)
        finally:
            if worker.poll() is None:
                worker.kill()
            errors.close()
        if store is not None:
            await store.aclose()
    assert worker.returncode == 0, err()
    logged = b"".join(p.read_bytes() for p in sorted(logs.iterdir()))
    assert b"DEBUG" in logged, "the bot logged"
    assert not [s for s in SECRETS if s.lower().encode() in logged.lower()], "left in the bot's log files"
    reopened = await Store.open(db_url)
    try:
        await _nowhere(reopened, db_url, "after the bot closed")
    finally:
        await reopened.aclose()

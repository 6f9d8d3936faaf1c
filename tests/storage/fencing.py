"""What the fencing and outage tests share: the audit the database keeps of every side effect
(installed as triggers, judged at COMMIT on the database's clock), and the bot processes."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from storage.store import Store
from tests.storage import fence_worker

ROOT = Path(__file__).resolve().parents[2]

# Every turn, outbox message, deadline write and chat send is audited when its transaction
# commits (deferred constraint triggers): the writer is the session's application_name (the
# bot names its sessions after its lease owner); it was *stale* when, at that instant on the
# database's clock, the game's lease named someone else or had run out. Lease token moves are
# kept with their time, for the takeover times.
AUDIT_SQL = [
    fence_worker.WIRE_SQL,
    """CREATE TABLE fence_audit (id bigserial PRIMARY KEY, tbl text, game_id int, ref text, writer text,
       holder text, expires timestamptz, at timestamptz, stale bool)""",
    "CREATE TABLE lease_moves (game_id int, owner text, token bigint, at timestamptz)",
    """CREATE TABLE wire_dropped (key text, writer text DEFAULT current_setting('application_name'),
       at timestamptz DEFAULT clock_timestamp())""",
    """CREATE FUNCTION wire_game() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.key IS NOT NULL AND EXISTS (SELECT 1 FROM wire WHERE key = NEW.key) THEN
           INSERT INTO wire_dropped (key) VALUES (NEW.key);  -- a repeat: the platform drops it
           RETURN NULL;
         END IF;
         IF NEW.channel IS NOT NULL THEN
           SELECT id INTO NEW.game_id FROM games WHERE split_part(place, '/', 1) = NEW.channel ORDER BY id DESC LIMIT 1;
         ELSE
           SELECT game_id INTO NEW.game_id FROM seats WHERE user_key = NEW.user_key ORDER BY game_id DESC LIMIT 1;
         END IF;
         RETURN NEW;
       END $$""",
    "CREATE TRIGGER wire_game BEFORE INSERT ON wire FOR EACH ROW EXECUTE FUNCTION wire_game()",
    """CREATE FUNCTION audit_write() RETURNS trigger LANGUAGE plpgsql AS $$
       DECLARE holder text; expires timestamptz; me text := current_setting('application_name');
       BEGIN
         SELECT l.owner, l.expires_at INTO holder, expires FROM table_leases l WHERE l.game_id = NEW.game_id;
         INSERT INTO fence_audit (tbl, game_id, ref, writer, holder, expires, at, stale)
         VALUES (TG_TABLE_NAME, NEW.game_id, to_jsonb(NEW)->>'id', me, holder, expires, clock_timestamp(),
                 holder IS NOT NULL AND (holder <> me OR expires <= clock_timestamp()));
         RETURN NULL;
       END $$""",
    *(f"""CREATE CONSTRAINT TRIGGER audit_{t} AFTER {ops} ON {t} DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW EXECUTE FUNCTION audit_write()"""
      for t, ops in (("actions", "INSERT"), ("outbox", "INSERT"), ("deadlines", "INSERT OR UPDATE"),
                     ("wire", "INSERT"))),
    """CREATE FUNCTION lease_moved() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF TG_OP = 'INSERT' OR OLD.token <> NEW.token THEN
           INSERT INTO lease_moves VALUES (NEW.game_id, NEW.owner, NEW.token, clock_timestamp());
         END IF;
         RETURN NULL;
       END $$""",
    "CREATE TRIGGER lease_moved AFTER INSERT OR UPDATE ON table_leases FOR EACH ROW EXECUTE FUNCTION lease_moved()",
]


def prepare(url: str) -> None:
    """The schema, then the audit on top of it."""

    async def go() -> None:
        async with await Store.open(url) as store, store.engine.begin() as conn:
            for sql in AUDIT_SQL:
                await conn.exec_driver_sql(sql)

    asyncio.run(go())


def start_all(url: str, owners: list[str], lease_s: float, want: int, deadline_s: float,
              stop: Path) -> dict[str, subprocess.Popen[str]]:
    """One bot process per owner, started side by side (each spends seconds importing and
    migrating), returned once every one is serving; each one's log goes to a file beside
    ``stop`` (a pipe nobody reads could fill up and block it)."""
    procs: dict[str, subprocess.Popen[str]] = {}
    for owner in owners:
        with (stop.parent / f"{owner}.log").open("w") as err:
            procs[owner] = subprocess.Popen(
                [sys.executable, "-m", "tests.storage.fence_worker", url, owner, str(lease_s), str(want),
                 str(deadline_s), str(stop)], cwd=ROOT, env=dict(os.environ), stdout=subprocess.PIPE, stderr=err,
                text=True)
    try:
        for owner, proc in procs.items():
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line.strip() == "READY", (line, (stop.parent / f"{owner}.log").read_text()[-3000:])
    except BaseException:
        stop_all(list(procs.values()))
        raise
    return procs


def stop_all(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
        for stream in (p.stdout, p.stderr):
            if stream is not None:
                stream.close()

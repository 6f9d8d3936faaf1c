"""``backup`` copies a SQLite log consistently while a writer keeps writing; the backup opens at the
newest revision and replays every game; other databases are pointed at pg_dump."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.ops.backup import backup
from storage.store import Store
from tests.storage.test_backends import GAMES, play_ai_tables


async def test_backup_while_writing_replays_every_game(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'live.db'}"
    async with await Store.open(url) as store:
        await play_ai_tables(store, GAMES)
        # A writer that keeps claiming inbound keys (one transaction each) while the backup runs.
        stop, started = asyncio.Event(), asyncio.Event()

        async def writer() -> int:
            n = 0
            while not stop.is_set():
                assert await store.claim_inbound(f"w{n}")
                n += 1
                started.set()
                await asyncio.sleep(0)
            return n

        task = asyncio.create_task(writer())
        # The backup starts once the writer has committed (not after a time a loaded machine may stretch).
        await asyncio.wait_for(started.wait(), 60)
        report = await backup(url, tmp_path / "copy" / "backup.db")
        stop.set()
        written = await task
    assert report.ok and report.replayed == len(GAMES)
    assert not (tmp_path / "copy" / "backup.db-wal").exists()  # one self-contained file
    assert (tmp_path / "copy" / "backup.db").stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(tmp_path / "copy" / "backup.db") as c:
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        claimed = c.execute("select count(*) from inbound where key like 'w%'").fetchone()[0]
    # A snapshot taken while the writer ran: some of its writes, none from after the backup.
    assert 0 < claimed <= written


def test_backup_refuses_and_explains(tmp_path: Path, pg_url: str) -> None:
    runner = CliRunner()
    pg = runner.invoke(app, ["backup", str(tmp_path / "x.db"), "--database", pg_url])
    assert pg.exit_code == 2 and "pg_dump" in pg.output
    missing = runner.invoke(app, ["backup", str(tmp_path / "x.db"), "--database", f"sqlite:///{tmp_path / 'nope.db'}"])
    assert missing.exit_code == 2 and "no database" in missing.output
    url = f"sqlite:///{tmp_path / 'live.db'}"

    async def make() -> None:
        async with await Store.open(url):
            pass

    asyncio.run(make())
    ok = runner.invoke(app, ["backup", str(tmp_path / "b.db"), "--database", url])
    assert ok.exit_code == 0, ok.output
    assert "To restore" in ok.output and f"cp {tmp_path / 'b.db'} {tmp_path / 'live.db'}" in ok.output
    again = runner.invoke(app, ["backup", str(tmp_path / "b.db"), "--database", url])
    assert again.exit_code == 2 and "exists" in again.output


def test_backup_carries_the_export_key_and_says_so(tmp_path: Path) -> None:
    import io

    from storage.export import export_games

    url = f"sqlite:///{tmp_path / 'live.db'}"

    async def make() -> None:
        async with await Store.open(url) as store:
            await export_games(store, out=io.StringIO(), fmt="jsonl", pseudonymise=True, secret=None)  # makes the key

    asyncio.run(make())
    ok = CliRunner().invoke(app, ["backup", str(tmp_path / "b.db"), "--database", url])
    assert ok.exit_code == 0, ok.output
    key = tmp_path / "b.db.export-secret"
    assert f"the export key was copied to {key}" in ok.output
    assert key.read_text() == (tmp_path / "live.db.export-secret").read_text() and key.stat().st_mode & 0o777 == 0o600
    assert f"cp {tmp_path / 'b.db'} {tmp_path / 'live.db'} && cp {key} {tmp_path / 'live.db'}.export-secret" in ok.output

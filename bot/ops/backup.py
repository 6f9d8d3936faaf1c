"""``hushtable backup OUT``: a consistent copy of a SQLite game log, safe while the bot runs.

SQLite's online backup API copies the database page by page under its own locking, so
the copy is a single consistent snapshot even while the bot writes (WAL included). A
PostgreSQL log is backed up with ``pg_dump`` instead (see README: Database). The backup
is then opened and every game in it replayed (``bot.ops.verify``).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
from pathlib import Path

from bot.ops.verify import ReplayReport, replay_every_game
from storage.engine import plan_engine
from storage.store import Store


class BackupRefused(ValueError):
    """The URL is not a SQLite file, or the output exists: nothing was written."""


def sqlite_path(url: str) -> Path:
    plan = plan_engine(url)
    if not plan.is_sqlite:
        raise BackupRefused(
            f"{plan.backend} databases are backed up with their own tools: "
            "pg_dump --format=custom --file=hushtable.dump \"$DATABASE_URL\" (README: Database)"
        )
    path = plan.sqlite_file
    if path is None:
        raise BackupRefused("an in-memory database has nothing to back up")
    if not path.is_file():
        raise BackupRefused(f"no database at {path}")
    return path


def backup_sqlite(src: Path, out: Path) -> None:
    """Copy ``src`` to ``out`` with the online backup API (consistent under concurrent writes)."""
    if out.exists():
        raise BackupRefused(f"{out} exists; choose a new file")
    out.parent.mkdir(parents=True, exist_ok=True)
    # The log holds user ids and players' words: the copy is readable by its owner only.
    os.close(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    source = sqlite3.connect(src)
    try:
        dest = sqlite3.connect(out)
        try:
            # pages=-1: one step, the whole database; readers and the bot's writer go on meanwhile.
            source.backup(dest)
            # A standalone file: no WAL to carry along.
            dest.execute("PRAGMA journal_mode=DELETE")
        finally:
            dest.close()
    finally:
        source.close()


async def backup(url: str, out: Path) -> ReplayReport:
    """Back up the SQLite log at ``url`` to ``out`` and replay every game in the backup."""
    src = sqlite_path(url)
    await asyncio.to_thread(backup_sqlite, src, out)
    store = await Store.open(f"sqlite+aiosqlite:///{out.resolve()}", create=False)
    try:
        report = await replay_every_game(store)
    finally:
        await store.aclose()
    await asyncio.to_thread(_standalone, out)
    return report


def _standalone(path: Path) -> None:
    # Opening the store turned WAL on again; a backup is one self-contained file.
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        conn.close()


def restore_hint(url: str, out: Path) -> str:
    """What to tell the operator after a backup: how to put it back."""
    src = sqlite_path(url)
    return (
        f"To restore: stop the bot, then\n"
        f"  cp {out} {src} && rm -f {src}-wal {src}-shm\n"
        f"and start it again (or point HUSHTABLE_DATABASE_URL at sqlite:///{out.resolve()})."
    )

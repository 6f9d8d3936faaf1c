"""``hushtable backup OUT``: a consistent copy of a SQLite game log, safe while the bot runs.

SQLite's online backup API copies the database page by page under its own locking, so
the copy is a single consistent snapshot even while the bot writes (WAL included). A
PostgreSQL log is backed up with ``pg_dump`` instead (see README: Database). The backup
is then opened and every game in it replayed (``bot.ops.verify``).

The copy is written atomically: into a hidden temporary file beside ``OUT``, which gets
its name only once it is complete and replayed. A failure (a full or read-only disk, a
source that is not a database) removes the temporary file, so nothing is left behind
that would block the next try.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sqlite3
import stat
from pathlib import Path

from bot.ops.verify import ReplayReport, replay_every_game
from storage.engine import plan_engine
from storage.store import Store

SQLITE_HEADER = b"SQLite format 3\x00"


class BackupRefused(ValueError):
    """The URL is not a SQLite file, or the output cannot be written there: nothing was written."""


class BackupFailed(RuntimeError):
    """The copy failed on the way (the disk is full or read-only): nothing was left behind."""


def sqlite_file_problem(path: Path) -> str | None:
    """Why ``path`` is not a SQLite database file to read, or None when it is one."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return f"no database at {path}"
    except OSError as exc:
        return f"{path}: {exc.strerror or type(exc).__name__}"
    if not stat.S_ISREG(info.st_mode):
        return f"{path} is not a regular file, so it holds no database"
    if info.st_size == 0:
        return None  # an empty file is an empty SQLite database
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError as exc:
        return f"{path}: {exc.strerror or type(exc).__name__}"
    return None if head == SQLITE_HEADER else f"{path} is not a SQLite database"


def sqlite_path(url: str) -> Path:
    from sqlalchemy.exc import ArgumentError

    try:
        plan = plan_engine(url)
    except (ValueError, ArgumentError) as exc:
        raise BackupRefused(f"the database URL cannot be read: {exc}") from None
    if not plan.is_sqlite:
        raise BackupRefused(
            f"{plan.backend} databases are backed up with their own tools: "
            "pg_dump --format=custom --file=hushtable.dump \"$DATABASE_URL\" (README: Database)"
        )
    path = plan.sqlite_file
    if path is None:
        raise BackupRefused("an in-memory database has nothing to back up")
    problem = sqlite_file_problem(path)
    if problem is not None:
        raise BackupRefused(problem)
    return path


def check_out(out: Path) -> None:
    """Refuse an output that exists (a dangling link included) or cannot be a file; make its folder."""
    if os.path.lexists(out):
        what = "a link to a missing file" if out.is_symlink() and not out.exists() else "it is there already"
        raise BackupRefused(f"{out} exists ({what}); choose a new file")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise BackupRefused(f"{out.parent} is not a folder (a file is in the way)") from None
    except OSError as exc:
        raise BackupRefused(f"cannot make the folder {out.parent}: {exc.strerror or type(exc).__name__}") from None
    if not out.parent.is_dir():
        raise BackupRefused(f"{out.parent} is not a folder (a file is in the way)")


def _temporary(out: Path) -> Path:
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    try:
        # The log holds user ids and players' words: the copy is readable by its owner only.
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise BackupRefused(f"cannot write in {out.parent}: {_why(exc)}") from None
    return tmp


def _why(exc: BaseException) -> str:
    import errno

    if isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            return "the disk is full"
        if exc.errno == errno.EROFS:
            return "the file system is read-only"
        return exc.strerror or type(exc).__name__
    text = str(exc).lower()
    if "full" in text:
        return "the disk is full"
    if "readonly" in text or "read-only" in text:
        return "the file system is read-only"
    return str(exc) or type(exc).__name__


def remove_sqlite_files(path: Path) -> None:
    """Remove a SQLite file with its journal, WAL and shared-memory files (those that exist)."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm"), path.with_name(path.name + "-journal")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def backup_sqlite(src: Path, out: Path, shown: Path | None = None) -> None:
    """Copy ``src`` into the (empty, existing) file ``out`` with the online backup API (``shown``: the name to report)."""
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
    except sqlite3.DatabaseError as exc:
        if "not a database" in str(exc):
            raise BackupRefused(f"{src} is not a SQLite database") from None
        raise BackupFailed(f"cannot write {shown or out}: {_why(exc)}") from None
    finally:
        source.close()


def _publish(tmp: Path, out: Path) -> None:
    """Give the finished copy its name, never over an existing file."""
    try:
        os.link(tmp, out)
    except FileExistsError:
        raise BackupRefused(f"{out} exists (it appeared while the backup ran); choose a new file") from None
    except OSError:
        if os.path.lexists(out):
            raise BackupRefused(f"{out} exists (it appeared while the backup ran); choose a new file") from None
        os.rename(tmp, out)
        return
    tmp.unlink()


async def backup(url: str, out: Path) -> ReplayReport:
    """Back up the SQLite log at ``url`` to ``out`` and replay every game in the backup."""
    src = sqlite_path(url)
    check_out(out)
    tmp = _temporary(out)
    try:
        await asyncio.to_thread(backup_sqlite, src, tmp, out)
        store = await Store.open(f"sqlite+aiosqlite:///{tmp.resolve()}", create=False)
        try:
            report = await replay_every_game(store)
        finally:
            await store.aclose()
        await asyncio.to_thread(_standalone, tmp, out)
        _publish(tmp, out)
    except OSError as exc:
        raise BackupFailed(f"cannot write {out}: {_why(exc)}") from None
    finally:
        remove_sqlite_files(tmp)
    return report


def _standalone(path: Path, shown: Path) -> None:
    # Opening the store turned WAL on again; a backup is one self-contained file.
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
    except sqlite3.DatabaseError as exc:
        raise BackupFailed(f"cannot write {shown}: {_why(exc)}") from None
    finally:
        conn.close()


def backup_export_key(url: str, out: Path, configured: str | None) -> str:
    """Copy the export key kept beside the log to ``<out>.export-secret`` (mode 0600): a restored log keeps
    its pseudonyms. Returns the sentence for the operator (it names files, never the key)."""
    from storage.export_secret import SUFFIX

    if configured:
        return "exports use HUSHTABLE_EXPORT_SECRET: keep it with the backup, or restored exports get new pseudonyms"
    src = sqlite_path(url)
    key_file = src.with_name(src.name + SUFFIX)
    if not key_file.is_file():
        return "no export key yet (one is made on the first export): nothing to carry"
    target = out.with_name(out.name + SUFFIX)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key_file.read_text(encoding="ascii"))
    return f"the export key was copied to {target}: keep it with the backup (pseudonyms in exports depend on it)"


def restore_hint(url: str, out: Path) -> str:
    """What to tell the operator after a backup: how to put it back."""
    from storage.export_secret import SUFFIX

    src = sqlite_path(url)
    key = out.with_name(out.name + SUFFIX)
    carry = f" && cp {key} {src}{SUFFIX}" if key.is_file() else ""
    return (
        f"To restore: stop the bot, then\n"
        f"  cp {out} {src}{carry} && rm -f {src}-wal {src}-shm\n"
        f"and start it again (or point HUSHTABLE_DATABASE_URL at sqlite:///{out.resolve()})."
    )

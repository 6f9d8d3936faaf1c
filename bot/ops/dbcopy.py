"""``hushtable db copy``: move a whole game log to another database (SQLite → PostgreSQL when a
community outgrows one file), then prove the copy: row counts per table and a replay of every game.

Every table of the schema (and any other table in the source, such as APScheduler's job
store) is copied in foreign-key order with its ids unchanged, through
SQLAlchemy's column types (JSON and UTC timestamps read and written the same on both sides).
The destination must be empty (it is migrated to the newest revision first); the source must
already be at that revision and is only read. On PostgreSQL the id sequences are moved past the
copied ids, so the bot's next game gets a fresh id.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

import storage.tables  # noqa: F401 - registers every table on the metadata
from bot.ops.backup import remove_sqlite_files, sqlite_file_problem
from bot.ops.verify import ReplayReport, replay_every_game
from storage.engine import EnginePlan, plan_engine
from storage.records import SchemaOutOfDate
from storage.store import Store
from storage.tables import metadata

_BATCH = 1000  # rows per insert


class CopyRefused(RuntimeError):
    """The copy cannot start (destination not empty, source out of date); nothing was written."""


@dataclass
class CopyReport:
    counts: dict[str, int] = field(default_factory=dict)  # rows copied per table
    mismatched: dict[str, tuple[int, int]] = field(default_factory=dict)  # table: (source, destination)
    replay: ReplayReport = field(default_factory=ReplayReport)
    export_key: str = ""  # what became of the export key (pseudonyms), one sentence

    @property
    def ok(self) -> bool:
        return not self.mismatched and self.replay.ok


def _tables() -> list[sa.Table]:
    return list(metadata.sorted_tables)


async def _count(store: Store, table: sa.Table) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(sa.select(sa.func.count()).select_from(table))).scalar_one())


_BACKENDS = ("sqlite", "postgresql")  # where the log runs (storage/engine.py)


def _plan(url: str, role: str) -> EnginePlan:
    """The engine plan of the source or destination URL, or CopyRefused with the reason."""
    from sqlalchemy.exc import ArgumentError

    try:
        plan = plan_engine(url)
    except (ValueError, ArgumentError) as exc:
        raise CopyRefused(f"the {role} URL cannot be read: {exc}") from None
    if plan.backend not in _BACKENDS:
        raise CopyRefused(f"{plan.backend} databases are not supported; the log runs on SQLite or PostgreSQL")
    if plan.in_memory:
        what = "holds nothing" if role == "source" else "would vanish when the command ends"
        raise CopyRefused(f"the {role} is an in-memory database, which {what}; name a database file")
    return plan


def _shown(plan: EnginePlan) -> str:
    return plan.url.render_as_string(hide_password=True)


async def _open(plan: EnginePlan, url: str, role: str, **kwargs: Any) -> Store:
    """Open the source or destination; a database that cannot be reached is one sentence."""
    try:
        return await Store.open(url, **kwargs)
    except (CopyRefused, SchemaOutOfDate):
        raise
    except ModuleNotFoundError as exc:
        raise CopyRefused(f"the {role} needs the driver {exc.name!r}, which is not installed") from None
    except Exception as exc:  # unreachable server, refused login, a file that cannot be created...
        detail = str(getattr(exc, "orig", None) or exc).strip().splitlines()
        raise CopyRefused(f"cannot open the {role} database {_shown(plan)}: "
                          f"{detail[0] if detail else type(exc).__name__}") from None


def _sqlite_destination(plan: EnginePlan) -> tuple[Path, bool]:
    """The destination file and whether it exists already; refused when it cannot be a database file."""
    path = plan.sqlite_file or Path()
    if not os.path.lexists(path):
        parent = path.parent if str(path.parent) else Path(".")
        if parent.exists() and not parent.is_dir():
            raise CopyRefused(f"{parent} is not a folder (a file is in the way)")
        if not parent.exists():  # as `hushtable run` says it: a typo in a path makes no folders
            raise CopyRefused(f"the folder {parent} does not exist; create it (mkdir -p {parent}) or fix the path")
        return path, False
    if path.is_dir():
        raise CopyRefused(f"{path} is a folder; name a database file")
    problem = sqlite_file_problem(path)
    if problem is not None:
        raise CopyRefused(f"the destination {problem.replace('no database at', 'cannot be read at')}")
    return path, True


def carry_export_key(src: EnginePlan, dst: EnginePlan, configured: str | None) -> str:
    """Keep the copy's pseudonyms those of the source: the key file beside a SQLite source goes beside a
    SQLite destination (mode 0600, never over another key); a server destination is told how to set
    it. Returns the sentence for the operator (it names the file, never the key)."""
    from storage.export_secret import secret_path

    if configured:
        return "exports of the copy use HUSHTABLE_EXPORT_SECRET, as before: keep it set for the new database"
    key_file = secret_path(src)
    if key_file is None or not key_file.is_file():
        return "no export key yet (one is made on the first export): nothing to carry"
    target = secret_path(dst)
    if target is None:
        return (f"the export key stays in {key_file}: set HUSHTABLE_EXPORT_SECRET to its contents for the new "
                "database, or exports of the copy get new pseudonyms")
    if target.exists():
        if target.read_text(encoding="ascii").strip() == key_file.read_text(encoding="ascii").strip():
            return f"the export key is already beside the copy ({target})"
        raise CopyRefused(f"{target} holds another export key; move it away to carry the source's")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(key_file.read_text(encoding="ascii"))
    return f"the export key was copied to {target}: exports of the copy keep the same pseudonyms"


async def copy_log(src_url: str, dst_url: str, *, configured: str | None = None) -> CopyReport:
    """Copy every table from ``src_url`` to the empty database at ``dst_url`` and verify the copy, then
    carry the export key (``configured``: HUSHTABLE_EXPORT_SECRET, when set).

    A new SQLite destination is written atomically: the copy goes to a hidden file beside it,
    which gets its name only once the counts match and every game replays."""
    plan = _plan(src_url, "source")
    dplan = _plan(dst_url, "destination")
    if plan.is_sqlite:
        # Opening a missing file would create an empty one where the operator expected their log.
        problem = sqlite_file_problem(plan.sqlite_file or Path())
        if problem is not None:
            raise CopyRefused(problem)
    target: Path | None = None  # a new SQLite file: written as ``tmp``, renamed when verified
    tmp = Path()
    if dplan.is_sqlite:
        path, exists = _sqlite_destination(dplan)
        if not exists:
            target = path
            tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
            dst_url = f"sqlite+aiosqlite:///{tmp.resolve()}"
    src = await _open(plan, src_url, "source", create=False)
    try:
        try:
            if target is not None:
                # Made here, so a folder that takes no new file (read-only, /proc) is said in one sentence
                # before a driver thread opens it; SQLite takes an empty file as an empty database.
                try:
                    tmp.touch(exist_ok=False)
                except OSError as exc:
                    raise CopyRefused(f"cannot open the destination database {_shown(dplan)}: no new file can be "
                                      f"made in {target.parent} ({exc.strerror or type(exc).__name__})") from None
            dst = await _open(dplan, dst_url, "destination")
            try:
                report = await _copy(src, dst)
            finally:
                await dst.aclose()
            if target is not None and report.ok:
                _publish(tmp, target)
            if report.ok:
                report.export_key = carry_export_key(plan, dplan, configured)
            return report
        finally:
            if target is not None:
                remove_sqlite_files(tmp)
    finally:
        await src.aclose()


def _publish(tmp: Path, target: Path) -> None:
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise CopyRefused(f"{target} appeared while the copy ran; nothing was written there") from None
    except OSError:
        os.rename(tmp, target)


async def _extra_tables(src: Store, dst: Store) -> list[sa.Table]:
    """Tables in the source that are not ours (APScheduler's job store), made in the destination.

    Reflected from the source with their types made generic (SQLite's BLOB becomes bytea on
    PostgreSQL), so a scheduled tournament's jobs move with the log.
    """
    ours = {t.name for t in _tables()} | {"alembic_version"}

    def reflect(sync_conn: sa.Connection) -> list[sa.Table]:
        md = sa.MetaData()
        md.reflect(sync_conn)
        return [t for t in md.sorted_tables if t.name not in ours]

    async with src.engine.connect() as conn:
        found = await conn.run_sync(reflect)
    md = sa.MetaData()
    extras = []
    for t in found:
        cols = [sa.Column(c.name, c.type.as_generic(), primary_key=c.primary_key, nullable=c.nullable) for c in t.columns]
        extras.append(sa.Table(t.name, md, *cols))
    if extras:
        async with dst.engine.begin() as conn:
            await conn.run_sync(md.create_all)
    return extras


async def _copy(src: Store, dst: Store) -> CopyReport:
    tables = _tables()
    tables += await _extra_tables(src, dst)
    for t in tables:
        if await _count(dst, t):
            raise CopyRefused(f"the destination already holds rows in {t.name}: copy into an empty database")
    report = CopyReport()
    async with src.engine.connect() as rconn, dst.engine.begin() as wconn:
        for t in tables:
            n = 0
            result = await rconn.stream(sa.select(t).order_by(*t.primary_key.columns))
            async for chunk in result.mappings().partitions(_BATCH):
                rows = [dict(r) for r in chunk]
                await wconn.execute(sa.insert(t), rows)
                n += len(rows)
            report.counts[t.name] = n
        if wconn.dialect.name == "postgresql":
            for t in tables:
                await _bump_sequence(wconn, t)
    for t in tables:
        theirs = await _count(dst, t)
        if theirs != report.counts[t.name] or theirs != await _count(src, t):
            report.mismatched[t.name] = (await _count(src, t), theirs)
    report.replay = await replay_every_game(dst)
    return report


async def _bump_sequence(conn: AsyncConnection, t: sa.Table) -> None:
    """Move a serial id's sequence past the copied ids (explicit ids do not advance it)."""
    pk = list(t.primary_key.columns)
    if len(pk) != 1 or not isinstance(pk[0].type, sa.Integer) or pk[0].autoincrement is False:
        return
    col = pk[0].name
    seq = (await conn.execute(sa.text("SELECT pg_get_serial_sequence(:t, :c)"), {"t": t.name, "c": col})).scalar()
    if seq is None:
        return
    await conn.execute(
        sa.text(f'SELECT setval(:s, COALESCE((SELECT max("{col}") FROM "{t.name}"), 0) + 1, false)'), {"s": seq}
    )

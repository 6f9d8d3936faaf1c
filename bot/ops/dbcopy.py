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

from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

import storage.tables  # noqa: F401 - registers every table on the metadata
from bot.ops.verify import ReplayReport, replay_every_game
from storage.engine import plan_engine
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

    @property
    def ok(self) -> bool:
        return not self.mismatched and self.replay.ok


def _tables() -> list[sa.Table]:
    return list(metadata.sorted_tables)


async def _count(store: Store, table: sa.Table) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(sa.select(sa.func.count()).select_from(table))).scalar_one())


async def copy_log(src_url: str, dst_url: str) -> CopyReport:
    """Copy every table from ``src_url`` to the empty database at ``dst_url`` and verify the copy."""
    plan = plan_engine(src_url)
    if plan.is_sqlite and not plan.in_memory and not Path(plan.url.database or "").expanduser().is_file():
        # Opening would create an empty file where the operator expected their log.
        raise CopyRefused(f"no database at {plan.url.database}")
    src = await Store.open(src_url, create=False)
    try:
        dst = await Store.open(dst_url)
        try:
            return await _copy(src, dst)
        finally:
            await dst.aclose()
    finally:
        await src.aclose()


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

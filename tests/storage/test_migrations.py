"""Migrations build the schema the models describe, re-running them changes nothing, and the
URL handling picks the right driver and settings per backend without connecting."""

from __future__ import annotations

import asyncio
import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.pool import StaticPool

from storage.store import (
    SchemaOutOfDate,
    Store,
    alembic_config,
    head_revision,
    make_engine,
    plan_engine,
)
from storage.tables import ALL_TABLES, metadata

OUR_TABLES = {t.__tablename__ for t in ALL_TABLES}
ROOT = Path(__file__).resolve().parents[2]

async def create(store: Store, **kw: Any) -> int:
    """``create_game`` for a key never seen: the id is always there."""
    gid = await store.create_game(**kw)
    assert gid is not None
    return gid



def _diff(sync_conn: sa.Connection) -> list[object]:
    def ours(obj: object, name: str | None, type_: str, reflected: bool, compare_to: object) -> bool:
        table = name if type_ == "table" else getattr(getattr(obj, "table", None), "name", None)
        return table in OUR_TABLES

    ctx = MigrationContext.configure(sync_conn, opts={"compare_type": True, "include_object": ours})
    return list(compare_metadata(ctx, metadata))


async def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return set(await conn.run_sync(lambda c: sa.inspect(c).get_table_names()))
    finally:
        await engine.dispose()


async def test_upgrade_from_empty_matches_the_models(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'sub' / 'new.db'}"  # the folder is made too
    st = await Store.open(url)
    try:
        assert await st.revision() == head_revision() == "0012"
        async with st.engine.connect() as conn:
            assert await conn.run_sync(_diff) == []
    finally:
        await st.aclose()
    assert await _tables(url) == OUR_TABLES | {"alembic_version"}


async def test_postgres_upgrade_matches_the_models_and_downgrades(pg_url: str) -> None:
    st = await Store.open(pg_url)
    try:
        assert await st.revision() == head_revision()
        async with st.engine.connect() as conn:
            assert await conn.run_sync(_diff) == []
        await st.migrate()  # idempotent on a server database too
    finally:
        await st.aclose()
    assert await _tables(pg_url) == OUR_TABLES | {"alembic_version"}
    cfg = alembic_config(pg_url)
    await asyncio.to_thread(command.downgrade, cfg, "base")
    assert await _tables(pg_url) == {"alembic_version"}
    await asyncio.to_thread(command.upgrade, cfg, "head")
    assert await _tables(pg_url) == OUR_TABLES | {"alembic_version"}


def test_upgrade_head_is_idempotent(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"  # a plain sqlite URL is given the async driver
    cfg = alembic_config(url)
    command.upgrade(cfg, "head")

    async def write_then_reopen() -> int:
        st = await Store.open(url)
        try:
            return await create(st,
                game="decrypto", variant="", config={}, platform="console", place="tty", place_name="", host="console:me", lobby={}
            )
        finally:
            await st.aclose()

    gid = asyncio.run(write_then_reopen())
    command.upgrade(cfg, "head")  # again: nothing to do, nothing lost
    out = subprocess.run(
        [sys.executable, "-m", "storage.migrations", "upgrade", "head", "--url", url],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr

    async def check() -> None:
        st = await Store.open(url, create=False)
        try:
            assert await st.revision() == head_revision()
            assert [g.id for g in await st.games()] == [gid]
            async with st.engine.connect() as conn:
                assert await conn.run_sync(_diff) == []
                versions = (await conn.execute(sa.text("SELECT version_num FROM alembic_version"))).all()
            assert versions == [(head_revision(),)]
        finally:
            await st.aclose()

    asyncio.run(check())


def test_downgrade_to_base_and_back(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'down.db'}"
    cfg = alembic_config(url)
    command.upgrade(cfg, "head")
    command.downgrade(cfg, "base")
    assert asyncio.run(_tables(url)) == {"alembic_version"}
    command.upgrade(cfg, "head")
    assert asyncio.run(_tables(url)) == OUR_TABLES | {"alembic_version"}


async def test_open_without_create_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    with pytest.raises(SchemaOutOfDate):
        await Store.open(url, create=False)
    st = await Store.open(url)
    await st.aclose()
    st = await Store.open(url, create=False)
    await st.aclose()


def test_url_planning_per_backend() -> None:
    sqlite_file = plan_engine("sqlite:///data/x.db")
    assert sqlite_file.url.drivername == "sqlite+aiosqlite" and sqlite_file.is_sqlite and not sqlite_file.in_memory
    assert "poolclass" not in sqlite_file.engine_kwargs

    mem = plan_engine("sqlite+aiosqlite://")
    assert mem.in_memory and mem.engine_kwargs["poolclass"] is StaticPool

    pg = plan_engine("postgresql://hush:p%40ss@db.internal:5432/hushtable")
    assert pg.url.drivername == "postgresql+asyncpg" and pg.backend == "postgresql" and not pg.is_sqlite
    assert pg.engine_kwargs == {"pool_pre_ping": True, "hide_parameters": True}
    assert sqlite_file.engine_kwargs["hide_parameters"] and mem.engine_kwargs["hide_parameters"]
    assert pg.url.password == "p@ss" and pg.url.host == "db.internal" and pg.url.database == "hushtable"
    assert plan_engine("postgresql+psycopg://u@h/d").url.drivername == "postgresql+psycopg"

    for sync_url in ("postgresql+psycopg2://u@h/d", "sqlite+pysqlite:///x.db"):
        with pytest.raises(ValueError, match="synchronous driver"):
            plan_engine(sync_url)
    with pytest.raises(ValueError, match="no default async driver"):
        plan_engine("oracle://u@h/d")

    # The password's "%" survives configparser interpolation in the alembic config.
    cfg = alembic_config("postgresql://hush:p%40ss@db.internal/hushtable")
    assert cfg.get_main_option("sqlalchemy.url") == "postgresql+asyncpg://hush:p%40ss@db.internal/hushtable"


def test_postgres_migration_renders_without_connecting() -> None:
    # Offline mode compiles the migration for the Postgres dialect; no server and no driver needed.
    buf = io.StringIO()
    command.upgrade(alembic_config("postgresql://u:pw@nowhere.invalid/db", output_buffer=buf), "head", sql=True)
    sql = buf.getvalue()
    for table in OUR_TABLES:
        assert f"CREATE TABLE {table} (" in sql
    assert "created_at TIMESTAMP WITH TIME ZONE NOT NULL" in sql
    assert "seed BIGINT" in sql and "config JSON NOT NULL" in sql
    assert "CREATE INDEX ix_games_platform_place_status ON games (platform, place, status)" in sql
    assert "INSERT INTO alembic_version (version_num) VALUES ('0001')" in sql


def test_postgres_engine_uses_asyncpg_and_no_sqlite_hooks() -> None:
    url = "postgresql://u:pw@nowhere.invalid/db"
    if importlib.util.find_spec("asyncpg") is None:
        # The branch picked asyncpg: without it installed the engine cannot be built.
        with pytest.raises(ModuleNotFoundError, match="asyncpg"):
            make_engine(url)
        return
    engine = make_engine(url)  # building an engine does not connect
    try:
        assert engine.dialect.name == "postgresql" and engine.dialect.driver == "asyncpg"
    finally:
        asyncio.run(engine.dispose())

"""SQLite URI URLs (``sqlite+aiosqlite:///file:/p/x.db?mode=ro&uri=true``) name the file after ``file:``:
the store, the export key, /healthz and backup all use that file, and nothing is made under the
working folder (a stray ``./file:/p/`` tree was)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.ops.backup import backup, sqlite_path
from bot.ops.health import check_database
from storage.engine import plan_engine
from storage.export_secret import export_secret, secret_path
from storage.store import Store


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # where a stray "file:" tree would appear
    return tmp_path / "data" / "x.db"


async def test_a_sqlite_uri_url_uses_the_file_it_names(db: Path, tmp_path: Path) -> None:
    db.parent.mkdir()
    (await Store.open(f"sqlite+aiosqlite:///{db}")).engine.sync_engine.dispose()
    url = f"sqlite+aiosqlite:///file:{db}?mode=ro&uri=true"
    plan = plan_engine(url)
    assert plan.sqlite_file == db and not plan.in_memory
    store = await Store.open(url, create=False)
    try:
        health = await check_database(store)
        assert health.ok, health.reason
        assert secret_path(plan) == db.with_name("x.db.export-secret")
        key = export_secret(plan)
        assert db.with_name("x.db.export-secret").read_text().strip() == key
    finally:
        await store.aclose()
    assert sqlite_path(url) == db
    report = await backup(url, tmp_path / "copy.db")
    assert (tmp_path / "copy.db").is_file() and report is not None
    assert list((tmp_path / "work").iterdir()) == [], "nothing is made under the working folder"


def test_a_memory_uri_is_in_memory() -> None:
    plan = plan_engine("sqlite+aiosqlite:///file::memory:?uri=true&cache=shared")
    assert plan.in_memory and plan.sqlite_file is None

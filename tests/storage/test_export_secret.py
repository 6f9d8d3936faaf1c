"""No silent default export secret: each installation makes its own key on the first export and
keeps it beside the database (0600); pseudonyms are stable within an installation and differ
between installations; a server database without a configured key is refused."""

from __future__ import annotations

import io
import json
import stat
from pathlib import Path

import pytest

from bot.settings import Settings
from storage.engine import plan_engine
from storage.export import export_games, pseudonym
from storage.export_secret import ExportSecretMissing, export_secret, secret_path
from storage.store import Store
from tests.storage.test_export import record_played_game


async def players(url: str) -> list[str | None]:
    async with await Store.open(url) as store:
        buf = io.StringIO()
        await export_games(store, out=buf, fmt="jsonl", secret=None)
    return [s["player"] for line in buf.getvalue().splitlines() for s in json.loads(line)["seats"]]


async def install(folder: Path) -> str:
    url = f"sqlite+aiosqlite:///{folder / 'hushtable.db'}"
    async with await Store.open(url) as store:
        await record_played_game(store)
    return url


def test_settings_have_no_default_secret() -> None:
    assert Settings(_env_file=None).export_secret is None  # type: ignore[call-arg]


async def test_each_installation_has_its_own_stable_key(tmp_path: Path) -> None:
    a, b = await install(tmp_path / "a"), await install(tmp_path / "b")
    key_file = tmp_path / "a" / "hushtable.db.export-secret"
    assert not key_file.exists()  # made on the first export, not before
    first = await players(a)
    assert key_file.exists() and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key = key_file.read_text().strip()
    assert len(key) == 64 and key != "change-me"
    assert first[:2] == [pseudonym(key, "discord:111"), pseudonym(key, "discord:222")]
    # Stable within one installation (another process reads the same file)...
    assert await players(a) == first
    assert export_secret(plan_engine(a)) == key
    # ...and unrelated between two installations.
    other = await players(b)
    assert other[:2] != first[:2] and not set(other[:2]) & set(first[:2])
    assert secret_path(plan_engine(b)) == tmp_path / "b" / "hushtable.db.export-secret"


async def test_configured_key_wins_and_server_databases_need_one(tmp_path: Path, pg_url: str) -> None:
    url = await install(tmp_path)
    async with await Store.open(url) as store:
        buf = io.StringIO()
        await export_games(store, out=buf, fmt="jsonl", secret="operator-key")
    assert json.loads(buf.getvalue())["seats"][0]["player"] == pseudonym("operator-key", "discord:111")
    assert not (tmp_path / "hushtable.db.export-secret").exists()
    async with await Store.open(pg_url) as store:
        await record_played_game(store)
        with pytest.raises(ExportSecretMissing, match="HUSHTABLE_EXPORT_SECRET"):
            await export_games(store, out=io.StringIO(), fmt="jsonl", secret=None)
        assert await export_games(store, out=io.StringIO(), fmt="jsonl", secret="k") == 1

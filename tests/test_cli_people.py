"""`hushtable data export|forget --member` and `hushtable audit` on a real SQLite log: bad input is
one line and changes nothing; an export writes the member's JSON; forget erases; audit lists both."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from storage.store import Store
from tests.storage.test_people import MEMBER, NAME, UNIQUE, log_game

runner = CliRunner()


def _db(tmp_path: Path) -> str:
    url = f"sqlite+aiosqlite:///{tmp_path / 'h.db'}"

    async def seed() -> None:
        store = await Store.open(url)
        try:
            await log_game(store, "chameleon", 11, ((MEMBER, NAME, UNIQUE),))
        finally:
            await store.aclose()

    asyncio.run(seed())
    return url


def test_data_export_forget_and_audit(tmp_path: Path) -> None:
    url = _db(tmp_path)
    out = tmp_path / "me.json"
    for bad in (["--member", "12345"], ["--member", "erased:abc"]):
        r = runner.invoke(app, ["data", "export", *bad, "--out", str(out), "--database", url])
        assert r.exit_code == 2 and "PLATFORM:ID" in r.output and not out.exists()
    r = runner.invoke(app, ["data", "export", "--member", MEMBER, "--out", str(out), "--database", url])
    assert r.exit_code == 0, r.output
    data = json.loads(out.read_text())
    assert data["member"] == MEMBER and data["games"][0]["seats"][0]["display_name"] == NAME
    r = runner.invoke(app, ["data", "export", "--member", MEMBER, "--out", str(out), "--database", url])
    assert r.exit_code == 2 and "exists" in r.output

    r = runner.invoke(app, ["data", "forget", "--member", MEMBER, "--database", url])
    assert r.exit_code == 0 and "Erased from 1 game(s)." in r.output, r.output
    again = tmp_path / "again.json"
    r = runner.invoke(app, ["data", "export", "--member", MEMBER, "--out", str(again), "--database", url])
    assert json.loads(again.read_text())["games"] == []

    r = runner.invoke(app, ["audit", "--database", url])
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert any("data export" in ln and "cli:" in ln for ln in lines) and any("erasure done" in ln for ln in lines)
    assert MEMBER not in r.output

    missing = f"sqlite+aiosqlite:///{tmp_path / 'none.db'}"
    r = runner.invoke(app, ["audit", "--database", missing])
    assert r.exit_code != 0 and not (tmp_path / "none.db").exists()

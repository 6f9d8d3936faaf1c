"""docs/export-schema.md against the code: the JSON Lines fields of a real export, the CSV columns in
order, every registered game and every platform that writes games are the ones the page documents."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from bot.core.privacy import ResearchFilter
from bot.schema_doc import BEGIN, END, updated
from games.catalog import descriptors
from storage.export import CSV_COLUMNS, SCHEMA, export_games
from storage.store import Store
from tests.eval.logging_helpers import log_random_game

DOC = (Path(__file__).resolve().parents[2] / "docs" / "export-schema.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return DOC.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _documented_fields() -> set[str]:
    rows = [ln for ln in _section("JSON Lines").split("### The games", 1)[0].splitlines() if ln.startswith("| `")]
    return {name for ln in rows for name in re.findall(r"`([a-z_]+)`", ln.split("|")[1])}


async def test_the_documented_jsonl_fields_and_csv_columns_are_the_exports(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path}/h.db")
    try:
        for d in descriptors():
            lo = d.engine.seat_range(d.engine.make_config())[0]
            await log_random_game(store, d.id, d.engine.variants[0], lo, seed=1)
        out = io.StringIO()
        await export_games(store, out=out, fmt="jsonl", pseudonymise=True, secret="k" * 32)
        records = [json.loads(line) for line in out.getvalue().splitlines()]
        raw = io.StringIO()
        # The research filter (bot.core.privacy) adds the count of texts it withheld.
        await export_games(store, out=raw, fmt="jsonl", pseudonymise=False, secret="k" * 32,
                           withhold=ResearchFilter(lambda _key: False))
        raw_keys = {k for line in raw.getvalue().splitlines() for k in json.loads(line)}
        table = io.StringIO()
        await export_games(store, out=table, fmt="csv", pseudonymise=True, secret="k" * 32)
    finally:
        await store.aclose()
    assert {r["game"] for r in records} == {d.id for d in descriptors()}
    keys = {k for r in records for k in r} | raw_keys
    documented = _documented_fields()
    assert keys == documented, f"exported, not documented: {sorted(keys - documented)}; " \
                               f"documented, not exported: {sorted(documented - keys)}"
    assert all(r["schema"] == SCHEMA for r in records) and f"`{SCHEMA}`" in DOC
    header = next(csv.reader(io.StringIO(table.getvalue())))
    documented_columns = [c.strip() for c in _section("CSV").split("`")[1].replace("\n", " ").split(",")]
    assert header == list(CSV_COLUMNS) == documented_columns


def test_every_game_and_every_platform_that_writes_games_is_documented() -> None:
    from bot.console.app import PLATFORM as CONSOLE
    from bot.research.logbook import IMPORT_PLATFORM
    from bot.tournaments.runner import HEADLESS

    table = DOC.split(BEGIN, 1)[1].split(END, 1)[0]
    assert [ln.split("`")[1] for ln in table.splitlines() if ln.startswith("| `") and not ln.startswith("| `game`")] \
        == [d.id for d in descriptors()]
    platform_row = next(ln for ln in _section("JSON Lines").splitlines() if ln.startswith("| `platform`"))
    documented = set(re.findall(r"`([a-z]+)`", platform_row.split("|")[3]))
    assert {"discord", "slack", CONSOLE, HEADLESS, IMPORT_PLATFORM} <= documented, documented


def test_the_games_rows_are_the_catalogs() -> None:
    """The per-game table is generated (``python -m bot.schema_doc``): a new game, or a changed descriptor, is one
    command away from its row."""
    assert updated(DOC) == DOC, "run python -m bot.schema_doc"

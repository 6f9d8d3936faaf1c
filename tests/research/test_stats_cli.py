"""`hushtable import record` and `hushtable stats` on a real SQLite file, with hand-counted metrics."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from bot.research.logbook import log_record
from games.record import Record, to_lines
from storage.store import SeatRecord, Store
from storage.tables import SeatKind
from tests.research.builders import chameleon_round, decrypto_benchmark, spy_game

runner = CliRunner()
SURVIVED = [(True, False)] * 8
LOST = [(True, True), (False, True)]  # 1 miscommunication, 2 interceptions, turn 2


def write(path: Path, *recs: Record) -> Path:
    lines = [json.dumps(x) for r in recs for x in to_lines(r.game, r.config, r.seats, r.seed, r.actions, [], None)]
    path.write_text("\n".join(lines) + "\n")
    return path


def cli(*args: str) -> tuple[int, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.output


def test_import_records_then_stats_as_table_and_json(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    f = write(tmp_path / "games.jsonl", decrypto_benchmark(SURVIVED, seed=1), decrypto_benchmark(LOST, seed=2),
              spy_game([{"v0": "spy", "v1": "spy", "v2": "spy", "spy": "v0"}], seed=3),
              chameleon_round({"c": "p0", "p0": "p1", "p1": "p0", "p2": "p0"}, seed=1))
    code, out = cli("import", "record", str(f), "--database", db)
    assert code == 0, out
    assert out.count("logged as #") == 4 and "finished" in out
    code, out = cli("import", "record", str(f), "--database", db)
    assert code == 0 and out.count("already imported") == 4

    code, out = cli("stats", "--database", db, "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["games_measured"] == 4 and data["skipped"] == []
    dec = data["metrics"]["decrypto"]["benchmark"]
    assert (dec["games"], dec["miscommunications"], dec["interceptions"], dec["team_win_rate"], dec["mean_turns"]) == \
        (2, 1, 2, 0.5, 5.0)
    spy = data["metrics"]["spy"]["spygame"]
    assert spy["spy"] == {"seats": 1, "win_rate": 0.0, "rounds_survived": 1.0, "votes_per_round": 3.0}
    cham = data["metrics"]["chameleon"]["classic"]
    assert (cham["catch_rate"], cham["escape_rate"], cham["chameleon_points_per_round"]) == (0.0, 1.0, 2.0)

    code, out = cli("stats", "--database", db, "--game", "decrypto")
    assert code == 0, out
    assert out.startswith("2 game(s) measured (game=decrypto)")
    assert "decrypto (benchmark)" in out and "spy" not in out
    assert re.search(r"^  miscommunications \(total\) +1$", out, re.M)
    assert re.search(r"^  mean turns per game +5\.000$", out, re.M)
    assert re.search(r"^  encoder-decoder win rate +0\.500$", out, re.M)


def test_stats_filters_by_source_and_date(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path}/h.db"

    async def fill() -> None:
        store = await Store.open(url)
        try:
            for i, (platform, turns) in enumerate([("import", SURVIVED), ("console", LOST)]):
                rec = decrypto_benchmark(turns, seed=i)
                seats = [SeatRecord(s, SeatKind.AI, f"P{s}", agent_spec="random") for s in range(3)]
                await log_record(store, rec, seats=seats, place="here", place_name="", provenance={},
                                 actor="test", key=f"k{i}", platform=platform)
        finally:
            await store.aclose()

    asyncio.run(fill())
    code, out = cli("stats", "--database", url, "--source", "console", "--json")
    assert code == 0, out
    dec = json.loads(out)["metrics"]["decrypto"]["benchmark"]
    assert (dec["games"], dec["team_win_rate"], dec["interceptions"]) == (1, 0.0, 2)
    code, out = cli("stats", "--database", url, "--source", "import", "--source", "console", "--json")
    assert json.loads(out)["games_measured"] == 2
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d")
    code, out = cli("stats", "--database", url, "--since", tomorrow, "--json")
    assert code == 0 and json.loads(out)["games_measured"] == 0 and json.loads(out)["metrics"] == {}


def test_stats_refuses_a_missing_database_and_creates_none(tmp_path: Path) -> None:
    code, out = cli("stats", "--database", f"sqlite:///{tmp_path}/none.db")
    assert code == 2 and "no database at" in out
    assert not (tmp_path / "none.db").exists()
    code, out = cli("stats", "--database", f"sqlite:///{tmp_path}/none.db", "--game", "poker")
    assert code == 2 and "unknown game" in out


def test_import_record_refuses_a_file_with_a_broken_game(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    good = write(tmp_path / "good.jsonl", decrypto_benchmark(SURVIVED, seed=1))
    lines = good.read_text().splitlines()
    bad_action = json.loads(lines[1])
    bad_action["seat"] = 2  # the interceptor cannot write the hints
    f = tmp_path / "mixed.jsonl"
    f.write_text(good.read_text() + "\n".join([lines[0], json.dumps(bad_action)]) + "\n")
    code, out = cli("import", "record", str(f), "--database", db)
    assert code == 2
    assert f"game 2 (from line {len(lines) + 1})" in out and "illegal" in out and "nothing imported" in out
    assert not (tmp_path / "h.db").exists()


def test_an_unfinished_record_is_logged_aborted_and_left_out_of_stats(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    rec = decrypto_benchmark(SURVIVED, seed=1)
    short = Record(rec.game, rec.config, rec.seats, rec.seed, rec.actions[:7], None)
    code, out = cli("import", "record", str(write(tmp_path / "short.jsonl", short)), "--database", db)
    assert code == 0 and "aborted" in out
    code, out = cli("stats", "--database", db, "--json")
    assert json.loads(out)["games_measured"] == 0


def test_a_half_written_import_is_ended_as_aborted(tmp_path: Path) -> None:
    """A write that fails after the game row exists (two seat records for seat 0: the
    database refuses the roster) leaves an aborted game, never one a bot would resume."""
    url = f"sqlite+aiosqlite:///{tmp_path}/h.db"

    async def go() -> tuple[str, str]:
        store = await Store.open(url)
        try:
            seats = [SeatRecord(s, SeatKind.AI, f"P{s}", agent_spec="random") for s in (0, 0, 1)]
            try:
                await log_record(store, decrypto_benchmark(SURVIVED), seats=seats, place="here", place_name="",
                                 provenance={}, actor="test", key="k")
            except Exception as exc:  # noqa: BLE001 - whichever error the database raises
                error = type(exc).__name__
            else:
                error = "none"
            rows = await store.games()
            return error, rows[0].status
        finally:
            await store.aclose()

    error, status = asyncio.run(go())
    assert error == "IntegrityError" and status == "aborted"

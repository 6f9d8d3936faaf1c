"""Export without a database, unknown games, files of several games, aborted games."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

import games
from bot.cli import app
from games.record import Record
from tests.research.builders import decrypto_benchmark
from tests.research.test_stats_cli import SURVIVED, write

runner = CliRunner()


def test_export_without_a_database_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    r = runner.invoke(app, ["export", "--database", f"sqlite:///{tmp_path}/hushtable.db"])
    assert r.exit_code == 2
    assert "no database at" in r.output and "exported" not in r.output
    assert not (tmp_path / "hushtable.db").exists()


def test_export_refuses_an_unknown_game_and_takes_aliases(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    sim = runner.invoke(app, ["sim", "spy", "--seed", "3", "--json"]).output
    assert runner.invoke(app, ["import", "record", str(_text(tmp_path / "s.jsonl", sim)), "--database", db]).exit_code == 0
    r = runner.invoke(app, ["export", "--database", db, "--game", "poker"])
    assert r.exit_code == 2
    assert "unknown game 'poker'" in r.output and ", ".join(sorted(games.registry())) in r.output
    r = runner.invoke(app, ["export", "--database", db, "--game", "whoisspy"])
    assert r.exit_code == 0 and "exported 1 game(s)" in r.output


def _text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_replay_of_a_file_with_several_games_replays_and_names_each(tmp_path: Path) -> None:
    ids = sorted(games.registry())  # one of each game in the catalog
    sims = [runner.invoke(app, ["sim", g, "--seed", "2", "--json"]).output for g in ids]
    f = _text(tmp_path / "all.jsonl", "".join(sims))
    r = runner.invoke(app, ["replay", str(f)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"{f} holds {len(ids)} games; replaying each."
    starts = [1 + sum(len(s.splitlines()) for s in sims[:i]) for i in range(len(sims))]
    for i, (game, start) in enumerate(zip(ids, starts, strict=True), start=1):
        assert lines[i].startswith(f"game {i} (line {start}): {game} (") and "Winners:" in lines[i]
    # A broken second game is named by game and file line; the others still replay.
    broken = sims[1].splitlines()
    broken[2] = "{not json"
    f.write_text(sims[0] + "\n".join(broken) + "\n" + "".join(sims[2:]))
    r = runner.invoke(app, ["replay", str(f)])
    assert r.exit_code == 2
    assert f"game 2 (line {starts[1]}): line {starts[1] + 2}: not JSON" in r.output
    assert r.output.count("Winners:") == len(ids) - 1


def test_an_aborted_game_replays_as_aborted(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    rec = decrypto_benchmark(SURVIVED, seed=1)
    short = Record(rec.game, rec.config, rec.seats, rec.seed, rec.actions[:4], None)
    assert "aborted" in runner.invoke(app, ["import", "record", str(write(tmp_path / "s.jsonl", short)), "--database", db]).output
    out = tmp_path / "export.jsonl"
    r = runner.invoke(app, ["export", "--database", db, "--out", str(out)])
    assert r.exit_code == 0 and json.loads(out.read_text())["status"] == "aborted"
    r = runner.invoke(app, ["replay", str(out)])
    assert r.exit_code == 0
    assert "4 actions: aborted (the table was stopped before the game ended)." in r.output
    assert "not over yet" not in r.output
    # A sim record cut short is not aborted: it is simply not over.
    r = runner.invoke(app, ["replay", str(tmp_path / "s.jsonl")])
    assert r.exit_code == 0 and "the game is not over yet" in r.output

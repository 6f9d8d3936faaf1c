"""Spymasters in a small real tournament (the random player against the embedding baseline),
then in `hushtable stats` and an export that replays: the command line, end to end."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app


def test_spymasters_tournament_stats_and_export(tmp_path: Path) -> None:
    env = {"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
           "HUSHTABLE_AGENT_CHOICES": "random,embed:minilm", "HUSHTABLE_FALLBACK_AGENT": "random",
           "HUSHTABLE_DEFAULT_AGENT": "random"}
    runner = CliRunner()

    def cli(*args: str) -> str:
        res = runner.invoke(app, list(args), env=env)
        assert res.exit_code == 0, (res.output, res.exception)
        return res.output

    out = cli("tournament", "create", "--game", "spymasters", "--seats", "4", "--seed", "4", "--name", "sm")
    assert "spymasters (classic)" in out and "random, embed:minilm" in out
    out = cli("tournament", "run", "1")
    assert "spymaster (" in out and "guesser (" in out and "acc" in out
    out = cli("stats")
    assert "spymasters (classic)" in out and "clue-number accuracy" in out and "games ended by the assassin" in out
    export = tmp_path / "games.jsonl"
    cli("export", "--out", str(export))
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert lines and all(g["game"] == "spymasters" for g in lines)
    out = cli("replay", str(export))
    assert out.count("spymasters (classic)") == len(lines) and "wins" in out

"""Every registered game end to end on the command line, read from the catalog: a small real
tournament (the random player against the embedding baseline, so the game's agent module
plays), its leaderboard with the game's roles and columns, ``hushtable stats`` with the game's
metric labels, an export that replays, and the clue report where the game declares one.

A new game joins by its catalog line: nothing here names a game."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from games.catalog import descriptors
from games.descriptor import ClueScoring, GameDescriptor


@pytest.mark.parametrize("d", descriptors(), ids=lambda d: d.id)
def test_a_tournament_stats_export_replay_and_clues(tmp_path: Path, d: GameDescriptor) -> None:
    env = {"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
           "HUSHTABLE_AGENT_CHOICES": "random,embed:minilm", "HUSHTABLE_FALLBACK_AGENT": "random",
           "HUSHTABLE_DEFAULT_AGENT": "random"}
    runner = CliRunner()

    def cli(*args: str) -> str:
        res = runner.invoke(app, list(args), env=env)
        assert res.exit_code == 0, (args, res.output, res.exception)
        return res.output

    variant = str(d.variants[0])
    seats = d.engine.seat_range(d.engine.make_config(variant))[0]
    out = cli("tournament", "create", "--game", d.id, "--seats", str(seats), "--seed", "4", "--name", "conf")
    assert f"{d.id} ({variant})" in out and "random, embed:minilm" in out
    board = cli("tournament", "run", "1")
    assert "random" in board and "embed:minilm" in board
    for m in d.leaderboard():
        assert m.short in board, (m.key, board)
    out = cli("stats")
    assert f"{d.id} ({variant})" in out
    labels = [label for key, label in d.labels().items() if key != "games"]
    assert any(label in out for label in labels), out
    export = tmp_path / "games.jsonl"
    cli("export", "--out", str(export))
    lines = [json.loads(line) for line in export.read_text().splitlines()]
    assert lines and all(g["game"] == d.id for g in lines)
    out = cli("replay", str(export))
    assert out.count(f"{d.id} ({variant})") == len(lines)
    if d.clue_scoring is not ClueScoring.NONE:
        out = cli("sneak", "score", "-e", "embed:minilm")
        counted = re.search(r"(\d+) game\(s\), (\d+) message\(s\)", out)
        assert counted is not None and int(counted.group(1)) == len(lines) and int(counted.group(2)) > 0, out

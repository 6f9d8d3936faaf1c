"""The command line: sim, replay (and its errors), export of a finished game and its replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import games
from bot.cli import app

runner = CliRunner()
VARIANTS = [(g, v) for g, e in games.registry().items() for v in e.variants]


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_sim_transcript_and_json_replay(tmp_path: Path, game: str, variant: str) -> None:
    r = runner.invoke(app, ["sim", game, "--variant", variant, "--seed", "5"])
    assert r.exit_code == 0, r.output
    assert "RESULT:" in r.output
    j = runner.invoke(app, ["sim", game, "--variant", variant, "--seed", "5", "--json"])
    lines = [json.loads(line) for line in j.output.splitlines()]
    assert lines[0]["type"] == "game" and lines[-1]["type"] == "result"
    assert all("audience" in line for line in lines if line["type"] == "event")
    rec = tmp_path / "g.jsonl"
    rec.write_text(j.output)
    out = runner.invoke(app, ["replay", str(rec)])
    assert out.exit_code == 0, out.output
    assert "Winners:" in out.output


def test_sim_rejects_bad_arguments() -> None:
    assert runner.invoke(app, ["sim", "poker"]).exit_code != 0
    r = runner.invoke(app, ["sim", "decrypto", "--variant", "benchmark", "--seats", "7"])
    assert r.exit_code != 0 and "3-3 seats" in r.output
    r = runner.invoke(app, ["sim", "spy", "-o", "blank=true", "--seats", "6", "--seed", "2"])
    assert r.exit_code == 0, r.output


def test_replay_names_the_first_bad_line(tmp_path: Path) -> None:
    good = runner.invoke(app, ["sim", "chameleon", "--seed", "1", "--json"]).output.splitlines()
    bad = tmp_path / "bad.jsonl"
    lines = list(good)
    lines[3] = "{not json"
    bad.write_text("\n".join(lines))
    r = runner.invoke(app, ["replay", str(bad)])
    assert r.exit_code == 2 and "line 4" in r.output
    # An action the rules refuse: name its line.
    lines = list(good)
    idx = next(i for i, line in enumerate(lines) if json.loads(line)["type"] == "action")
    act = json.loads(lines[idx])
    act["seat"] = (act["seat"] + 1) % 3
    lines[idx] = json.dumps(act)
    bad.write_text("\n".join(lines))
    r = runner.invoke(app, ["replay", str(bad)])
    assert r.exit_code == 2 and f"line {idx + 1}" in r.output
    bad.write_text(json.dumps({"type": "action"}) + "\n")
    r = runner.invoke(app, ["replay", str(bad)])
    assert r.exit_code == 2 and "line 1" in r.output


def test_export_then_replay(tmp_path: Path) -> None:
    from bot.core.messages import CommandKind
    from tests.bot.core.conftest import ALICE, BOB, HERE, make_harness

    url = f"sqlite+aiosqlite:///{tmp_path}/x.db"

    async def play() -> None:
        h = await make_harness(url)
        await h.send(CommandKind.CREATE, ALICE, HERE, game="spy")
        await h.send(CommandKind.JOIN, BOB, HERE)
        await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)
        await h.send(CommandKind.START, ALICE, HERE)
        await h.play_humans()
        await h.service.stop()
        await h.store.aclose()

    asyncio.run(play())
    out = tmp_path / "export.jsonl"
    r = runner.invoke(app, ["export", "--database", url, "--out", str(out)], env={"HUSHTABLE_EXPORT_SECRET": "k1-" + "0" * 29})
    assert r.exit_code == 0, r.output
    record = json.loads(out.read_text().splitlines()[0])
    assert ALICE.user_id not in json.dumps(record["seats"]), "user ids are pseudonymised"
    rr = runner.invoke(app, ["replay", str(out)])
    assert rr.exit_code == 0, rr.output
    csv_out = tmp_path / "export.csv"
    r = runner.invoke(app, ["export", "--database", url, "--format", "csv", "--out", str(csv_out), "--game", "spy"])
    assert r.exit_code == 0 and csv_out.read_text().count("\n") > 5


def test_version_flag_and_command_agree() -> None:
    from importlib.metadata import version

    flag, cmd = runner.invoke(app, ["--version"]), runner.invoke(app, ["version"])
    assert flag.exit_code == 0 and cmd.exit_code == 0
    assert flag.output == cmd.output == f"hushtable {version('hushtable')}\n"


@pytest.mark.parametrize("command", [["doctor"], ["sneak", "report"], ["sneak", "score"], ["stats"], ["export"]])
def test_reading_commands_never_create_a_missing_database(tmp_path: Path, command: list[str]) -> None:
    db = tmp_path / "nope.db"
    out = runner.invoke(app, [*command, "--database", f"sqlite:///{db}"])
    assert out.exit_code != 0 and "no database at" in out.output
    assert not db.exists()

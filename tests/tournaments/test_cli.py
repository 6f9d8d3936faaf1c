"""The command line on a small real tournament of `random` and `embed:minilm` (the bundled
embedding model): create, run with a progress bar and a printed leaderboard, list, exports."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app

ROOT = Path(__file__).resolve().parents[2]


def test_cli_creates_runs_lists_and_exports_a_tournament(tmp_path: Path) -> None:
    env = {"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
           "HUSHTABLE_AGENT_CHOICES": "random,embed:minilm", "HUSHTABLE_FALLBACK_AGENT": "random",
           "HUSHTABLE_DEFAULT_AGENT": "random"}
    runner = CliRunner()

    def cli(*args: str) -> str:
        res = runner.invoke(app, ["tournament", *args], env=env)
        assert res.exit_code == 0, (res.output, res.exception)
        return res.output

    out = cli("create", "--game", "chameleon", "--variant", "classic", "--seats", "3", "--seed", "4", "--name", "smoke")
    assert "created #1 smoke" in out and "2 games" in out and "random, embed:minilm" in out

    bad = runner.invoke(app, ["tournament", "create", "--game", "spy", "-e", "llm:http://x.example"], env=env)
    assert bad.exit_code == 2 and "Unknown entrant" in bad.output

    out = cli("run", "1", "--chart", str(tmp_path / "board.png"))
    assert "Tournament #1 smoke" in out and "embed:minilm" in out and "chameleon (1):" in out and "player (2):" in out
    assert (tmp_path / "board.png").read_bytes().startswith(b"\x89PNG")
    # Where the entrants' moves came from, per agent and role: the random player's are its own draws.
    sources = out.split("Where the moves came from", 1)[1]
    assert "specialist" in sources and any(line.startswith("random") and "100%" in line for line in sources.splitlines())

    assert "#1 smoke: chameleon (classic)" in cli("list") and "finished" in cli("list")
    assert cli("list", "--tenant", "discord:1").strip() == "no tournaments yet"

    rows = list(csv.DictReader(io.StringIO(cli("leaderboard", "1", "--format", "csv"))))
    assert sorted(r["entrant"] for r in rows) == ["embed:minilm", "random"] and {r["games"] for r in rows} == {"2"}
    doc = json.loads(cli("leaderboard", "1", "--format", "json"))
    assert doc["tournament"]["game"] == "chameleon" and [s["rank"] for s in doc["standings"]] == [1, 2]
    victim, link = tmp_path / "victim.txt", tmp_path / "board.csv"
    victim.write_text("precious\n")
    link.symlink_to(victim)
    bad = runner.invoke(app, ["tournament", "leaderboard", "1", "--format", "csv", "--out", str(link)], env=env)
    assert bad.exit_code != 0 and "symbolic link" in bad.output and victim.read_text() == "precious\n", bad.output

    assert "scheduled '0 3 * * *'" in cli("schedule", "1", "0 3 * * *")
    bad = runner.invoke(app, ["tournament", "schedule", "1", "every night"], env=env)
    assert bad.exit_code != 0 and "crontab" in bad.output


CHAT_APP = ("bot.app", "bot.startup", "bot.ops.wiring", "bot.console", "bot.discord", "bot.slack", "discord",
            "slack_bolt")
PROBE = """
import sys
from bot.cli import app
try:
    app(sys.argv[1:], prog_name="hushtable")
except SystemExit as exc:
    print("EXIT", exc.code)
print("LOADED", *sorted(m for m in sys.modules if m.startswith({chat})))
"""


def test_the_tournament_commands_build_no_chat_app(tmp_path: Path) -> None:
    """`hushtable tournament ...` wires the store, the agents and the tournament service itself: the chat
    app's start-up point, its platforms and its ops endpoints are never imported (checked by which modules
    a real command imported, in a process of its own)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), HUSHTABLE_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/t.db",
               HUSHTABLE_LOG_DIR=str(tmp_path / "logs"), HUSHTABLE_AGENT_CHOICES="random",
               HUSHTABLE_DEFAULT_AGENT="random", HUSHTABLE_FALLBACK_AGENT="random")
    run = subprocess.run([sys.executable, "-c", PROBE.format(chat=CHAT_APP), "tournament", "create", "--game", "spy",
                          "--seats", "3", "--name", "lean"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    out = run.stdout + run.stderr
    assert "created #1 lean" in out and "EXIT 0" in out, out
    loaded = next(ln for ln in run.stdout.splitlines() if ln.startswith("LOADED")).split()[1:]
    assert loaded == [], loaded

"""`hushtable --help`, `run` and `doctor` start without the research, SNEAK and tournament commands'
imports (the database layer, evaluators, plotting: seconds of CPU); those load when named.

Checked by which modules a command imported (deterministic), not by the time it took."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("bot.research", "bot.sneak", "bot.tournaments", "matplotlib", "torch", "transformers")
PROBE = """
import sys
from bot.cli import app
try:
    app(sys.argv[1:], prog_name="hushtable")
except SystemExit:
    pass
print("LOADED", *sorted(m for m in sys.modules if m.startswith({heavy})))
"""


def _loaded(tmp_path: Path, *args: str) -> tuple[list[str], str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), HUSHTABLE_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/h.db",
               HUSHTABLE_LOG_DIR=str(tmp_path / "logs"))
    run = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *args], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    line = next(ln for ln in run.stdout.splitlines() if ln.startswith("LOADED"))
    return line.split()[1:], run.stdout + run.stderr


@pytest.mark.parametrize("args", [("--help",), ("doctor",), ("sim", "chameleon"), ("run", "--help")])
def test_everyday_commands_do_not_import_the_research_commands(tmp_path: Path, args: tuple[str, ...]) -> None:
    loaded, out = _loaded(tmp_path, *args)
    assert loaded == [], (args, loaded)
    if args == ("--help",):  # every command is still listed, with its own help line
        for name in ("sneak", "tournament", "stats", "tom", "spygame", "deep", "import", "eval"):
            assert f" {name} " in out, name


def test_a_research_command_loads_when_named(tmp_path: Path) -> None:
    loaded, out = _loaded(tmp_path, "tournament", "--help")
    assert "bot.tournaments.cli" in loaded and "create" in out and "leaderboard" in out, out


def test_each_listed_help_line_is_the_commands_own() -> None:
    from bot.cli import LAZY

    for name, short_help, load in LAZY:
        assert load().get_short_help_str(limit=200) == short_help, name

"""Every command README.md shows exists and runs: each `hushtable ...` command line (its command path
answers --help; the ones a newcomer types first run whole in the tests named beside them), each verb
of the console's table (bot/console/commands.py, driven in tests/bot/console/test_console_commands.py)
and each make target. The README stays a guide of at most 350 lines; measurements live in
docs/benchmarks.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.console.commands import lookup

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CODE = "\n".join(re.findall(r"`([^`\n]+)`", README) + re.findall(r"```(?:sh|text)?\n(.*?)```", README, flags=re.S))
COMMANDS = sorted({m.group(1).strip() for m in re.finditer(r"(?<![/\w])(?:\.venv/bin/)?hushtable((?: [a-z][\w-]*)+)", CODE)})


def test_the_readme_is_a_guide_of_at_most_350_lines() -> None:
    assert len(README.splitlines()) <= 350
    assert "(docs/benchmarks.md)" in README and (ROOT / "docs" / "benchmarks.md").is_file()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_hushtable_command_in_the_readme_exists(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"])
    assert result.exit_code == 0 and "Usage" in result.output, (command, result.output[-1500:])


def test_every_console_verb_in_the_readme_is_a_console_command() -> None:
    table = README.split("| at the console | what it does |", 1)[1].split("\n\n", 1)[0]
    verbs = {v for cell in re.findall(r"^\| (.+?) \|", table, flags=re.M) for v in re.findall(r"`(\w[\w-]*)", cell)}
    assert verbs >= {"play", "join", "leave", "ai", "deadline", "start", "abort", "status", "list", "rules", "show", "export", "help", "quit"}
    assert all(lookup(v) is not None for v in verbs), [v for v in verbs if lookup(v) is None]


def test_every_make_target_in_the_readme_exists() -> None:
    targets = set(re.findall(r"^([a-z]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), flags=re.M))
    shown = set(re.findall(r"\bmake ([a-z]+)\b", CODE))
    assert shown and shown <= targets, shown - targets

"""`hushtable run`'s exit statuses, as README.md's table gives them: 0 when the player or the operator
stops it (quit, end of input, Ctrl-C, SIGTERM), 2 when the start is refused (a setting, a token, no
terminal for the console, a second bot on the same SQLite file). Settings and tokens have their own
tests (tests/bot/test_startup.py); these are the rest, each through the real command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pexpect

from storage.store import lock_sqlite_file
from tests.bot.console.test_console_pty import ROOT, spawn
from tests.seeds import bot_env


def _ended(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF, timeout=240)  # the clue evaluator may still be loading: its thread ends first
    child.close()
    assert child.exitstatus is not None, child.signalstatus
    return int(child.exitstatus)


def test_quit_and_end_of_input_exit_0(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("quit")
    child.expect("Bye.")
    assert _ended(child) == 0
    again = spawn(tmp_path)
    again.expect("Your name")
    again.sendeof()
    assert _ended(again) == 0


def test_ctrl_c_exits_0(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendintr()
    child.expect("Bye.")
    assert _ended(child) == 0


def test_a_second_bot_on_the_same_sqlite_file_is_refused_with_2(tmp_path: Path) -> None:
    """A second `make run` beside a running one: one line, exit status 2 (it was 1)."""
    db = tmp_path / "console.db"
    db.touch()
    held = lock_sqlite_file(db)  # what the running bot holds
    try:
        child = pexpect.spawn(sys.executable, ["-m", "bot.cli", "run"], cwd=str(ROOT), encoding="utf-8", timeout=240,
                              env=bot_env({"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{db}", "HUSHTABLE_DEFAULT_AGENT": "random",
                                           "DISCORD_TOKEN": "", "SLACK_BOT_TOKEN": ""}))
        assert _ended(child) == 2, child.before
        said = [ln for ln in child.before.splitlines() if ln.strip() and "models.bundled: " not in ln]
        assert said == [f"hushtable: another Hushtable bot is already running on {db}: SQLite serves one bot process; "
                        "stop the other one, or use PostgreSQL (HUSHTABLE_DATABASE_URL) to run several"], said
    finally:
        held.close()


def test_the_console_without_a_terminal_is_refused_with_2(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "bot.cli", "run"], cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=240,
                         env=bot_env({"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/c.db", "DISCORD_TOKEN": "",
                                      "SLACK_BOT_TOKEN": ""}))
    assert out.returncode == 2, out.stderr
    assert "the local console needs a terminal" in out.stderr + out.stdout and "Traceback" not in out.stderr

"""Spymasters at the local console, in a pseudo-terminal: the menu offers it, a newcomer plays a
whole game against AI seats (clue words typed, numbers and guesses picked by number)."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.bot.console.test_console_pty import play_to_the_end, spawn


def test_newcomer_plays_spymasters(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    menu = [line for line in child.before.splitlines() if "Spymasters" in line]
    assert menu and menu[0].strip().startswith("4)"), child.before
    child.sendline("4")  # one variant: the console asks no question about it
    transcript = play_to_the_end(child, "Ann", {})
    assert "begins" in transcript and "The board:" in transcript
    assert "wins!" in transcript
    child.sendline("quit")
    child.expect(pexpect.EOF)

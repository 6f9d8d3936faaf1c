"""Every game the console's menu offers, played to its end by a newcomer against AI seats in a
pseudo-terminal: the menu entry comes from the descriptor, the default variant is taken, text
answers are made-up words (as many as the form has fields), choices the first option.

The games are played one after another in one console, as a newcomer trying each would
("Play again?", Enter for the menu): the console starts once and its clue evaluator loads
once. A game that fails leaves the console to be started afresh for the next one; after the
last game the newcomer quits at "Play again?"."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from bot.console.app import game_menu
from games.descriptor import GameDescriptor
from tests.bot.console.test_console_pty import spawn

FRESH = ["gizmo", "wobble", "quark", "fizz", "zany", "blip", "tonk", "vex", "yurt", "plink"]


def play(child: pexpect.spawn, name: str) -> str:
    seen: list[str] = []
    words = iter(FRESH * 40)
    for _ in range(400):
        i = child.expect([rf"{re.escape(name)}> ", r"Play again\?", pexpect.EOF])
        seen.append(child.before)
        if i == 1:
            return "".join(seen)
        if i == 2:
            raise AssertionError("the console exited:\n" + "".join(seen))
        prompt = child.before.splitlines()
        # Options are numbered on their own lines, or inside a board's grid (a cell "7) apple" anywhere in a row,
        # numbered by its place on the board: a revealed cell's number picks nothing).
        numbers = [int(n) for line in prompt for n in re.findall(r"(?:^|\s)(\d+)\) ", line)]
        if numbers:
            child.sendline(str(min(numbers)))
            continue
        fields = next((m.group(1) for line in reversed(prompt) if (m := re.search(r"fields: (.*)\)", line))), None)
        n = len(fields.split(";")) if fields else 1
        child.sendline("; ".join(next(words) for _ in range(n)))
    raise AssertionError("the game did not end")


class Console:
    """One console run by a newcomer, Ann, kept at its game menu between games."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.child: pexpect.spawn | None = None
        self.again = False  # a game ended: the console asks "Play again?"
        self.starts = 0

    def at_menu(self) -> tuple[pexpect.spawn, str]:
        """The console at its menu and what it printed there: the one the last game ended in (Enter
        at "Play again?"), else a fresh one."""
        if self.child is not None and self.again:
            self.again = False
            self.child.sendline("")
            self.child.expect("game> ")
            return self.child, self.child.before
        self.close()
        self.starts += 1
        folder = self.folder / f"run{self.starts}"
        folder.mkdir()
        self.child = spawn(folder)
        self.child.timeout = 240  # a clue report after the first game loads its evaluator first
        self.child.expect("Your name")
        self.child.sendline("Ann")
        self.child.expect("game> ")
        return self.child, self.child.before

    def close(self) -> None:
        if self.child is not None:
            self.child.close(force=True)
            self.child = None

    def quit(self) -> None:
        if self.child is not None and self.again:
            self.child.sendline("quit")
            self.child.expect(pexpect.EOF)
        self.close()


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    c = Console(tmp_path_factory.mktemp("console"))
    yield c
    c.quit()


@pytest.mark.parametrize("d", game_menu(), ids=lambda d: d.id)
def test_a_newcomer_plays_every_menu_game(console: Console, d: GameDescriptor) -> None:
    child, menu = console.at_menu()
    number = game_menu().index(d) + 1
    line = next(x for x in menu.splitlines() if x.strip().startswith(f"{number})"))
    assert d.title in line, line
    child.sendline(str(number))
    if len(d.variants) > 1:
        child.expect(r"variant \(")
        child.sendline("")
    transcript = play(child, "Ann")
    assert "begins" in transcript
    console.again = True

"""Every game the console's menu offers, played to its end by a newcomer against AI seats in a
pseudo-terminal: the menu entry comes from the descriptor, the default variant is taken, text
answers are made-up words (as many as the form has fields), choices the first option."""

from __future__ import annotations

import re
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
        if any(re.match(r"\s+\d+\) ", line) for line in prompt):
            child.sendline("1")
            continue
        fields = next((m.group(1) for line in reversed(prompt) if (m := re.search(r"fields: (.*)\)", line))), None)
        n = len(fields.split(";")) if fields else 1
        child.sendline("; ".join(next(words) for _ in range(n)))
    raise AssertionError("the game did not end")


@pytest.mark.parametrize("d", game_menu(), ids=lambda d: d.id)
def test_a_newcomer_plays_every_menu_game(tmp_path: Path, d: GameDescriptor) -> None:
    child = spawn(tmp_path)
    child.timeout = 240  # a clue report after the game loads its evaluator first
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    number = game_menu().index(d) + 1
    line = next(x for x in child.before.splitlines() if x.strip().startswith(f"{number})"))
    assert d.title in line, line
    child.sendline(str(number))
    if len(d.variants) > 1:
        child.expect(r"variant \(")
        child.sendline("")
    transcript = play(child, "Ann")
    assert "begins" in transcript
    child.sendline("quit")
    child.expect(pexpect.EOF)

"""The console adapter in a pseudo-terminal: a newcomer plays whole games against AI seats."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pexpect

from tests.seeds import bot_env

ROOT = Path(__file__).resolve().parents[3]
START_S = 240


def spawn(tmp_path: Path, *args: str, **env: str) -> pexpect.spawn:
    """``hushtable run`` (the console) with ``args`` in a pseudo-terminal, its game log in ``tmp_path``, random AI
    seats and the test's deal seed (``tests/seeds.py``): a failure comes back with ``HUSHTABLE_TEST_SEED``."""
    full = bot_env({"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/console.db",
                    "HUSHTABLE_DEFAULT_AGENT": "random", "DISCORD_TOKEN": "", "SLACK_BOT_TOKEN": "",
                    "PYTHONUNBUFFERED": "1", **env})
    child = pexpect.spawn(sys.executable, ["-m", "bot.cli", "run", *args], cwd=str(ROOT), env=full,
                          encoding="utf-8", timeout=60, dimensions=(50, 200))
    # A console killed on a busy machine can take seconds to be reaped (torch's threads, its memory);
    # pexpect's default 0.1 s after SIGKILL then reports a child it could not terminate.
    child.ptyproc.delayafterterminate = 5.0
    # The start (imports, the settings' checks, the store) once took over a minute on a machine at full load,
    # where each later answer comes in seconds: it gets its own allowance, the prompts keep the minute.
    child.expect("Welcome to Hushtable", timeout=START_S)
    return child


def play_to_the_end(child: pexpect.spawn, name: str, answers: dict[str, str]) -> str:
    """Answer every prompt addressed to ``name`` until the game is over; returns the transcript."""
    seen = []
    fresh = iter(["gizmo", "wobble", "quark", "fizz", "zany", "blip", "tonk", "vex", "yurt", "plink"] * 20)
    for _ in range(200):
        i = child.expect([rf"{re.escape(name)}> ", r"Play again\?", pexpect.EOF])
        seen.append(child.before)
        if i == 1:
            return "".join(seen)
        if i == 2:
            raise AssertionError("the console exited:\n" + "".join(seen))
        prompt = child.before.splitlines()
        numbers = [int(n) for line in prompt for n in re.findall(r"(?:^|\s)(\d+)\) ", line)]
        if numbers:  # the first number shown (a board numbers its cells by place: a revealed one picks nothing)
            child.sendline(str(min(numbers)))
        else:
            child.sendline(answers.get("text") or next(fresh))
    raise AssertionError("the game did not end")


def test_bad_answers_get_a_clear_message(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("3")
    child.expect(r"variant \(")
    child.sendline("")
    for _ in range(50):
        child.expect("Ann> ")
        if re.search(r"\s+1\) ", child.before):
            child.sendline("99")
            child.expect(r"Type a number from 1 to \d+")
            break
        child.sendline("two words")
        child.expect(r"(one word|at most 1 word|use at most)")
        child.expect("Ann> ")
        child.sendline("gizmo")
    child.sendline("quit")
    child.close(force=True)


CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # home, the screen, and the scrollback too


def test_hotseat_clears_the_screen_between_seats(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--hotseat")
    child.expect("names of the human players")
    child.sendline("Ann, Ben")
    child.expect("game> ")
    child.sendline("3")
    child.expect(r"variant \(")
    child.sendline("")
    redraws = 0
    # The game's end is its result line. "Play again?" comes only after the clue report, which waits for
    # its evaluator model (a minute to load on a busy machine): nothing this test checks, so it stops at
    # the result rather than racing the model's load.
    for _ in range(100):
        i = child.expect([r"Pass the keyboard to (\w+), then press Enter", r"Winners: |Game #\d+ is over",
                          r"(\w+)> ", r"Done\. Press Enter"])
        if i == 0:
            player = child.match.group(1)
            other = "Ben" if player == "Ann" else "Ann"
            child.sendline("")
            child.expect(re.escape(CLEAR))  # the screen and its scrollback are cleared before secrets show
            child.expect(rf"{player}> ")
            screen = child.before
            # What the next player sees: the public table redrawn (the card, the clues so far), none of
            # the other player's secrets; the prompt itself is answered in the branch below.
            assert f"only {other} sees" not in screen, screen
            if "The table so far (public):" in screen:
                redraws += 1
            options = re.search(r"\s+1\) ", screen)
            child.sendline("1" if options else f"gizmo{_}")
        elif i == 1:
            break
        elif i == 2:
            options = re.search(r"\s+1\) ", child.before)
            child.sendline("1" if options else f"gizmo{_}")
        else:
            child.sendline("")
    else:
        raise AssertionError("the game did not end")
    assert redraws >= 2, "the public state is redrawn for each player after the clear"
    child.close(force=True)


def test_play_spymasters_from_the_command_line_starts_cleanly_and_show_works(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("")  # the command line
    child.expect(r"type a command\) ")
    # With random seats the other team can find the assassin before Ann's first turn: then play again.
    for _ in range(5):
        child.sendline("play spymasters")
        if child.expect(["Ann> ", r"Play again\? \(Enter for the menu, or type a command\) "]) == 0:
            break
    else:
        raise AssertionError("five games in a row ended before Ann's first turn")
    started = child.before
    assert "then start" not in started and "add AI" not in started, started  # it has started: no lobby advice
    # Ann's prompt (a clue to write or a word to pick) comes under the board: the score and the grid.
    assert re.search(r"(Red|Blue) \d+ of \d+ found", started) and "[R] red  [B] blue" in started, started
    child.sendline("/show")
    child.expect("Ann> ")
    assert "[only you see]" in child.before and "Unknown command" not in child.before, child.before
    child.sendline("quit")
    child.expect(pexpect.EOF)

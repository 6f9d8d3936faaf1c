"""Hardening at the console: Ctrl-C leaves at once (22), no log line on the game screen (22, 7),
a refused out-of-range menu number (22), typed-ahead lines dropped (22), `3-4-2` accepted like
its number (22), no chat wording (22), and a restarted console whose moves count (8)."""

from __future__ import annotations

import asyncio
import io
import os
import re
import sqlite3
import time
from pathlib import Path

import pexpect

from bot.console.app import ConsolePlatform, ConsoleUI, LineReader, answer_command, render_prompt
from bot.core import codec, intake
from bot.core.messages import Button, CommandKind, Form, Outgoing, Place, UserRef
from tests.bot.console.test_console_pty import spawn

ROOT = Path(__file__).resolve().parents[3]
ORIGIN = intake.Origin(UserRef("console", "you", "Ann"), Place("console", "table"), "console", True, "console-x-1")


def start_chameleon(child: pexpect.spawn, name: str = "Ann") -> None:
    child.expect("Your name")
    child.sendline(name)
    child.expect("game> ")
    child.sendline("3")
    child.expect(r"variant \(")
    child.sendline("")


def actions(tmp_path: Path) -> int:
    with sqlite3.connect(tmp_path / "console.db") as db:
        return int(db.execute("select count(*) from actions").fetchone()[0])


def test_ctrl_c_says_bye_and_exits_zero_and_logs_stay_off_screen(tmp_path: Path) -> None:
    # Every AI move fails (no worker there; the papers' protocol agent needs its model for every move),
    # so the agents log warnings all game long.
    child = spawn(tmp_path, HUSHTABLE_DEFAULT_AGENT="llm:plain", HUSHTABLE_FALLBACK_AGENT="random",
                  HUSHTABLE_WORKER_URL="http://127.0.0.1:9", HUSHTABLE_AI_RETRIES="0")
    start_chameleon(child)
    child.expect("Ann> ")
    screen = child.before
    log_file = tmp_path / ".hushtable" / "logs" / "console.log"
    deadline = time.monotonic() + 90
    while "WARNING" not in (log_file.read_text() if log_file.exists() else ""):
        # Ann may be first to give a clue: then the AI seats (and their failures) come after her move.
        assert time.monotonic() < deadline, "no AI seat moved"
        if child.expect(["Ann> ", pexpect.TIMEOUT], timeout=2) == 0:
            screen += child.before
        child.sendline("thing")
        screen += child.before or ""
    child.sendintr()
    child.expect("Bye.", timeout=30)
    child.expect(pexpect.EOF, timeout=30)
    child.close()
    assert child.exitstatus == 0 and child.signalstatus is None
    log = (tmp_path / ".hushtable" / "logs" / "console.log").read_text()
    assert "WARNING" in log and "llm:plain failed" in log, "the warnings went somewhere"
    assert "WARNING" not in screen and "failed" not in screen and "Traceback" not in screen, screen
    assert "Or reply here" not in screen


def test_out_of_range_variant_is_refused(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("3")
    child.expect(r"variant \(")
    child.sendline("9")
    child.expect(r"Type a number from 1 to 2")
    child.expect(r"variant \(")
    child.sendline("2")
    child.expect(r"chameleon \(sneak\) begins")
    child.close(force=True)


def test_a_restarted_console_resumes_and_its_moves_count(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    start_chameleon(child)
    child.expect("Ann> ")
    child.sendintr()
    child.expect(pexpect.EOF, timeout=30)
    before = actions(tmp_path)

    again = spawn(tmp_path)
    again.expect("Your name")
    again.sendline("Ann")
    again.expect("resumes where it stopped")
    again.expect(r"\[only you see\]")  # the player's own secrets, shown again
    again.expect("Ann> ")
    again.sendline("/leave")  # the ids of this run are new: the service's own refusal, not a duplicate
    again.expect("The game is under way")
    again.expect("Ann> ")
    assert "Traceback" not in again.before
    prompt = again.before
    again.sendline("1" if re.search(r"\s+1\) ", prompt) else "zqclue")
    again.expect([r"Ann> ", r"Play again\?"])
    assert actions(tmp_path) > before, "the resumed answer was taken for a duplicate"
    assert "Already done" not in again.before
    again.sendline("quit")
    again.close(force=True)


def test_a_code_is_accepted_like_its_number_and_out_of_range_refused() -> None:
    codes = ("1-2-3", "3-4-2", "4-1-2")
    m = Outgoing("Guess the code", buttons=tuple(Button(codec.action_id(5, 1, "guess", c), c) for c in codes))
    by_code = answer_command(ORIGIN, m, " 3-4-2 ")
    by_number = answer_command(ORIGIN, m, "2")
    assert not isinstance(by_code, str) and not isinstance(by_number, str)
    assert by_code.kind is CommandKind.ACT and by_code.args == by_number.args
    assert by_code.args["value"] == ["3-4-2"] and by_code.tenant == "console"
    assert "1 to 3" in str(answer_command(ORIGIN, m, "4")) and "1 to 3" in str(answer_command(ORIGIN, m, "9-9-9"))


def test_prompts_carry_no_chat_wording() -> None:
    # The console tells the core it takes no DM text replies, so the core offers none
    # ("Or reply here"); the pseudo-terminal test above checks the screen itself.
    assert ConsolePlatform(io.StringIO()).text_replies is False
    m = Outgoing("Give a clue.", form=Form("g:1:0:clue", "Clue", ("Clue",), 30, "one word"))
    assert render_prompt(m).startswith("Give a clue.") and "one word" in render_prompt(m)


async def test_lines_typed_while_no_prompt_is_open_are_dropped() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "r") as stream, os.fdopen(write_fd, "w") as writer:
        reader = LineReader(stream)
        ui = ConsoleUI.__new__(ConsoleUI)  # only the reading half is exercised here
        ui.reader, ui.p = reader, type("P", (), {"out": io.StringIO()})()
        pending = asyncio.ensure_future(reader.readline())  # start the reader thread
        writer.write("typed ahead\n")
        writer.flush()
        assert await asyncio.wait_for(pending, 30) == "typed ahead\n"
        writer.write("stale\n")
        writer.flush()
        for _ in range(3000):  # the reader thread queues it (the test means a line typed before the prompt)
            if not reader.queue.empty():
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the reader thread never queued the line typed ahead")
        answer = asyncio.ensure_future(ui.readline("Ann> "))
        await asyncio.sleep(0.05)
        writer.write("fresh\n")
        writer.flush()
        assert await asyncio.wait_for(answer, 30) == "fresh"


async def test_a_terminal_that_hangs_up_ends_the_input_like_ctrl_d() -> None:
    # A real pseudo-terminal: closing its master side is what a dropped SSH session does, and the
    # reader's blocked read then fails with EIO. The console must see the end of input and leave.
    master, slave = os.openpty()
    with os.fdopen(slave, "r") as stream:
        reader = LineReader(stream)
        pending = asyncio.ensure_future(reader.readline())
        os.write(master, b"hello\n")
        assert await asyncio.wait_for(pending, 30) == "hello\n"
        following = asyncio.ensure_future(reader.readline())
        await asyncio.sleep(0.05)
        os.close(master)
        assert await asyncio.wait_for(following, 30) == ""
        assert reader._thread is not None
        reader._thread.join(30)
        assert not reader._thread.is_alive()

"""The console as a full client, in a pseudo-terminal: every chat command typed at the game menu, at
"Play again?" and at a turn's prompt, with the service's own replies; table size and role chosen with
``play``; forgiving game names; a refused ``join`` that changes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pexpect

from bot.console import commands
from tests.bot.console.test_console_pty import spawn

AGAIN = r"Play again\? \(Enter for the menu, or type a command\) "


def _until_my_turn(child: pexpect.spawn, name: str = "Ann") -> str:
    """Wait for ``name``'s first prompt; returns what came before it."""
    child.expect(rf"{name}> ")
    return child.before


def _began(text: str) -> str:
    """The game a table that just began plays, as its opening line names it."""
    m = re.search(r"(\w+) \(\w+\) begins", text)
    assert m is not None, text
    return m.group(1)


def test_every_command_at_every_prompt(tmp_path: Path) -> None:
    child = spawn(tmp_path)
    began: list[str] = []  # every table this test began, as the console named it
    child.expect("Your name")
    child.sendline("Ann")
    child.expect("game> ")
    # At the game menu: help, a command, a game's name that is no game, a command that is none.
    child.sendline("help")
    child.expect("game> |" + AGAIN)
    for c in commands.COMMANDS.values():
        assert c.usage in child.before, (c.name, child.before)
    child.sendline("list")
    child.expect(AGAIN)
    assert "No open tables" in child.before or "open" in child.before.lower(), child.before
    child.sendline("play jsut one")
    child.expect(AGAIN)
    assert "Did you mean justone (Just One)?" in child.before, child.before
    child.sendline("plya chameleon")
    child.expect(AGAIN)
    assert "did you mean play?" in child.before, child.before

    # A join refused outside the hot seat changes nothing: the next game has one human, no secrets of a second
    # player. (A made-up name: a card's word, such as the hairstyle "Bob", may be on the screen.)
    child.sendline("join Zqbobx")
    child.expect(AGAIN)
    assert "only in hot-seat mode" in child.before, child.before
    child.sendline("play chameleon seats=5")
    before = _until_my_turn(child)
    began.append(_began(before))
    seated = re.search(r"begins\. Seats: (.*)\.", before)
    assert seated is not None and len(seated.group(1).split(", ")) == 5 and "Zqbobx" not in seated.group(1), before
    assert "Zqbobx" not in before and "only you see" in before, before
    # At a turn's prompt: the chat commands, written with a slash (a bare word would be an answer), and the
    # bare ones that are never an answer.
    for typed, reply in [("/status", r"Game #\d+: chameleon"), ("/list", r"."), ("/deadline 120", r"120"),
                         ("/leave", "The game is under way"), ("/ai", r"!"), ("/start", r"!"),
                         ("/show", r"\[only you see\]"), ("help", "Commands:"), ("/rules", "category card"),
                         ("/export", r"Exported 0 game\(s\) to ")]:
        child.sendline(typed)
        child.expect("Ann> ")
        assert re.search(reply, child.before), (typed, child.before)
    child.sendline("abort")
    child.expect(AGAIN)
    assert "aborted" in child.before, child.before

    # A role and a table size, and game names as people write them.
    child.sendline("play decrypto as encoder")
    child.expect([AGAIN, "Ann> "])
    assert re.search(r"Ann is the encoder", child.before), child.before
    began.append(_began(child.before))
    child.sendline("/abort")
    child.expect(AGAIN)
    child.sendline("play decrypto as banker")
    child.expect(AGAIN)
    assert "choose a role (decoder, encoder, interceptor) or a team (A)" in child.before, child.before
    child.sendline("play chameleon seats=40")
    child.expect(AGAIN)
    assert re.search(r"played with \d+ to \d+ seats", child.before), child.before
    for typed in ("play just one", "play JustOne", "justone"):  # a game's name alone plays it too
        child.sendline(typed)
        child.expect([AGAIN, "Ann> "])
        assert "justone (classic) begins" in child.before, (typed, child.before)
        began.append(_began(child.before))
        child.sendline("/abort")
        child.expect(AGAIN)

    # An export holds the aborted games too, written in the data folder beside the database.
    child.sendline("export")
    child.expect(AGAIN)
    m = re.search(r"Exported (\d+) game\(s\) to (\S+)\.", child.before)
    assert m is not None and int(m.group(1)) == 5 == len(began), (began, child.before)
    path = Path(m.group(2))
    assert path.is_file() and path.is_relative_to(tmp_path), path
    games = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(g["game"] for g in games) == sorted(began)
    # The SNEAK commands of chat, at the console too (SNEAK runs beside the console).
    for verb in ("sneak", "judge"):
        child.sendline(verb)
        child.expect(AGAIN)
        said = child.before.split("\n", 1)[1].strip()
        assert said and "Unknown command" not in said and "Traceback" not in said, (verb, child.before)
    child.sendline("quit")
    child.expect("Bye.")
    child.expect(pexpect.EOF, timeout=240)  # the clue report's evaluator may still be loading: its thread ends first


def test_join_adds_a_player_in_the_hot_seat(tmp_path: Path) -> None:
    child = spawn(tmp_path, "--hotseat")
    child.expect("names of the human players")
    child.sendline("Ann")
    child.expect("game> ")
    child.sendline("join Ben")
    child.expect(AGAIN)
    assert "Ben joins the next game at this keyboard." in child.before, child.before
    child.sendline("join ann")
    child.expect(AGAIN)
    assert "already plays at this keyboard" in child.before, child.before
    child.sendline("play chameleon")
    child.expect(r"Pass the keyboard to (Ann|Ben), then press Enter")
    seated = re.search(r"begins\. Seats: (.*)\.", child.before)
    assert seated is not None and "Ann" in seated.group(1) and "Ben" in seated.group(1), child.before
    child.close(force=True)

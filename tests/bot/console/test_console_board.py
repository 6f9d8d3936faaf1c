"""Spymasters at the console: the board as a 5x5 grid with revealed marks and the score, the guess
numbered in the grid (not 25 lines), the key beside hidden words for the spymaster only."""

from __future__ import annotations

import re

from bot.console.app import answer_command, render_prompt
from bot.core import codec, intake, render
from bot.core.messages import CommandKind, Place, UserRef
from bot.core.tables import SeatInfo, Table
from games.base import Action, Choice, Text
from games.spymasters import GAME
from games.spymasters.state import SpymastersState
from storage.tables import SeatKind

RED = ("apple", "bear", "castle", "drum", "eagle", "forest", "guitar", "hammer", "island")
BLUE = ("jacket", "kettle", "lemon", "mirror", "needle", "ocean", "piano", "rocket")
BYSTANDERS = ("saddle", "tiger", "umbrella", "violin", "wagon", "yacht", "zebra")
WORDS = (*RED, *BLUE, *BYSTANDERS, "snow")
KEY = ("red",) * 9 + ("blue",) * 8 + ("bystander",) * 7 + ("assassin",)
DEAL = {"words": list(WORDS), "key": list(KEY), "starting": "red", "spymasters": [0, 1]}
HERE = Place("console", "table")


def _table(state: SpymastersState) -> Table:
    seats = [SeatInfo(i, SeatKind.HUMAN, n, user=UserRef("console", str(i), n))
             for i, n in enumerate(["Ann", "Ben", "Cat", "Dan"])]
    return Table(3, GAME, state.config, 0, seats, state, HERE, "console", 0.0)


def _played() -> SpymastersState:
    """Red's spymaster says "music, 2"; Red's guesser finds drum (red), then piano (blue) ends the turn."""
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    s, _ = GAME.apply(s, 0, Action.say("clue", "music"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "2"))
    s, _ = GAME.apply(s, 2, Action.choose("guess", "drum"))
    s, _ = GAME.apply(s, 2, Action.choose("guess", "piano"))
    s, _ = GAME.apply(s, 1, Action.say("clue", "fruit"))
    s, _ = GAME.apply(s, 1, Action.choose("number", "1"))
    return s


def _grid_rows(screen: str) -> list[str]:
    return [ln for ln in screen.splitlines() if len(re.findall(r"(?:\[\w\]|\d+\)|\(\w\)|\(-\)|\[-\]) \w+", ln)) == 5]


def test_a_guess_shows_the_grid_with_marks_and_score_and_numbers_the_hidden_words() -> None:
    s = _played()
    table = _table(s)
    spec = GAME.legal(s, 3)  # Blue's guesser
    assert isinstance(spec, Choice)
    m = render.prompt_message(table, 3, spec, text_replies=False)
    screen = render_prompt(m)
    rows = _grid_rows(screen)
    assert len(rows) == 5, screen
    assert "Red 1 of 9 found · Blue 1 of 8 found · Blue's turn 2" in screen
    assert "[R] drum" in rows[0] and "[B] piano" in rows[3], screen
    # 23 hidden words, numbered in the grid; only "Stop guessing" (not a cell) stands on its own line.
    listed = [ln for ln in screen.splitlines() if re.fullmatch(r"\s+\d+\) .+", ln) and ln not in rows]
    assert listed == [] or all("Stop" in ln for ln in listed), screen
    assert len(screen.splitlines()) < 12, "a guess is the grid, not 25 numbered lines"
    # The number shown beside a word picks that word.
    number = re.search(r"(\d+)\) apple", screen)
    assert number is not None
    cmd = answer_command(intake.Origin(UserRef("console", "3", "Dan"), HERE, "console", is_admin=True, inbound_id="x"),
                         m, number.group(1))
    assert not isinstance(cmd, str) and cmd.kind is CommandKind.ACT
    assert codec.decode(m.buttons[int(number.group(1)) - 1].id) is not None and m.buttons[int(number.group(1)) - 1].label == "apple"
    # A guesser sees no key: no (r)/(b)/(-)/(x) beside any hidden word.
    assert not re.search(r"\((?:r|b|-|x)\) ", screen), screen


def test_the_spymaster_sees_the_key_beside_hidden_words_and_nobody_else_does() -> None:
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    table = _table(s)
    spec = GAME.legal(s, 0)
    assert isinstance(spec, Text)
    screen = render_prompt(render.prompt_message(table, 0, spec, text_replies=False))
    assert len(_grid_rows(screen)) == 5, screen
    assert "(r) apple" in screen and "(x) snow" in screen and "(b) jacket" in screen and "the key" in screen
    guesser = GAME.board(s, 2)
    assert all(c.known is None and c.mark is None for c in guesser.cells)


def test_a_hidden_word_keeps_its_number_after_reveals_and_stop_ends_the_guessing() -> None:
    """A word's number is its place on the board (1 to 25, row by row), so it never shifts as other words
    are revealed; "Stop guessing" follows the board's last number, and typing ``stop`` picks it."""
    s, _ = GAME.new(GAME.make_config(deal=DEAL), 4, 0)
    s, _ = GAME.apply(s, 0, Action.say("clue", "music"))
    s, _ = GAME.apply(s, 0, Action.choose("number", "2"))
    table = _table(s)
    before = GAME.legal(s, 2)
    assert isinstance(before, Choice)
    first = render_prompt(render.prompt_message(table, 2, before, text_replies=False))
    s, _ = GAME.apply(s, 2, Action.choose("guess", "drum"))  # red: the guesser goes on
    table = _table(s)
    spec = GAME.legal(s, 2)
    assert isinstance(spec, Choice)
    m = render.prompt_message(table, 2, spec, text_replies=False)
    later = render_prompt(m)
    for word in ("apple", "eagle", "snow", "zebra"):
        was, now = (re.search(rf"\b(\d+)\) {word}\b", screen) for screen in (first, later))
        assert was is not None and now is not None and was.group(1) == now.group(1), word
    assert re.search(r"\b5\) eagle\b", later) and "[R] drum" in later, later  # eagle stays 5 with drum (4) revealed
    assert re.search(r"^\s+26\) Stop guessing$", later, re.M), later
    origin = intake.Origin(UserRef("console", "2", "Cat"), HERE, "console", is_admin=True, inbound_id="x")
    for typed in ("stop", "26"):
        cmd = answer_command(origin, m, typed)
        assert not isinstance(cmd, str) and cmd.args["value"] == ["_stop"], typed
    eagle = answer_command(origin, m, "5")
    assert not isinstance(eagle, str) and eagle.args["value"] == ["eagle"]
    assert answer_command(origin, m, "4") == "Type one of the numbers shown, or the option itself."  # drum is revealed

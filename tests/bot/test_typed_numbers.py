"""Numbers typed by a person, an operator or a file are ASCII digits: ``int()`` reads any script's decimals
(``१``, ``٣``, fullwidth ``１``) and raises on what ``isdigit`` still calls a digit (``²``, ``①``) and on
5,000 digits. Each such answer gets one clear line, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.console.app import answer_command
from bot.core import codec, intake
from bot.core.commands import Refused, whole
from bot.core.messages import Button, Outgoing
from games.text import typed_number
from models.eval import deep_study
from models.eval.study import HumanStudy
from storage.annotations import Scope
from storage.store import Store
from tests.bot.console.test_console_hardening import ORIGIN
from tests.eval.test_study import options, scored_game

ODD = ("²", "①", "5" * 5000, "१", "１", "٣", "1²", "-")


@pytest.mark.parametrize("text", ODD)
def test_only_ascii_digits_are_a_number(text: str) -> None:
    assert typed_number(text) is None
    assert deep_study.parse(text) is None
    with pytest.raises(Refused, match="whole number"):
        whole(text, "The game id")
    try:
        assert not isinstance(intake.parse_value(text), int)
    except intake.IntakeError as exc:
        assert "too large" in str(exc)
    m = Outgoing("Pick", buttons=tuple(Button(codec.action_id(5, 1, "pick", c), c) for c in ("a", "b")))
    assert "1 to 2" in str(answer_command(ORIGIN, m, text))


def test_plain_numbers_still_read() -> None:
    assert typed_number(" 42 ") == 42 and typed_number("0") == 0 and typed_number("1" * 10) is None
    assert deep_study.parse("4") == 4 and whole("-3", "x", lo=-5) == -3 and intake.parse_value("12") == 12


async def test_the_judge_answers_an_odd_number_with_its_one_line(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        await scored_game(store, 3, "console:ada")
        study = HumanStudy(store, ["embed:minilm"])
        assert await study.refresh() > 0
        text = await study.turn("console:m0", Scope("console", None))
        bad = f"Answer with the option's number, from 1 to {options(text)}; nothing was recorded."
        for odd in ODD:
            assert await study.turn("console:m0", Scope("console", None), odd) == bad
    finally:
        await store.aclose()

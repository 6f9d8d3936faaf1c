"""One name rule for every name a person gives (games.text): a player's, a tournament's, a study member's.
NFKC, no control, bidi or invisible characters, not empty, bounded; a platform's display name is made to fit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.core.messages import UserRef
from games.text import MAX_NAME_CHARS, display_name, name_problem, person_name

BAD = ["", "   ", "Spring\n#2 forged: finished", "evil\u202etxt.exe", "a\u2066b", "zero\u200bwidth", "pi\u3164lot",
       "x" * (MAX_NAME_CHARS + 1), "tab\there"]


@pytest.mark.parametrize("name", BAD)
def test_a_bad_name_is_one_sentence(name: str) -> None:
    problem = name_problem(name, "A tournament's name")
    assert problem is not None and problem.startswith("A tournament's name") and "\n" not in problem


def test_good_names_normalise_to_one_form() -> None:
    assert name_problem("Ada Lovelace") is None and name_problem("Zoë") is None
    assert person_name(" ａｄａ ") == person_name("ada") == "ada"


def test_platform_names_are_made_to_fit() -> None:
    assert UserRef("slack", "U1", "Bob\u202e\nthe\tbuilder\u200b").name == "Bob the builder"
    assert UserRef("slack", "U1", "\u202e\u200b").name == "U1"
    assert len(UserRef("slack", "U1", "y" * 500).name) == MAX_NAME_CHARS
    assert display_name("ｂｏｂ") == "bob"


@pytest.mark.parametrize("name", ["", "Spring\n#2 forged: finished", "evil\u202etxt"])
def test_a_tournament_name_that_would_forge_a_listing_is_refused(tmp_path: Path, name: str) -> None:
    env = {"HUSHTABLE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}", "HUSHTABLE_AGENT_CHOICES": "random",
           "HUSHTABLE_FALLBACK_AGENT": "random", "HUSHTABLE_DEFAULT_AGENT": "random"}
    r = CliRunner().invoke(app, ["tournament", "create", "--game", "chameleon", "--name", name], env=env)
    assert r.exit_code == 2 and "A tournament's name" in r.output and "Traceback" not in r.output, r.output
    listing = CliRunner().invoke(app, ["tournament", "list"], env=env)
    assert "forged" not in listing.output

"""Discord offers the same longest turn deadline as every other entry and the README: one week."""

from __future__ import annotations

from pathlib import Path

from bot.core.commands import MAX_DEADLINE_S
from tests.bot.discord.conftest import Harness

ROOT = Path(__file__).resolve().parents[3]


async def test_the_discord_deadline_options_allow_one_week(harness: Harness) -> None:
    limits = {}
    for cmd in harness.fake.commands:
        for opt in cmd.get("options", []):
            if opt["name"] in ("deadline", "seconds") and cmd["name"] in ("play", "deadline"):
                limits[(cmd["name"], opt["name"])] = opt.get("max_value")
    assert limits == {("play", "deadline"): MAX_DEADLINE_S, ("deadline", "seconds"): MAX_DEADLINE_S}, limits
    assert "at most one week" in (ROOT / "README.md").read_text(encoding="utf-8")

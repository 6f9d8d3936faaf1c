"""The chat clue reports quote only the words of members who agreed to research: the research exports'
filter (``bot.core.privacy``) decides, the others' clues are shown as the export's marker and counted
(real SQLite store, real MiniLM evaluator, the privacy desk as the bot wires it)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.core.privacy import PrivacyDesk
from bot.sneak import WITHHELD, SneakService, withheld_line
from models.worker.embedding_backend import embedder_for
from storage import people
from tests.bot.core.conftest import Harness, make_harness
from tests.eval.logging_helpers import log_random_game
from tests.eval.test_report import no_models


@asynccontextmanager
async def reporting(tmp_path: Path, consent: str) -> AsyncIterator[tuple[Harness, SneakService, PrivacyDesk]]:
    """A bot's table service on a SQLite file with its SNEAK reporter behind the privacy desk's filter, as the bot
    wires them (research consent ``consent``)."""
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = SneakService(h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"])
        desk = PrivacyDesk(h.store, contact=None, consent=consent, retention_days=None)
        reporter.research_filter = desk.report_filter
        yield h, reporter, desk
    finally:
        await h.service.stop()
        await h.store.aclose()


def _quoted(clue: str, text: str) -> bool:
    return f"\u201c{clue}\u201d" in text


async def test_a_chameleon_report_quotes_only_consenting_members(tmp_path: Path) -> None:
    async with reporting(tmp_path, "opt-in") as (h, reporter, desk):
        gid, _ = await log_random_game(h.store, "chameleon", "sneak", 4, seed=8, humans=(0, 1), agent="embed:minilm",
                                       platform="memory")
        assert (await desk.research("memory:user1", "on")).startswith("Thanks")  # user0 never said yes
        clues = {a.seat: a.value[0] for a in (await h.store.load_game(gid)).actions if a.kind == "clue"}
        text = await reporter.report(gid)
        assert text is not None
        assert not _quoted(clues[0], text) and f"Human 0: {WITHHELD}: " in text
        assert all(_quoted(clues[s], text) for s in (1, 2, 3))  # a consenting member's and the agents'
        assert text.splitlines()[-1] == withheld_line(1)
        # Saying yes later: the next report quotes the clue, nothing withheld.
        await people.set_research(h.store, "memory:user0", True)
        text = await reporter.report(gid)
        assert text is not None and _quoted(clues[0], text) and WITHHELD not in text


async def test_a_games_own_report_quotes_only_consenting_members(tmp_path: Path) -> None:
    async with reporting(tmp_path, "notice") as (h, reporter, desk):
        gid, _ = await log_random_game(h.store, "spymasters", "classic", 4, seed=3, humans=(0,), agent="embed:minilm",
                                       platform="memory", lobby={"sneak_report": True})
        mine = [a.value[0] for a in (await h.store.load_game(gid)).actions if a.kind == "clue" and a.seat == 0]
        assert mine, "seed 3 has a clue by the member"
        before = await reporter.report(gid)  # notice: everyone is in until they say no
        assert before is not None and all(_quoted(c, before) for c in mine) and WITHHELD not in before
        await desk.research("memory:user0", "off")
        text = await reporter.report(gid)
        assert text is not None
        own = [line for line in text.splitlines() if line.startswith("- Human 0:")]
        assert len(own) == len(mine) and all(line.startswith(f"- Human 0: {WITHHELD}, ") for line in own)
        assert not any(re.search(rf"(?<!\w){re.escape(c)}(?!\w)", line, re.IGNORECASE) for c in mine for line in own)
        # The agent's clues of the same words (seed 3: "warm", "tiny") stay quoted: only the member's are withheld.
        theirs = {a.value[0] for a in (await h.store.load_game(gid)).actions if a.kind == "clue" and a.seat != 0}
        assert set(mine) & theirs and all(_quoted(c, text) for c in theirs)
        assert text.splitlines()[-1] == withheld_line(len(mine))

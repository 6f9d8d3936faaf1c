"""The chat clue report: posted after the result of a Chameleon game, with utility and leakage per clue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.core.messages import Place
from bot.sneak import attach_sneak
from models.eval.report import averages_text, player_averages
from models.types import InferenceError
from models.worker.embedding_backend import embedder_for
from tests.bot.core.conftest import make_harness
from tests.eval.logging_helpers import log_random_game

HERE = Place("memory", "chan-sneak")


async def no_models(spec: str) -> Any:
    raise InferenceError("this test uses the embedding evaluator only")


async def test_a_finished_chameleon_game_gets_a_clue_report_after_its_result(tmp_path: Path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        attach_sneak(h.service, h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"])
        gid = await h.service.open_ai_table(tenant="memory", place=HERE, game="chameleon", variant="classic",
                                            options={}, agents=["random"] * 4, seed=5)
        result = await h.service.wait_finished(gid)
        assert result is not None
        await h.service.wait_idle(timeout=120)
        texts = [s.message.text for s in h.platform.public()]
        report_at = next(i for i, t in enumerate(texts) if t.startswith("SNEAK clue report"))
        assert any("Game over" in t for t in texts[:report_at])  # the result is announced before the report
        report = texts[report_at]
        clues = [a for a in (await h.store.load_game(gid)).actions if a.kind == "clue"]
        for a in clues:
            assert f"\u201c{a.value[0]}\u201d" in report
        assert report.count(": utility ") == len(clues) and "Best SoftScore:" in report
        assert "chameleon's bluff" in report
        assert h.platform.public()[report_at].message.user_text  # player text: never pings anyone
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_spy_and_decrypto_reports_need_the_table_option(tmp_path: Path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = attach_sneak(h.service, h.store, client_for=no_models, embedder_for=embedder_for,
                                evaluators=["embed:minilm"])
        gid, _ = await log_random_game(h.store, "spy", "classic", 4, seed=3)
        assert await reporter.report(gid) is None
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_player_averages_against_the_agents(tmp_path: Path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = attach_sneak(h.service, h.store, client_for=no_models, embedder_for=embedder_for,
                                evaluators=["embed:minilm"])
        gid, _ = await log_random_game(h.store, "chameleon", "sneak", 4, seed=8, humans=(0,), agent="embed:minilm",
                                       platform="memory")
        assert await reporter.report(gid)
        mine = await player_averages(h.store, "memory:user0")
        assert mine.player is not None and mine.player_n == 1 and set(mine.agents) == {"embed:minilm"}
        text = averages_text(mine)
        assert text.startswith("Your SNEAK averages") and "embed:minilm: utility" in text
        nobody = await player_averages(h.store, "memory:someone-else")
        assert nobody.player is None and "No scored clues" in averages_text(nobody)
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_the_table_option_asks_for_the_report_after_a_spy_game(tmp_path: Path) -> None:
    from bot.core.messages import Command, CommandKind, UserRef

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        attach_sneak(h.service, h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"])
        host = UserRef("memory", "1", "Host")
        refused = await h.service.handle(Command(CommandKind.CREATE, host, HERE,
                                                 {"game": "spy", "options": {"sneak_report": "maybe"}}, "r0"))
        assert not refused.ok and "sneak_report is yes or no" in refused.text
        created = await h.service.handle(Command(CommandKind.CREATE, host, HERE,
                                                 {"game": "spy", "spectate": True, "options": {"sneak_report": True}}, "r1"))
        assert created.ok, created.text
        assert (await h.service.handle(Command(CommandKind.ADD_AI, host, HERE, {"agent": "random", "count": 4}, "r2"))).ok
        assert (await h.service.handle(Command(CommandKind.START, host, HERE, {"seed": 3}, "r3"))).ok
        gid = next(iter(h.service.tables))
        assert (await h.store.game(gid)).lobby["sneak_report"] is True  # kept by the table, not the rules
        assert await h.service.wait_finished(gid) is not None
        await h.service.wait_idle(timeout=120)
        texts = [s.message.text for s in h.platform.public()]
        assert any(t.startswith("SNEAK clue report") for t in texts)
    finally:
        await h.service.stop()
        await h.store.aclose()

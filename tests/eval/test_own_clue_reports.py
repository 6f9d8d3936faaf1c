"""Games whose clues are scored their own way (the per-game scoring hook): Just One's report read
from a logged game, Spymasters' clues scored on their board, both reached through the registry,
the chat report after a game and ``sneak score`` (real SQLite store, real MiniLM evaluator)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.core.messages import Command, CommandKind, UserRef
from bot.sneak import SneakService
from games.catalog import descriptor
from games.labels import fill_labels
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.games import hooks, registry
from models.eval.games.justone import cards, outcome_report
from models.eval.live import score_own
from models.worker.embedding_backend import embedder_for
from storage.store import Store
from tests.bot.core.conftest import make_harness
from tests.eval.logging_helpers import log_random_game
from tests.eval.test_report import HERE, no_models


async def test_just_one_says_which_clues_found_the_word_and_which_duplicates_cost_the_table(store: Store) -> None:
    gid, result = await log_random_game(store, "justone", "classic", 5, seed=2, humans=(0,))
    assert result is not None
    log = await store.load_game(gid)
    played = cards(log)
    assert [c["word"] for c in played] == [c["word"] for c in result.details["played"] if c["guesser"] is not None]
    rep = await outcome_report(log, [])
    assert rep.clues == sum(len(c["clues"]) for c in played)
    text = fill_labels("\n".join(rep.lines), {s: f"Name{s}" for s in range(5)})
    dup_cards = [c for c in played if any(x["removed"] == "duplicate" for x in c["clues"])]
    assert dup_cards, "seed 2 has a card with identical clues"
    assert "wrote the same clue and cost the table" in text and "Per player:" in text
    for c in played:
        assert f"Card {c['card']} ({c['word']})" in text
    dups = sum(1 for c in played for x in c["clues"] if x["removed"] == "duplicate")
    assert rep.numbers["duplicates"] == 100.0 * dups / rep.clues


async def test_spymasters_and_just_one_are_reached_through_the_hook(store: Store) -> None:
    assert {"spymasters", "justone"} <= set(hooks()) and not {"spymasters", "justone"} & set(registry())
    await log_random_game(store, "spymasters", "classic", 4, seed=3, humans=())
    await log_random_game(store, "justone", "classic", 3, seed=1, humans=())
    ev = EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")
    runs = {r.game: r for r in await score_own(store, [ev])}
    assert runs["spymasters"].games == 1 and runs["spymasters"].clues > 0
    assert set(runs["spymasters"].numbers) == {"utility", "leakage", "assassin", "soft"}
    assert runs["justone"].games == 1 and runs["justone"].clues > 0


@pytest.mark.parametrize("game", sorted(hooks()))
async def test_a_table_that_asked_for_it_gets_the_games_own_report_after_its_result(tmp_path: Path, game: str) -> None:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    try:
        reporter = SneakService(h.store, client_for=no_models, embedder_for=embedder_for,
                                evaluators=["embed:minilm"]).attach(h.service.ai_tables)
        d = descriptor(game)
        variant = str(d.variants[0])
        seats = d.engine.seat_range(d.engine.make_config(variant))[0]
        gid, _ = await log_random_game(h.store, game, variant, seats, seed=4, humans=())
        assert await reporter.report(gid) is None, "asked for by the table only"
        host = UserRef("memory", "1", "Host")
        created = await h.service.handle(Command(CommandKind.CREATE, host, HERE, {
            "game": game, "variant": variant, "spectate": True, "options": {"sneak_report": True}}, "r1"))
        assert created.ok, created.text
        assert (await h.service.handle(Command(CommandKind.ADD_AI, host, HERE, {"agent": "random", "count": seats},
                                               "r2"))).ok
        assert (await h.service.handle(Command(CommandKind.START, host, HERE, {"seed": 5}, "r3"))).ok
        gid = next(iter(h.service.tables))
        assert await h.service.ai_tables.wait_finished(gid) is not None
        await h.service.wait_idle(timeout=120)
        texts = [s.message.text for s in h.platform.public()]
        report = next(t for t in texts if t.startswith("SNEAK clue report"))
        names = {s.display_name for s in (await h.store.load_game(gid)).seats}
        assert any(n in report for n in names) and "\ue000" not in report
    finally:
        await h.service.stop()
        await h.store.aclose()

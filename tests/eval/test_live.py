"""Scoring logged games into the evaluations table: idempotent per move, evaluator and settings."""

from __future__ import annotations

from typing import Any

import pytest

from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator, LLMEvaluator
from models.eval.games import instances_from_log
from models.eval.live import live_summary, score_games
from models.worker.embedding_backend import embedder_for
from storage.evaluations import evaluations
from storage.store import Store
from tests.eval.conftest import Down
from tests.eval.logging_helpers import log_random_game

DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic", "modern", "useful"])




async def test_rescoring_adds_only_what_is_new(store: Store, client: Any) -> None:
    g1, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=1)
    g2, _ = await log_random_game(store, "decrypto", "benchmark", 3, seed=2)
    n1 = len(instances_from_log(await store.load_game(g1)))
    n2 = len(instances_from_log(await store.load_game(g2)))
    llm = LLMEvaluator(client, "llm:tiny")
    emb = EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")

    first = await score_games(store, [llm, emb], DECOYS, game_id=g1)
    assert (first.instances, first.inserted, first.skipped, first.failures) == (n1, 2 * n1, 0, 0)
    again = await score_games(store, [llm, emb], DECOYS)  # every game now: only g2 is new
    assert (again.inserted, again.skipped) == (2 * n2, 2 * n1)
    assert (await score_games(store, [llm, emb], DECOYS)).inserted == 0
    other = await score_games(store, [LLMEvaluator(client, "llm:tiny", permutations=3)], DECOYS, game_id=g1)
    assert other.inserted == n1  # other settings, other key: scored anew beside the first

    rows = await evaluations(store, game_ids=[g1], evaluators=["llm:tiny"])
    assert len(rows) == 2 * n1 and len({r.settings for r in rows}) == 2
    r = rows[0]
    assert r.game == "chameleon" and r.instance["message"] and len(r.decoys) == 5
    assert r.ally_probs is not None and len(r.ally_probs) == 6 and sum(r.ally_probs) == pytest.approx(1.0, abs=1e-4)
    assert r.cham_probs is not None and len(r.cham_probs) == len(r.instance["candidates"]) == 12
    assert r.utility is not None and r.leakage is not None and 0.0 <= r.utility <= 1.0
    assert r.soft == pytest.approx(r.utility * (1 - r.leakage))
    assert r.settings_json["decoys"] == DECOYS.name and r.error is None


async def test_failures_are_stored_with_their_reason_and_counted(store: Store) -> None:


    gid, _ = await log_random_game(store, "spy", "classic", 4, seed=9)
    run = await score_games(store, [LLMEvaluator(Down(), "llm:down")], DECOYS)
    assert run.failures == run.inserted == run.instances > 0
    rows = await evaluations(store, game_ids=[gid])
    assert all(r.utility is None and "worker down" in (r.error or "") for r in rows)
    summary = await live_summary(store, secret="k")
    (row,) = summary.by_game
    assert row.failures == run.failures and row.n == 0


async def test_summaries_group_by_game_player_and_role_with_pseudonyms(store: Store) -> None:
    await log_random_game(store, "chameleon", "classic", 4, seed=4, humans=(0,), agent="embed:minilm")
    await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
    s = await live_summary(store, secret="k")
    players = {r.group for r in s.by_player}
    assert "embed:minilm" in players
    humans = [p for p in players if p.startswith("human u_")]
    assert len(humans) == 1 and "user0" not in humans[0]  # a pseudonym, never the platform id
    assert {r.group for r in s.by_role} <= {"chameleon/player", "chameleon/chameleon"}
    # By game type, the chameleon's bluffs are a row of their own, never averaged with informed clues.
    assert {r.group for r in s.by_game} == {"chameleon", "chameleon (bluffs)"}


async def test_exports_include_the_stored_evaluations(store: Store) -> None:
    import io
    import json

    from storage.export import export_games

    gid, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=12)
    run = await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS)
    buf = io.StringIO()
    assert await export_games(store, out=buf, secret="k") == 1
    rec = json.loads(buf.getvalue())
    evs = rec["evaluations"]
    assert len(evs) == run.inserted == 4 and {e["evaluator"] for e in evs} == {"embed:minilm"}
    assert all(0 <= e["utility"] <= 1 and len(e["decoys"]) == 5 and e["instance"]["message"] for e in evs)
    assert "console:user" not in buf.getvalue().split('"evaluations"')[1]  # no player ids in the scores

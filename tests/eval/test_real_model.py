"""The bundled evaluators (SmolLM2 through the worker, MiniLM) score a handful of real instances."""

from __future__ import annotations

import dataclasses

import pytest

from games import decks
from models.client import ClientPool
from models.embeddings import VocabIndex
from models.eval.baselines import Baseline
from models.eval.decoys import EmbeddingDecoys
from models.eval.evaluators import resolve
from models.eval.generators import Baselines
from models.eval.instances import bench_instances
from models.eval.score import evaluate
from models.worker.embedding_backend import embedder_for

pytestmark = pytest.mark.real_model


async def test_bundled_evaluators_score_a_handful_of_instances() -> None:
    emb = embedder_for("minilm")
    refs = Baselines(VocabIndex(emb))
    base = bench_instances(list(decks.cards())[:1], 12)[:3]
    insts = [dataclasses.replace(i, message=refs.message(b, i), role=b.value)
             for i in base for b in (Baseline.RANDOM, Baseline.SECRET_SYNONYM)]
    pool = ClientPool()
    try:
        evs = [await resolve(s, client_for=pool.get, embedder_for=embedder_for) for s in ("llm:default", "embed:minilm")]
        results = await evaluate(insts, evs, EmbeddingDecoys(emb))
    finally:
        await pool.aclose()
    assert len(results) == 12 and all(r.error is None and r.scores is not None for r in results)
    for r in results:
        assert r.ally_probs is not None and sum(r.ally_probs) == pytest.approx(1.0, abs=1e-3)
        assert r.cham_probs is not None and len(r.cham_probs) == 12
    emb_leak = {b: sum(r.scores.leakage for r in results
                       if r.scores is not None and r.evaluator == "embed:minilm" and r.instance.role == b)
                for b in ("random", "secret-synonym")}
    assert emb_leak["secret-synonym"] > emb_leak["random"]  # a synonym of the secret gives it away

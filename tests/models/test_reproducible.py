"""Same seed, state and settings: the same moves, on an idle machine and on one kept busy by other processes.

The strategic agent's work is fixed (candidates, token counts, scoring passes), never cut by
the clock; its deadline is only a deadline. Played twice, once with two CPU-bound processes
running beside it, a seeded game gives identical moves, and every move says where it came from.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import games
from bot.core.agents import AgentRunner
from models.agents.base import Source
from models.agents.llm import LLMAgent, Mode
from models.agents.propose import ModelUse, Strategy
from models.agents.provenance import decision_of
from models.embeddings import VocabIndex
from models.types import Inference
from models.worker.batcher import Batcher
from models.worker.transformers_backend import TransformersBackend
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index


@contextmanager
def busy_cpu(n: int = 2) -> Iterator[None]:
    """``n`` other processes spinning on the CPU for as long as the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def play(game_id: str, variant: str, seats: int, seed: int, factory: Any, opts: dict[str, Any]) -> list[tuple[Any, ...]]:
    g = games.get(game_id)
    state, _ = g.new(g.make_config(variant, **opts), seats, seed)

    async def go() -> list[tuple[Any, ...]]:
        runner = AgentRunner(factory, retries=3)
        moves: list[tuple[Any, ...]] = []
        s = state
        for _ in range(400):
            if g.result(s) is not None:
                break
            seat = min(g.to_act(s))
            out = await runner.decide(g, s, seat, game_id=1, spec="llm:default", seed=seed + seat)
            decision = decision_of(out.calls[-1].prompt)
            assert decision is not None, "every move ends with its decision row"
            moves.append((seat, out.action, decision["source"], decision["model_share"], decision["timeout"]))
            s, _ = g.apply(s, seat, out.action)
        assert g.result(s) is not None
        return moves

    return asyncio.run(go())


@pytest.mark.parametrize(("game_id", "variant", "seats", "opts"), [
    ("decrypto", "benchmark", 3, {"max_turns": 4}), ("chameleon", "sneak", 4, {}),
])
def test_the_default_plays_the_same_moves_on_an_idle_and_a_busy_machine(
        index: VocabIndex, game_id: str, variant: str, seats: int, opts: dict[str, Any]) -> None:  # noqa: F811
    async def no_model(spec: str) -> Inference:
        raise AssertionError("the default does not reach for a model on this path")

    def factory(spec: str, seed: int) -> Any:
        return LLMAgent(no_model, seed=seed, mode=Mode.STRATEGIC, strategy=Strategy(index=index))

    idle = play(game_id, variant, seats, 5, factory, opts)
    with busy_cpu():
        busy = play(game_id, variant, seats, 5, factory, opts)
    assert idle == busy
    assert not any(m[4] for m in idle), "no move reached its deadline"
    assert {m[2] for m in idle} <= {Source.SPECIALIST.value, Source.RULES.value}


def test_with_the_model_in_every_use_the_moves_are_the_same_under_load(
        index: VocabIndex, tiny_model: Any, tiny_tokenizer: Any) -> None:  # noqa: F811
    """A real (tiny, random-weight) transformers model in choices, proposals and shortlists."""

    def run_once() -> list[tuple[Any, ...]]:
        batcher = Batcher(TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny", min_prefix_tokens=8), max_wait_s=0.01)

        async def inference_for(spec: str) -> Inference:
            return batcher

        def factory(spec: str, seed: int) -> Any:
            return LLMAgent(inference_for, seed=seed, mode=Mode.STRATEGIC, max_tokens=8,
                            strategy=Strategy(index=index, model=frozenset(ModelUse), samples=2, orderings=1,
                                              deadline_s=600.0))

        try:
            return play("chameleon", "sneak", 4, 9, factory, {})
        finally:
            asyncio.run(batcher.aclose())

    idle = run_once()
    with busy_cpu():
        busy = run_once()
    assert idle == busy
    assert any(m[2] == Source.MODEL.value or m[3] > 0 for m in idle), "the model took part in some decisions"

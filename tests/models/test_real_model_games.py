"""The bundled SmolLM2 plays one full game of each game through the HTTP worker.

The worker app (models/worker/server.py) serves a Batcher over
TransformersBackend.load("default") on 127.0.0.1, port 0; every seat is an
LLMAgent reaching it through HttpClient, and the table's AgentRunner checks
each answer against the engine, re-asks, and falls back. The assertions are
about the plumbing, not the model's skill: every applied action is legal, the
game ends, every label distribution sums to 1. Fallbacks and re-prompts are
counted and printed (a 135M model refuses the format now and then).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import games
from bot.core.agents import AgentRunner
from models.agents import RandomAgent
from models.agents.base import Player
from models.agents.llm import LLMAgent
from models.client import HttpClient
from models.types import Inference

pytestmark = pytest.mark.real_model

GAMES = [
    ("decrypto", "benchmark", 3, {"max_turns": 2}),
    ("spy", "spygame", 4, {}),
    ("chameleon", "classic", 3, {}),
]


async def play_all() -> dict[str, dict[str, Any]]:
    from models.worker.batcher import Batcher
    from models.worker.server import start_server
    from models.worker.transformers_backend import TransformersBackend

    backend = await asyncio.to_thread(TransformersBackend.load, "default")
    batcher = Batcher(backend)
    await batcher.start()
    server = await start_server(batcher, "127.0.0.1", 0)
    client = HttpClient(server.url, timeout_s=120.0)

    async def inference_for(spec: str) -> Inference:
        return client

    def factory(spec: str, seed: int) -> Player:
        if spec == "random":
            return RandomAgent("random", seed)
        return LLMAgent(inference_for, seed=seed, max_tokens=16, retries=1, spec=spec)

    report: dict[str, dict[str, Any]] = {}
    try:
        for game_id, variant, seats, opts in GAMES:
            g = games.get(game_id)
            s, _ = g.new(g.make_config(variant, **opts), seats, 7)
            # The agent re-prompts on a malformed answer itself; the runner does not ask again, to bound the run time.
            runner = AgentRunner(factory, timeout_s=120.0, retries=0)
            stats: dict[str, Any] = {"moves": 0, "fallbacks": 0, "reprompted": 0, "scored": 0, "prob_sums": []}
            for _ in range(200):
                if g.result(s) is not None:
                    break
                seat = min(g.to_act(s))
                out = await runner.decide(g, s, seat, game_id=0, spec="llm:default", seed=seat)
                s, _ = g.apply(s, seat, out.action)  # raises if anything illegal got through
                stats["moves"] += 1
                stats["fallbacks"] += out.source != "ai"
                stats["reprompted"] += any(c.error for c in out.calls)
                for c in out.calls:
                    if c.operation == "score":
                        stats["scored"] += 1
                        stats["prob_sums"].append(sum(c.label_probs.values()))
            stats["result"] = g.result(s)
            report[game_id] = stats
    finally:
        await client.aclose()
        await server.close()
        await batcher.aclose()
    return report


def test_smollm2_plays_every_game_through_the_http_worker() -> None:
    report = asyncio.run(play_all())
    for game_id, stats in report.items():
        print(f"{game_id}: {stats['moves']} moves, {stats['fallbacks']} fallbacks, "
              f"{stats['reprompted']} answers needed a re-prompt, {stats['scored']} scored choices; "
              f"{stats['result'].summary if stats['result'] else 'unfinished'}")
        assert stats["result"] is not None, f"{game_id} did not end"
        assert stats["scored"] > 0, f"{game_id}: no choice was scored by the model"
        assert all(abs(x - 1.0) < 1e-4 for x in stats["prob_sums"])
        # Most turns are the model's own: fallbacks are the exception.
        assert stats["fallbacks"] < stats["moves"]


async def play_default() -> dict[str, dict[str, Any]]:
    """The configured default (llm:default: the strategic agent) over the bundled model, in process."""
    from bot.settings import Settings
    from models.agents.wiring import build_registry
    from models.client import ClientPool
    from models.worker.embedding_backend import embedder_for

    pool = ClientPool()
    registry = build_registry(Settings(_env_file=None), pool.get, embedder_for)  # type: ignore[call-arg]  # no .env
    report: dict[str, dict[str, Any]] = {}
    try:
        for game_id, variant, seats, opts in GAMES:
            g = games.get(game_id)
            s, _ = g.new(g.make_config(variant, **opts), seats, 7)
            runner = AgentRunner(registry, timeout_s=120.0, retries=3, fallback_spec="embed:minilm")
            stats: dict[str, Any] = {"moves": 0, "fallbacks": 0, "refusals": 0}
            for _ in range(200):
                if g.result(s) is not None:
                    break
                seat = min(g.to_act(s))
                out = await runner.decide(g, s, seat, game_id=0, spec="llm:default", seed=seat)
                s, _ = g.apply(s, seat, out.action)
                stats["moves"] += 1
                stats["fallbacks"] += out.source != "ai"
                stats["refusals"] += sum(1 for c in out.calls if (c.error or "").startswith("illegal"))
            stats["result"] = g.result(s)
            report[game_id] = stats
    finally:
        await pool.aclose()
    return report


def test_the_default_agent_plays_every_game_without_a_fallback() -> None:
    report = asyncio.run(play_default())
    for game_id, stats in report.items():
        print(f"{game_id} (llm:default): {stats['moves']} moves, {stats['fallbacks']} fallbacks, {stats['refusals']} refused")
        assert stats["result"] is not None, f"{game_id} did not end"
        assert stats["fallbacks"] == 0 and stats["refusals"] == 0, f"{game_id}: every move is the default's own, legal at once"

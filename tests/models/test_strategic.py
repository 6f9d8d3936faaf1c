"""The strategic LLM agent (llm:default): clues chosen for utility against leakage, free text that is legal
on the first try whenever a candidate is, and debiased choices."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import numpy as np
import pytest

import games
from bot.core.agents import AgentRunner
from games.base import Action, Observation, Text
from models.agents.embed import VocabIndex
from models.agents.llm import AnswerRefused, LLMAgent, Mode
from models.agents.propose import JudgeKind, ModelUse, Strategy
from models.agents.strategy import EmbeddingJudge
from models.client import InProcessClient
from models.scoring import Debias
from models.types import GenerateRequest, Inference
from models.worker.batcher import Batcher
from models.worker.fake_backend import FakeBackend
from models.worker.transformers_backend import TransformersBackend
from tests.models.test_embed_agent import DictEmbedder, index  # noqa: F401  # the session's MiniLM index
from tests.models.test_llm_agent import state_at
from tests.models.test_scoring import biased_model  # noqa: F401  # the tiny llama with a label bias


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def fake_agent(strategy: Strategy, reply: Any = None, seed: int = 1) -> tuple[LLMAgent, Any]:
    client = InProcessClient.over(FakeBackend(reply=reply))

    async def inference_for(spec: str) -> Inference:
        await client.start()
        return client

    return LLMAgent(inference_for, seed=seed, mode=Mode.STRATEGIC, strategy=strategy), client.aclose


# --------------------------------------------------------------------------- a hand-made SNEAK case

VECTORS = {
    # axes: lion-ness, tiger-ness, shark-ness, eagle-ness
    "lion": [1, 0.3, 0, 0], "tiger": [0.3, 1, 0, 0], "shark": [0, 0, 1, 0], "eagle": [0, 0, 0, 1],
    "mane": [1, 0, 0, 0],  # names the lion alone: allies get it, and so does the chameleon
    "cat": [1, 1, 0, 0],  # fits the lion and the tiger: allies still get it, the chameleon is left guessing
    "ocean": [0, 0, 1, 0.2],  # fits the shark: no use to allies
    "stripes": [0.2, 1, 0, 0.1], "fin": [0, 0, 1, 0.1], "feather": [0, 0.1, 0, 1],
}
CARD = ["lion", "tiger", "shark", "eagle"]


def hand_index() -> VocabIndex:
    return VocabIndex(DictEmbedder({k: np.array(v, dtype=np.float32) for k, v in VECTORS.items()}),
                      words=["mane", "cat", "ocean", "stripes", "fin", "feather"])


def clue_turn() -> tuple[Observation, Text]:
    view = {"players": 4, "seat": 0, "category": "Animals", "card": CARD, "secret": "lion", "is_chameleon": False,
            "clues": [], "role": "player", "phase": "clues"}
    return Observation("chameleon", 0, "clues", view, ()), Text("clue", "Your clue", ("Clue",), max_words=1, max_chars=30)


def test_the_judge_prefers_utility_without_leakage_on_a_hand_made_case() -> None:
    judge = EmbeddingJudge(hand_index())
    soft = {c: judge.soft_score(c, "lion", CARD) for c in ("mane", "cat", "ocean")}
    assert judge.utility("mane", "lion", CARD) > 0.9 and judge.leakage("mane", "lion", CARD) > 0.9
    assert judge.utility("ocean", "lion", CARD) < 0.1
    assert soft["cat"] > 0.5 > max(soft["mane"], soft["ocean"])


def test_the_strategy_gives_the_higher_softscore_clue() -> None:
    obs, spec = clue_turn()
    agent, close = fake_agent(Strategy(index=hand_index(), samples=0, judge_kind=JudgeKind.OWN))
    d = run(agent.act(obs, spec))
    run(close())
    assert d.action.value == ("cat",)
    assert not any(c.error for c in d.calls)


# --------------------------------------------------------------------------- legal on the first try


def test_propose_then_choose_sends_the_legal_candidate_among_illegal_ones() -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    seat = min(g.to_act(s))
    word = s.word_of(seat)
    too_long = " ".join(["very"] * 30)
    replies = iter([f"ANSWER: my {word} is great", f"ANSWER: {too_long}", "ANSWER: you sit on it at night"])

    def reply(req: GenerateRequest) -> str:
        return next(replies)

    def check(action: Action) -> str | None:
        try:
            g.apply(s, seat, action)
        except Exception as exc:
            return str(exc)
        return None

    agent, close = fake_agent(Strategy(embed="none", samples=3), reply)
    d = run(agent.act(g.observe(s, seat), g.legal(s, seat), check=check))
    run(close())
    assert d.action.value == ("you sit on it at night",) and check(d.action) is None
    assert not any(c.error for c in d.calls), "unusable proposals are candidates less, not refusals"
    # With no legal candidate at all the agent says so; it never sends an illegal answer.
    agent, close = fake_agent(Strategy(embed="none", samples=2), lambda req: f"ANSWER: {word}")
    with pytest.raises(AnswerRefused):
        run(agent.act(g.observe(s, seat), g.legal(s, seat), check=check))
    run(close())


@pytest.mark.parametrize(("game_id", "variant", "seats"), [
    ("decrypto", "benchmark", 3), ("decrypto", "teams", 4), ("spy", "classic", 5), ("chameleon", "sneak", 4),
])
def test_every_move_of_whole_games_is_legal_on_the_first_try(index: VocabIndex, game_id: str, variant: str, seats: int) -> None:  # noqa: F811
    """Real embedding candidates, a fake model whose proposals are mostly unusable: nothing illegal is ever sent."""
    g = games.get(game_id)
    s, _ = g.new(g.make_config(variant, **({"max_turns": 3} if variant == "benchmark" else {})), seats, 11)
    client = InProcessClient.over(FakeBackend())

    async def inference_for(spec: str) -> Inference:
        await client.start()
        return client

    def factory(spec: str, seed: int) -> Any:
        return LLMAgent(inference_for, seed=seed, mode=Mode.STRATEGIC, strategy=Strategy(index=index, model=frozenset(ModelUse)))

    async def play() -> list[Any]:
        runner = AgentRunner(factory, retries=3)
        outs = []
        state = s
        for _ in range(300):
            if g.result(state) is not None:
                break
            seat = min(g.to_act(state))
            out = await runner.decide(g, state, seat, game_id=1, spec="llm:default", seed=seat)
            state, _ = g.apply(state, seat, out.action)
            outs.append(out)
        assert g.result(state) is not None
        await client.aclose()
        return outs

    outs = run(play())
    assert all(o.source == "ai" for o in outs)
    assert not any((c.error or "").startswith("illegal") for o in outs for c in o.calls)


# --------------------------------------------------------------------------- debiased choices in play


def test_the_agents_choices_are_debiased_against_a_label_bias(biased_model: Any, tiny_tokenizer: Any) -> None:  # noqa: F811
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "vote")
    seat = min(g.to_act(s))
    obs, spec = g.observe(s, seat), g.legal(s, seat)

    async def go(debias: Debias) -> Counter[int]:
        b = Batcher(TransformersBackend(biased_model, tiny_tokenizer, model_id="biased", min_prefix_tokens=8), max_wait_s=0.02)

        async def inference_for(_: str) -> Inference:
            return b

        positions: Counter[int] = Counter()
        try:
            for seed in range(6):
                agent = LLMAgent(inference_for, seed=seed, mode=Mode.STRATEGIC,
                                 strategy=Strategy(embed="none", debias=debias, orderings=4, deadline_s=120.0))
                d = await agent.act(obs, spec)
                log = d.calls[0]
                assert log.operation == "score" and log.prompt["scoring"]["debias"] == debias.value
                positions[list(log.prompt["labels"]).index(log.raw_output)] += 1
        finally:
            await b.aclose()
        return positions

    assert run(go(Debias.NONE)) == Counter({0: 6}), "the bias picks position A every time"
    assert run(go(Debias.CYCLIC_CALIBRATED))[0] < 6

"""The Just One strategy: AI clue-givers predict each other's clues and never write the same one, and the
guesser reads every clue that survives. Real MiniLM vectors, whole seeded games through the agent runner."""

from __future__ import annotations

import asyncio
from typing import Any

import games
from bot.core.agents import AgentRunner
from games.base import Action
from games.text import same_words
from models.agents.embed import VocabIndex
from models.agents.games.justone import clue_plan, text_score
from models.agents.llm import LLMAgent, Mode
from models.agents.propose import Strategy
from models.agents.strategy import EmbeddingJudge
from models.client import InProcessClient
from models.types import Inference
from models.worker.fake_backend import FakeBackend
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index

WORDS = ["apple", "river", "doctor", "guitar", "winter", "castle"]


def play(index: VocabIndex, seed: int, seats: int = 5) -> Any:  # noqa: F811
    """A whole all-AI game of the strategic agent (no model asked: the specialist alone)."""
    g = games.get("justone")
    s, _ = g.new(g.make_config(cards=len(WORDS), deal={"words": WORDS, "first": 0}), seats, seed)
    client = InProcessClient.over(FakeBackend())

    async def inference_for(spec: str) -> Inference:
        await client.start()
        return client

    def factory(spec: str, seed: int) -> Any:
        return LLMAgent(inference_for, seed=seed, mode=Mode.STRATEGIC, strategy=Strategy(index=index))

    async def go() -> Any:
        nonlocal s
        runner = AgentRunner(factory, retries=3)
        for _ in range(500):
            if g.result(s) is not None:
                break
            seat = min(g.to_act(s))
            out = await runner.decide(g, s, seat, game_id=1, spec="strategist", seed=seed * 10 + seat)
            assert out.source == "ai"
            s, _ = g.apply(s, seat, out.action)
        await client.aclose()
        return s

    return asyncio.run(go())


def test_a_plan_holds_clues_that_are_never_the_same_word(index: VocabIndex) -> None:  # noqa: F811
    for word in WORDS:
        plan = clue_plan(index, word, 6)
        assert len(plan) == 6
        assert not any(same_words(a, b) for i, a in enumerate(plan) for b in plan[i + 1:])
        assert not any(word in p.lower() for p in plan)


def test_two_ai_seats_on_the_same_card_never_give_the_same_clue_and_an_all_ai_game_keeps_its_clues(index: VocabIndex) -> None:  # noqa: F811
    end = play(index, seed=3)
    for card in end.history:
        texts = [c.text for c in card.clues]
        assert len(texts) == 4
        assert not any(same_words(a, b) for i, a in enumerate(texts) for b in texts[i + 1:]), texts
        assert all(c.removed is None for c in card.clues), card
    assert sum(1 for card in end.history if card.outcome.value == "found") >= len(WORDS) // 2
    # Same seed, same moves.
    again = play(index, seed=3)
    assert [(c.word, [x.text for x in c.clues], c.guess) for c in again.history] == \
           [(c.word, [x.text for x in c.clues], c.guess) for c in end.history]


def test_each_seat_prefers_its_own_place_in_the_plan_and_avoids_the_others(index: VocabIndex) -> None:  # noqa: F811
    g = games.get("justone")
    s, _ = g.new(g.make_config(cards=len(WORDS), deal={"words": WORDS, "first": 0}), 4, 1)
    judge = EmbeddingJudge(index)
    plan = clue_plan(index, "apple", 3)
    for place, seat in enumerate((1, 2, 3)):
        obs = g.observe(s, seat)
        scores = {w: text_score(index, judge, obs, Action.say("clue", w)) for w in plan}
        assert max(scores, key=scores.__getitem__) == plan[place]

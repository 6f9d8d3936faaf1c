"""The table's AgentRunner and the random player: re-asks that change something, a last resort the
rules accept, and a call log that tells the truth."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

import games
from bot.core.agents import AgentRunner
from games.base import Action, ActionSpec, Observation, Text
from models.agents.base import CallLog, Check, Decision, Player
from models.agents.llm import AnswerRefused, LLMAgent, Mode
from models.agents.provenance import decision_of
from models.agents.random_agent import RandomAgent
from models.client import InProcessClient
from models.types import GenerateRequest, Inference
from models.worker.fake_backend import FakeBackend
from tests.models.test_llm_agent import state_at


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def random_factory(spec: str, seed: int) -> Player:
    return RandomAgent(spec, seed)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_twelve_seat_spy_with_random_players_always_finds_a_legal_move(seed: int) -> None:
    g = games.get("spy")
    s, _ = g.new(g.make_config("classic"), 12, seed)
    runner = AgentRunner(random_factory, fallback_spec="random")
    sources = []
    for _ in range(1000):
        if g.result(s) is not None:
            break
        seat = min(g.to_act(s))
        out = run(runner.decide(g, s, seat, game_id=seed, spec="random", seed=seat))
        s, _ = g.apply(s, seat, out.action)  # raises if the runner let an illegal action through
        sources.append(out.source)
    assert g.result(s) is not None
    # The random player draws until the rules accept: it never needs the fallback chain.
    assert set(sources) == {"ai"}


def test_random_retries_draw_fresh_answers_and_the_check_finds_a_legal_one() -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    seat = min(g.to_act(s))
    obs, spec = g.observe(s, seat), g.legal(s, seat)
    agent = RandomAgent("random", 5)
    answers = {run(agent.act(obs, spec, feedback="refused", attempt=a)).action for a in range(8)}
    assert len(answers) >= 6, "each attempt draws afresh, whatever the feedback says"
    # Refuse everything but one word: the player keeps drawing until it finds it.
    only = "bright"

    def check(action: Action) -> str | None:
        return None if action.value == (only,) else "not that one"

    d = run(agent.act(obs, spec, attempt=0, check=check))
    assert d.action.value == (only,) and d.calls[0].label_probs["candidates_tried"] > 1


class Stubborn:
    """Answers ``refused`` (a text the rules refuse) twice, then something new; records what it was asked."""

    def __init__(self, refused: str, spec: str = "stubborn") -> None:
        self.refused = refused
        self.spec = spec
        self.asked: list[tuple[str | None, int]] = []

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0,
                  check: Check | None = None) -> Decision:
        self.asked.append((feedback, attempt))
        await asyncio.sleep(0.02)
        text = self.refused if len(self.asked) <= 2 else "something you hold"
        return Decision(Action.say(spec.kind, text), (CallLog(self.spec, operation="generate", raw_output=text,
                                                              latency_ms=20.0, retries=attempt),))


def describing_seat() -> tuple[Any, Any, int]:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    return g, s, min(g.to_act(s))


def test_a_reask_continues_the_attempts_carries_the_refusal_and_skips_a_repeated_answer() -> None:
    g, s, seat = describing_seat()
    stubborn = Stubborn(s.word_of(seat))  # the rules always refuse one's own word
    out = run(AgentRunner(lambda spec, seed: stubborn, retries=3).decide(g, s, seat, game_id=1, spec="stubborn", seed=1))
    assert out.source == "ai" and out.action.value == ("something you hold",)
    feedbacks, attempts = zip(*stubborn.asked, strict=True)
    assert list(attempts) == [0, 1, 2], "each re-ask continues the attempt count"
    assert feedbacks[0] is None and feedbacks[1] and feedbacks[2] == feedbacks[1], "the refusal travels with the re-ask"
    errors = [c.error for c in out.calls if c.error]
    assert errors[0].startswith("illegal:") and errors[1] == "repeated a refused answer"
    assert [c.retries for c in out.calls] == [0, 0, 1, 1, 2, 2], "the last row is the move's decision, at its attempt"
    assert decision_of(out.calls[-1].prompt) == {"role": "worded describe", "source": "specialist", "model_share": 0.0,
                                                  "timeout": False, "played": "stubborn"}


def test_the_log_latencies_add_up_and_the_move_total_is_recorded_once() -> None:
    g, s, seat = describing_seat()
    player = Stubborn(s.word_of(seat))
    started = time.perf_counter()
    out = run(AgentRunner(lambda spec, seed: player, retries=3).decide(g, s, seat, game_id=1, spec="stubborn", seed=1))
    wall = (time.perf_counter() - started) * 1000
    assert out.source == "ai"
    agent_rows = [c for c in out.calls if c.operation == "generate"]
    assert [c.latency_ms for c in agent_rows] == [20.0, 20.0, 20.0], "each row keeps the agent's own latency"
    # The runner's rows hold only what no agent row accounts for: the rows never add up past the move,
    # whose total is recorded once, on the outcome.
    assert sum(c.latency_ms for c in out.calls) <= out.latency_ms <= wall
    assert out.latency_ms >= sum(c.latency_ms for c in agent_rows)


def test_no_log_line_carries_a_refusal_or_a_secret(caplog: pytest.LogCaptureFixture) -> None:
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    seat = min(g.to_act(s))
    secret = s.word_of(seat)

    class Refuser:
        spec = "refuser"

        async def act(self, obs: Observation, spec: ActionSpec, **_: Any) -> Decision:
            raise AnswerRefused(f"refused: do not use the secret word {secret!r}", (CallLog("refuser", error=f"refused: {secret}"),))

    with caplog.at_level(logging.DEBUG):
        out = run(AgentRunner(lambda spec, seed: Refuser() if spec == "refuser" else RandomAgent(spec, seed),
                              fallback_spec="random").decide(g, s, seat, game_id=1, spec="refuser", seed=1))
    assert out.source == "fallback"
    assert caplog.records, "the failure is logged"
    for rec in caplog.records:
        assert secret.lower() not in rec.getMessage().lower()
        assert "refused" not in rec.getMessage()


def test_plain_llm_reask_changes_the_seed_continues_the_count_and_carries_the_engines_refusal() -> None:
    g, s = state_at("chameleon", "classic", 4, 3, lambda g, s: s.phase.value == "clues")
    seat = min(g.to_act(s))
    seen: list[GenerateRequest] = []

    def reply(req: GenerateRequest) -> str:
        seen.append(req)
        return "ANSWER: orchard" if len(seen) < 3 else "ANSWER: meadow"

    client = InProcessClient.over(FakeBackend(reply=reply))

    async def inference_for(spec: str) -> Inference:
        await client.start()
        return client

    agent = LLMAgent(inference_for, seed=4, mode=Mode.PLAIN, retries=3)

    def check(action: Action) -> str | None:
        return "orchard was said already." if action.value == ("orchard",) else None

    async def go() -> Decision:
        try:
            return await agent.act(g.observe(s, seat), g.legal(s, seat), feedback="an earlier refusal", attempt=2, check=check)
        finally:
            await client.aclose()

    d = run(go())
    assert d.action.value == ("meadow",)
    assert [c.retries for c in d.calls] == [2, 3, 4], "the count continues from the runner's attempt"
    assert len({r.seed for r in seen}) == 3 and all(r.temperature > 0 for r in seen)
    assert "orchard was said already" in seen[1].messages[-1].content
    assert "gave this answer before" in (d.calls[1].error or ""), "the identical answer was not checked again"


def test_text_spec_fixture_sanity() -> None:
    # The spy description spec allows several words: the scripted answers above fit it.
    g, s = state_at("spy", "spygame", 4, 3, lambda g, s: s.phase.value == "describe")
    spec = g.legal(s, min(g.to_act(s)))
    assert isinstance(spec, Text) and spec.max_words >= 4

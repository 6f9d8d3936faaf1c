"""``hushtable spygame bias``: the vote question is the agent's own, descriptions content-free; the shares
are counted by hand for scripted voters, and the tiny llama answers every question."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from bot.research.spybias import NAMINGS, SEATS, Trial, design, first_vote, measure, question, render, tally
from models.types import GenerateRequest, GenerateResult, InferenceError, ScoreRequest, ScoreResult
from tests.eval.conftest import client  # noqa: F401  (the tiny llama behind the worker's batcher)
from tests.models.conftest import tiny_model, tiny_tokenizer  # noqa: F401


class Voter:
    """Votes for the option that names ``target`` (a name of any naming method), else option A."""

    model_id = "scripted"

    def __init__(self, target: int | None = None, fail_every: int = 0) -> None:
        self.target = target
        self.fail_every = fail_every
        self.calls = 0
        self.seen: list[str] = []

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        raise AssertionError("the bias questions are scored, never generated")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        self.calls += 1
        if self.fail_every and self.calls % self.fail_every == 0:
            raise InferenceError("worker down")
        text = req.messages[-1].content
        self.seen.append(text)
        opts = dict(re.findall(r"^([ABC])\) (.+)$", text, re.M))
        names = {NAMINGS[n][self.target] for n in NAMINGS} if self.target is not None else set()
        pick = next((k for k, v in opts.items() if v in names), "A")
        return ScoreResult(tuple(1.0 if k == pick else 0.0 for k in req.labels), "scripted")

    async def aclose(self) -> None:
        return None


def test_the_question_is_the_agents_vote_prompt_with_content_free_descriptions() -> None:
    engine, state = first_vote(0)
    t = Trial("method 3", voter=1, speaking=(3, 1, 0, 2), options=(2, 0, 3))
    messages, labelled = question(engine, state, t)
    user = messages[-1].content
    assert "You are Mary." in user and not re.search(r"Player \d", "".join(m.content for m in messages))
    said = re.findall(r"^Round 1, (\w+): (.*)$", user, re.M)
    assert said == [("Tom", "..."), ("Mary", "..."), ("Jack", "..."), ("Alice", "...")]
    assert re.findall(r"^([ABC])\) (\w+)$", user, re.M) == [("A", "Alice"), ("B", "Jack"), ("C", "Tom")]
    assert [o.id for o in labelled.values()] == ["2", "0", "3"]
    assert "placeholder" not in "".join(m.content for m in messages)


def test_design_rotates_voters_and_never_offers_the_voter() -> None:
    plan = design(8, seed=3)
    assert len(plan) == 8 * len(NAMINGS)
    for naming in NAMINGS:
        mine = [t for t in plan if t.naming == naming]
        assert [t.voter for t in mine] == [0, 1, 2, 3, 0, 1, 2, 3]
        assert all(t.voter not in t.options and sorted(t.speaking) == [0, 1, 2, 3] for t in mine)
    assert design(8, seed=3) == plan and design(8, seed=4) != plan


def test_shares_counted_by_hand() -> None:
    trials = [Trial("method 1", 0, (0, 1, 2, 3), (1, 2, 3)), Trial("method 1", 1, (2, 3, 1, 0), (3, 0, 2))]
    # trial 1: A=seat 1 gets 0.5, B=seat 2 0.5; trial 2: A=seat 3 gets 1.0
    res = tally(trials, [[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]], "llm:x", 2)
    assert [res.option["method 1"].mean(i) for i in range(3)] == [75.0, 25.0, 0.0]
    # speaking position: trial 1 positions are seats 0,1,2,3 -> 0,50,50,0; trial 2 seats 2,3,1,0 -> 0,100,0,0
    assert [res.speaking["method 1"].mean(i) for i in range(4)] == [0.0, 75.0, 25.0, 0.0]
    assert [res.name["method 1"].mean(i) for i in range(4)] == [0.0, 25.0, 25.0, 50.0]
    assert res.option["method 1"].half_width(0) == pytest.approx(1.96 * math.sqrt(1250 / 2))


async def test_a_voter_for_the_first_option_and_a_voter_for_one_name() -> None:
    first = await measure(Voter(), "llm:scripted", trials=8, seed=1)
    for naming in NAMINGS:
        assert [first.option[naming].mean(i) for i in range(3)] == [100.0, 0.0, 0.0]
        assert sum(first.speaking[naming].mean(i) for i in range(SEATS)) == pytest.approx(100.0)
    fan = await measure(Voter(target=0), "llm:scripted", trials=8, seed=1)
    for naming in NAMINGS:
        # seat 0 is among the options whenever it is not the voter: 6 of 8 questions, all of the vote
        assert fan.name[naming].mean(0) == pytest.approx(75.0)
        assert fan.name[naming].mean(1) + fan.name[naming].mean(2) + fan.name[naming].mean(3) == pytest.approx(25.0)
    text = render(fan)
    assert "8 content-free vote questions per naming method" in text and "Charlie Three" in text
    assert "paper" in text and "chance 33.3" in text


async def test_failed_questions_are_counted_and_left_out() -> None:
    res = await measure(Voter(fail_every=4), "llm:scripted", trials=4, seed=0)
    assert res.failures == 3
    assert sum(len(s.per[0]) for s in res.option.values()) == 4 * len(NAMINGS) - 3
    assert "3 questions failed (left out)" in render(res)


async def test_the_tiny_llama_answers_every_question(client: Any) -> None:  # noqa: F811
    res = await measure(client, "llm:tiny", trials=4, seed=0)
    assert res.failures == 0
    for naming in NAMINGS:
        assert sum(res.option[naming].mean(i) for i in range(3)) == pytest.approx(100.0, abs=1e-3)


def test_the_command_is_spygame_bias_and_refuses_a_model_that_is_not_a_language_model() -> None:
    from typer.testing import CliRunner

    from bot.cli import app

    r = CliRunner().invoke(app, ["spygame", "bias", "--agent", "embed:minilm"])
    assert r.exit_code == 2 and "embed:minilm is not a language model" in r.output

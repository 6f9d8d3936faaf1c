"""OpenAIInference against a local OpenAI-compatible server (tests/models/fake_openai.py)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest

from models.types import GenerateRequest, InferenceError, Message, ScoreRequest, ScoringMode
from models.worker.openai_backend import (
    OpenAIInference,
    label_logprobs,
    parse_openai_spec,
)
from tests.models.fake_openai import FakeOpenAI, toy_tokens

MSGS = (Message("system", "You play Decrypto."), Message("user", "Which code? Answer A, B or C."))


@pytest.fixture
async def fake() -> AsyncIterator[FakeOpenAI]:
    f = await FakeOpenAI().start()
    yield f
    await f.close()


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[OpenAIInference]:
    c = OpenAIInference(fake.base_url, "fake-vllm", timeout_s=5)
    yield c
    await c.aclose()


def test_parse_spec() -> None:
    s = parse_openai_spec("llm:openai:http://gpu1:8000/v1#Qwen/Qwen2.5-7B-Instruct")
    assert (s.base_url, s.model) == ("http://gpu1:8000/v1", "Qwen/Qwen2.5-7B-Instruct")
    assert parse_openai_spec("openai:https://x/v1/#m").base_url == "https://x/v1"
    with pytest.raises(ValueError, match="model name"):
        parse_openai_spec("llm:openai:http://gpu1:8000/v1")
    with pytest.raises(ValueError, match="http"):
        parse_openai_spec("llm:openai:gpu1:8000#m")


async def test_generate_sends_params_and_reads_usage(fake: FakeOpenAI, client: OpenAIInference) -> None:
    fake.reply = "apple river"
    res = await client.generate(GenerateRequest(MSGS, max_tokens=7, temperature=0.6, stop=("\n",), seed=3))
    assert res.text == "apple river"
    assert res.model == "fake-vllm"
    assert res.completion_tokens == 2
    assert res.prompt_tokens == sum(len(toy_tokens(m.content)) for m in MSGS)
    assert res.cached_tokens == res.prompt_tokens // 2
    kind, body = fake.requests[-1]
    assert kind == "chat"
    assert body["max_tokens"] == 7 and body["temperature"] == 0.6 and body["stop"] == ["\n"] and body["seed"] == 3
    assert body["messages"][1] == {"role": "user", "content": "Which code? Answer A, B or C."}


async def test_score_renormalises_over_found_labels(fake: FakeOpenAI, client: OpenAIInference) -> None:
    # The model spreads mass over non-label tokens too; only A/B/C count, and
    # " A" and "A" are the same answer.
    fake.next_token_logprobs = [("A", math.log(0.3)), (" A", math.log(0.1)), ("B", math.log(0.2)),
                                ("C", math.log(0.1)), ("The", math.log(0.3))]
    res = await client.score_labels(ScoreRequest(MSGS, ("A", "B", "C")))
    assert res.probs == pytest.approx((0.4 / 0.7, 0.2 / 0.7, 0.1 / 0.7))
    assert res.extra["missing_labels"] == []
    assert res.extra["label_mass"] == pytest.approx(0.7)
    _, body = fake.requests[-1]
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and body["logprobs"] is True
    assert body["top_logprobs"] == 20
    assert "allowed_token_ids" not in body


async def test_missing_label_gets_floor_below_every_listed_token(fake: FakeOpenAI) -> None:
    fake.next_token_logprobs = [("A", -0.5), ("B", -1.0), ("x", -2.0), ("y", -3.0)]
    c = OpenAIInference(fake.base_url, "m", max_top_logprobs=3, missing_margin=1.0)
    try:
        res = await c.score_labels(ScoreRequest(MSGS, ("A", "B", "C")))
    finally:
        await c.aclose()
    # Top 3 are A, B, x: "y" is cut, so the floor is min(listed) - margin = -3.0.
    expected = [math.exp(-0.5), math.exp(-1.0), math.exp(-3.0)]
    z = sum(expected)
    assert res.probs == pytest.approx(tuple(e / z for e in expected))
    assert res.extra["missing_labels"] == ["C"]
    assert res.probs[2] < min(res.probs[:2])


async def test_no_label_listed_raises(fake: FakeOpenAI, client: OpenAIInference) -> None:
    fake.next_token_logprobs = [("The", -0.1), ("I", -2.0)]
    with pytest.raises(InferenceError, match="none of the labels"):
        await client.score_labels(ScoreRequest(MSGS, ("A", "B")))


async def test_allowed_token_ids_restrict_the_answer(fake: FakeOpenAI) -> None:
    fake.vocab = {10: "A", 11: "B", 12: "The"}
    fake.next_token_logprobs = [("The", -0.1), ("A", -3.0), ("B", -2.0)]
    c = OpenAIInference(fake.base_url, "m", label_token_ids={"A": 10, "B": 11})
    try:
        res = await c.score_labels(ScoreRequest(MSGS, ("A", "B")))
    finally:
        await c.aclose()
    assert fake.requests[-1][1]["allowed_token_ids"] == [10, 11]
    z = math.exp(-3.0) + math.exp(-2.0)
    assert res.probs == pytest.approx((math.exp(-3.0) / z, math.exp(-2.0) / z))


async def test_loglik_sums_option_tokens_only(fake: FakeOpenAI, client: OpenAIInference) -> None:
    res = await client.score_labels(ScoreRequest(MSGS, ("cat", "big elephant"), mode=ScoringMode.LOGLIK))
    # Toy model: each token costs 0.5 per character; the context is shared, so
    # only " cat" (-1.5) and " big elephant" (-1.5 - 4.0) matter.
    assert res.extra["loglik"] == pytest.approx([-1.5, -5.5])
    z = math.exp(-1.5) + math.exp(-5.5)
    assert res.probs == pytest.approx((math.exp(-1.5) / z, math.exp(-5.5) / z))
    kind, body = fake.requests[-1]
    assert kind == "completions" and body["echo"] is True and len(body["prompt"]) == 2
    assert body["prompt"][0].endswith("Assistant: cat")


async def test_loglik_without_echo_support_raises(fake: FakeOpenAI, client: OpenAIInference) -> None:
    fake.supports_echo = False
    with pytest.raises(InferenceError, match="loglik"):
        await client.score_labels(ScoreRequest(MSGS, ("cat", "dog"), mode=ScoringMode.LOGLIK))


async def test_server_errors_and_unreachable_raise_inference_error(fake: FakeOpenAI, client: OpenAIInference) -> None:
    fake.fail_next = 1
    with pytest.raises(InferenceError, match="500"):
        await client.generate(GenerateRequest(MSGS))
    dead = OpenAIInference("http://127.0.0.1:9/v1", "m", timeout_s=2)
    try:
        with pytest.raises(InferenceError, match="unreachable"):
            await dead.generate(GenerateRequest(MSGS))
    finally:
        await dead.aclose()


def test_label_logprobs_refuses_labels_equal_after_stripping() -> None:
    with pytest.raises(ValueError, match="distinct"):
        label_logprobs(("A", " A"), [("A", -1.0)])

"""The batcher: batching, order, failure isolation, cancellation, budgets, and the real backend behind it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest

from models.types import GenerateRequest, GenerateResult, InferenceError, Message, ScoreRequest, ScoreResult
from models.worker.batcher import Batcher
from models.worker.transformers_backend import TransformersBackend


def msg(text: str) -> tuple[Message, ...]:
    return (Message("user", text),)


class RecordingBackend:
    """A Backend test double: echoes each request's text, records every batch it is handed.

    A request whose text contains "boom" makes the whole batch call raise; "bad"
    fails only that request (an Exception in the result list). ``gate`` blocks
    each batch until the test opens it.
    """

    model_id = "recording"

    def __init__(self, *, wrong_count: bool = False) -> None:
        self.batches: list[tuple[str, list[str]]] = []
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.wrong_count = wrong_count
        self.closed = False

    def count_tokens(self, messages: Sequence[Message]) -> int:
        return len(messages[-1].content)

    def _run(self, kind: str, reqs) -> list:
        texts = [r.messages[-1].content for r in reqs]
        self.batches.append((kind, texts))
        self.entered.set()
        assert self.gate.wait(5)
        if any("boom" in t for t in texts):
            raise RuntimeError("batch exploded")
        return texts

    def generate_batch(self, reqs: Sequence[GenerateRequest]) -> list[GenerateResult | Exception]:
        texts = self._run("generate", reqs)
        out: list[GenerateResult | Exception] = [
            ValueError("bad request") if "bad" in t else GenerateResult(text=t.upper(), model=self.model_id, prompt_tokens=len(t), completion_tokens=1)
            for t in texts
        ]
        return out[:-1] if self.wrong_count and len(out) > 1 else out

    def score_batch(self, reqs: Sequence[ScoreRequest]) -> list[ScoreResult | Exception]:
        texts = self._run("score", reqs)
        return [ScoreResult(probs=(len(t) / 100.0,), model=self.model_id, prompt_tokens=len(t), cached_tokens=1) for t in texts]

    def close(self) -> None:
        self.closed = True


async def test_concurrent_requests_are_batched_and_answered_in_order():
    be = RecordingBackend()
    b = Batcher(be, max_batch=8, max_wait_s=0.05)
    texts = [f"req{'x' * (i * 3 % 7)}{i}" for i in range(6)]
    results = await asyncio.gather(*(b.generate(GenerateRequest(msg(t))) for t in texts))
    assert [r.text for r in results] == [t.upper() for t in texts]
    assert len(be.batches) == 1
    kind, seen = be.batches[0]
    assert kind == "generate" and sorted(seen) == sorted(texts)
    assert [len(s) for s in seen] == sorted((len(t) for t in texts), reverse=True)  # longest first
    assert b.stats.batch_size.count == 1 and b.stats.requests["generate"] == 6
    assert all(r.latency_s > 0 for r in results)
    await b.aclose()
    assert be.closed


async def test_max_batch_and_token_budget_split_batches():
    be = RecordingBackend()
    b = Batcher(be, max_batch=3, max_wait_s=0.05, token_budget=10_000)
    await asyncio.gather(*(b.score_labels(ScoreRequest(msg(f"q{i}"), ("A",))) for i in range(7)))
    assert [len(s) for _, s in be.batches] == [3, 3, 1]
    be2 = RecordingBackend()
    b2 = Batcher(be2, max_batch=8, max_wait_s=0.05, token_budget=25)
    await asyncio.gather(*(b2.score_labels(ScoreRequest(msg("y" * 10), ("A",))) for _ in range(5)))
    assert [len(s) for _, s in be2.batches] == [2, 2, 1]
    await b.aclose()
    await b2.aclose()


async def test_generate_and_score_are_batched_separately():
    be = RecordingBackend()
    b = Batcher(be, max_wait_s=0.05)
    gens = [b.generate(GenerateRequest(msg(f"g{i}"))) for i in range(3)]
    scores = [b.score_labels(ScoreRequest(msg(f"s{i}"), ("A", "B"))) for i in range(3)]
    out = await asyncio.gather(*gens, *scores)
    assert all(isinstance(r, GenerateResult) for r in out[:3]) and all(isinstance(r, ScoreResult) for r in out[3:])
    assert {k for k, _ in be.batches} == {"generate", "score"}
    for kind, seen in be.batches:
        assert all(t.startswith(kind[0]) for t in seen)
    await b.aclose()


async def test_a_failing_request_does_not_fail_its_batch():
    be = RecordingBackend()
    b = Batcher(be, max_wait_s=0.05)
    texts = ["fine1", "boom", "fine2", "bad one", "fine3"]
    out = await asyncio.gather(*(b.generate(GenerateRequest(msg(t))) for t in texts), return_exceptions=True)
    assert [r.text for r in (out[0], out[2], out[4])] == ["FINE1", "FINE2", "FINE3"]
    assert isinstance(out[1], InferenceError) and "batch exploded" in str(out[1])
    assert isinstance(out[3], ValueError)
    assert b.stats.retried_batches == 1 and b.stats.errors["generate"] == 2
    await b.aclose()


async def test_wrong_result_count_is_caught():
    be = RecordingBackend(wrong_count=True)
    b = Batcher(be, max_wait_s=0.05)
    out = await asyncio.gather(*(b.generate(GenerateRequest(msg(f"r{i}"))) for i in range(3)))
    # The short batch is retried one request at a time, where the double answers correctly.
    assert sorted(r.text for r in out) == ["R0", "R1", "R2"]
    assert b.stats.retried_batches == 1
    await b.aclose()


async def test_cancelled_requests_are_dropped_and_loop_stays_responsive():
    be = RecordingBackend()
    be.gate.clear()
    b = Batcher(be, max_batch=1, max_wait_s=0.0)
    first = asyncio.create_task(b.generate(GenerateRequest(msg("first"))))
    await asyncio.to_thread(be.entered.wait, 5)
    # The backend is busy in its thread; the loop keeps running other tasks.
    ticks = 0
    for _ in range(5):
        await asyncio.sleep(0.001)
        ticks += 1
    assert ticks == 5
    gone = asyncio.create_task(b.generate(GenerateRequest(msg("gone"))))
    kept = asyncio.create_task(b.generate(GenerateRequest(msg("kept"))))
    await asyncio.sleep(0.01)
    gone.cancel()
    be.gate.set()
    assert (await first).text == "FIRST"
    assert (await kept).text == "KEPT"
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert all("gone" not in texts for _, texts in be.batches)
    assert b.stats.cancelled == 1 and b.stats.queue_depth == 0
    await b.aclose()


async def test_aclose_fails_queued_requests():
    be = RecordingBackend()
    be.gate.clear()
    b = Batcher(be, max_batch=1, max_wait_s=0.0)
    t1 = asyncio.create_task(b.generate(GenerateRequest(msg("one"))))
    await asyncio.to_thread(be.entered.wait, 5)
    t2 = asyncio.create_task(b.generate(GenerateRequest(msg("two"))))
    await asyncio.sleep(0.01)
    closing = asyncio.create_task(b.aclose())
    await asyncio.sleep(0.01)
    be.gate.set()
    await closing
    for t in (t1, t2):
        with pytest.raises(InferenceError):
            await t
    with pytest.raises(InferenceError):
        await b.generate(GenerateRequest(msg("late")))


async def test_real_backend_behind_the_batcher_matches_direct_calls(tiny_model, tiny_tokenizer):
    rules = "Chameleon rules: everyone but the chameleon knows the secret word; give one related word. " * 2
    reqs = [
        ScoreRequest((Message("system", rules), Message("user", f"Which word is the secret? A) sun B) moon C) star, round {i}")), ("A", "B", "C"))
        for i in range(6)
    ]
    direct = TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny", prefix_cache=False).score_batch(reqs)
    b = Batcher(TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny", min_prefix_tokens=8), max_batch=4, max_wait_s=0.02)
    first = await b.score_labels(reqs[0])  # stores the rules prefix
    rest = await asyncio.gather(*(b.score_labels(r) for r in reqs[1:]))
    for got, want in zip([first, *rest], direct, strict=False):
        assert isinstance(want, ScoreResult)
        assert got.probs == pytest.approx(want.probs, abs=1e-4)
    assert all(r.cached_tokens > 0 for r in rest)
    assert b.stats.cached_tokens == sum(r.cached_tokens for r in rest)
    gen = await b.generate(GenerateRequest(reqs[0].messages, max_tokens=4))
    assert gen.completion_tokens > 0 and b.stats.completion_tokens == gen.completion_tokens
    assert b.model_id == "tiny"
    await b.aclose()

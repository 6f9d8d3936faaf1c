"""Turns many concurrent inference calls into batches for one synchronous Backend.

``Batcher`` implements the ``Inference`` protocol over any ``Backend``. One
asyncio task owns the backend: requests wait in a queue with a future each; the
task flushes a batch when it is full (``max_batch``), when its oldest request
has waited ``max_wait_s``, or when the batch would pass ``token_budget``
(prompt tokens, plus ``max_tokens`` for generation). Generate and score
requests are batched separately. Each batch runs in a worker thread
(``asyncio.to_thread``) so the event loop keeps serving chat traffic.

Inside a batch requests are sorted longest-first (less padding) and results
are handed back in request order. Failures stay with their request: a
``ValueError`` (a bad request, e.g. an unscorable label set) reaches its caller
as is; any other backend exception reaches it as ``InferenceError``; if a whole
batch call raises or returns the wrong number of results, its requests are
retried one by one so only the bad one fails. Requests whose caller has gone
away (future cancelled) are dropped before they run.

``latency_s`` in results is end to end: from submission to the answer,
queueing included.
"""

from __future__ import annotations

import asyncio
import bisect
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from models.types import Backend, GenerateRequest, GenerateResult, InferenceError, ScoreRequest, ScoreResult

LATENCY_BUCKETS_S: tuple[float, ...] = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
BATCH_SIZE_BUCKETS: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 64, 128)


class Kind(Enum):
    GENERATE = "generate"
    SCORE = "score"


@dataclass(slots=True)
class Histogram:
    """Cumulative-bucket histogram in the Prometheus sense: counts[i] is observations <= buckets[i]."""

    buckets: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * len(self.buckets)

    def observe(self, value: float) -> None:
        self.total += value
        self.count += 1
        for i in range(bisect.bisect_left(self.buckets, value), len(self.buckets)):
            self.counts[i] += 1

    def to_dict(self) -> dict[str, Any]:
        return {"buckets": list(self.buckets), "counts": list(self.counts), "sum": self.total, "count": self.count}


@dataclass(slots=True)
class BatcherStats:
    """Counters the worker's /metrics renders. Mutated only by the batcher's event loop."""

    queue_depth: int = 0
    requests: dict[str, int] = field(default_factory=lambda: {k.value: 0 for k in Kind})
    errors: dict[str, int] = field(default_factory=lambda: {k.value: 0 for k in Kind})
    cancelled: int = 0
    batches: dict[str, int] = field(default_factory=lambda: {k.value: 0 for k in Kind})
    retried_batches: int = 0
    batch_size: Histogram = field(default_factory=lambda: Histogram(BATCH_SIZE_BUCKETS))
    latency_s: dict[str, Histogram] = field(default_factory=lambda: {k.value: Histogram(LATENCY_BUCKETS_S) for k in Kind})
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    busy_s: float = 0.0  # time the backend spent running batches

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue_depth": self.queue_depth,
            "requests": dict(self.requests),
            "errors": dict(self.errors),
            "cancelled": self.cancelled,
            "batches": dict(self.batches),
            "retried_batches": self.retried_batches,
            "batch_size": self.batch_size.to_dict(),
            "latency_s": {k: h.to_dict() for k, h in self.latency_s.items()},
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "busy_s": self.busy_s,
        }


@dataclass(slots=True)
class _Pending:
    kind: Kind
    req: GenerateRequest | ScoreRequest
    future: asyncio.Future[Any]
    tokens: int
    enqueued: float


class Batcher:
    """The Inference protocol over a synchronous Backend, with batching (see module docstring)."""

    def __init__(
        self,
        backend: Backend,
        *,
        max_batch: int = 8,
        max_wait_s: float = 0.005,
        token_budget: int = 8192,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.backend = backend
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.token_budget = token_budget
        self.stats = BatcherStats()
        self._clock = clock
        self._queues: dict[Kind, deque[_Pending]] = {k: deque() for k in Kind}
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    async def start(self) -> None:
        if self._closed:
            raise InferenceError("batcher is closed")
        if self._task is None:
            self._wake = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="hushtable-batcher")

    async def aclose(self) -> None:
        """Stop the loop, fail queued requests with InferenceError and close the backend."""
        if self._closed:
            return
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        for q in self._queues.values():
            while q:
                p = q.popleft()
                if not p.future.done():
                    p.future.set_exception(InferenceError("inference worker is shutting down"))
        self.stats.queue_depth = 0
        await asyncio.to_thread(self.backend.close)

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        result: GenerateResult = await self._submit(Kind.GENERATE, req, extra_tokens=req.max_tokens)
        return result

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        result: ScoreResult = await self._submit(Kind.SCORE, req, extra_tokens=0)
        return result

    # ------------------------------------------------------------------ internals

    async def _submit(self, kind: Kind, req: GenerateRequest | ScoreRequest, *, extra_tokens: int) -> Any:
        if self._closed:
            raise InferenceError("inference worker is closed")
        await self.start()
        try:
            tokens = self.backend.count_tokens(req.messages) + extra_tokens
        except Exception:  # the backend will report the problem when it runs the request
            tokens = extra_tokens
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queues[kind].append(_Pending(kind, req, fut, tokens, self._clock()))
        self.stats.requests[kind.value] += 1
        self.stats.queue_depth += 1
        assert self._wake is not None
        self._wake.set()
        return await fut

    def _ready(self, q: deque[_Pending]) -> bool:
        if len(q) >= self.max_batch:
            return True
        total = 0
        for p in q:
            total += p.tokens
            if total >= self.token_budget:
                return True
        return False

    async def _run(self) -> None:
        assert self._wake is not None
        while True:
            live = [k for k in Kind if self._queues[k]]
            if not live:
                self._wake.clear()
                await self._wake.wait()
                continue
            # Serve the kind whose oldest request has waited longest.
            kind = min(live, key=lambda k: self._queues[k][0].enqueued)
            q = self._queues[kind]
            deadline = q[0].enqueued + self.max_wait_s
            while not self._ready(q):
                remaining = deadline - self._clock()
                if remaining <= 0:
                    break
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), remaining)
                except TimeoutError:
                    break
            batch = self._take(q)
            if batch:
                await self._run_batch(kind, batch)

    def _take(self, q: deque[_Pending]) -> list[_Pending]:
        batch: list[_Pending] = []
        total = 0
        while q and len(batch) < self.max_batch:
            p = q[0]
            if p.future.done():  # caller gone (cancelled): never run it
                q.popleft()
                self.stats.queue_depth -= 1
                self.stats.cancelled += 1
                continue
            if batch and total + p.tokens > self.token_budget:
                break
            q.popleft()
            self.stats.queue_depth -= 1
            batch.append(p)
            total += p.tokens
        return batch

    def _call(self, kind: Kind) -> Callable[[Sequence[Any]], list[Any]]:
        return self.backend.generate_batch if kind is Kind.GENERATE else self.backend.score_batch

    async def _run_batch(self, kind: Kind, batch: list[_Pending]) -> None:
        # Longest first, so rows of similar length share a padded forward.
        order = sorted(range(len(batch)), key=lambda i: -batch[i].tokens)
        ordered = [batch[i] for i in order]
        call = self._call(kind)
        self.stats.batches[kind.value] += 1
        self.stats.batch_size.observe(len(ordered))
        t0 = time.perf_counter()
        try:
            outs: list[Any] = await asyncio.to_thread(call, [p.req for p in ordered])
            if not isinstance(outs, list) or len(outs) != len(ordered):
                raise InferenceError(f"backend returned {len(outs) if isinstance(outs, list) else type(outs).__name__} results for {len(ordered)} requests")
        except asyncio.CancelledError:
            for p in ordered:
                if not p.future.done():
                    p.future.set_exception(InferenceError("inference worker is shutting down"))
            raise
        except Exception as exc:
            if len(ordered) == 1:
                outs = [exc]
            else:
                # One bad request may have sunk the whole batch: run them singly.
                self.stats.retried_batches += 1
                outs = []
                for p in ordered:
                    if p.future.done():
                        outs.append(None)
                        continue
                    try:
                        single = await asyncio.to_thread(call, [p.req])
                        ok = isinstance(single, list) and len(single) == 1
                        outs.append(single[0] if ok else InferenceError("backend returned a wrong number of results"))
                    except Exception as one_exc:
                        outs.append(one_exc)
        finally:
            self.stats.busy_s += time.perf_counter() - t0
        now = self._clock()
        for p, out in zip(ordered, outs, strict=False):
            self._deliver(p, out, now)

    def _deliver(self, p: _Pending, out: Any, now: float) -> None:
        if p.future.done():
            return
        kind = p.kind.value
        latency = now - p.enqueued
        self.stats.latency_s[kind].observe(latency)
        if isinstance(out, GenerateResult | ScoreResult):
            self.stats.prompt_tokens += out.prompt_tokens
            self.stats.cached_tokens += out.cached_tokens
            if isinstance(out, GenerateResult):
                self.stats.completion_tokens += out.completion_tokens
            p.future.set_result(replace(out, latency_s=latency))
            return
        self.stats.errors[kind] += 1
        if isinstance(out, ValueError | InferenceError):
            p.future.set_exception(out)
        elif isinstance(out, BaseException):
            err = InferenceError(f"{type(out).__name__}: {out}")
            err.__cause__ = out
            p.future.set_exception(err)
        else:
            p.future.set_exception(InferenceError(f"backend returned {type(out).__name__} instead of a result"))

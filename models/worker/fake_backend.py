"""A deterministic stand-in model for tests and demos: no weights, instant answers.

Everything it returns is a pure function of the request (a SHA-256 hash, never
Python's salted ``hash``), so a game played against it replays identically in
another process. Tests can script replies, make chosen requests fail, and add a
delay to exercise timeouts and batching.
"""

from __future__ import annotations

import collections
import hashlib
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence

from models.types import (
    GenerateRequest,
    GenerateResult,
    InferenceError,
    Message,
    ScoreRequest,
    ScoreResult,
    ScoringMode,
)
from models.worker.per_request import Slots

# Plain words with no game meaning, so fake hints never collide with real rules.
WORDS: tuple[str, ...] = (
    "amber", "anchor", "apple", "arrow", "autumn", "badge", "bamboo", "banner",
    "barrel", "beacon", "berry", "blanket", "bridge", "bubble", "cactus", "candle",
    "canyon", "castle", "cedar", "chalk", "cherry", "circle", "cloud", "comet",
    "copper", "coral", "cotton", "crystal", "desert", "dragon", "engine", "falcon",
    "feather", "forest", "fountain", "garden", "glacier", "harbor", "honey", "island",
    "jungle", "kettle", "ladder", "lantern", "lemon", "marble", "meadow", "mirror",
    "needle", "ocean", "orchid", "paper", "pepper", "piano", "pillow", "planet",
    "quartz", "river", "saddle", "silver", "thunder", "tiger", "velvet", "willow",
)

Request = GenerateRequest | ScoreRequest
ScriptedReply = Callable[[GenerateRequest], str]


def _digest(*parts: str) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        # Length-prefix each part so ("ab", "c") and ("a", "bc") hash apart.
        b = p.encode("utf-8")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.digest()


def prompt_key(messages: Sequence[Message]) -> str:
    """A canonical string for a conversation, the input to every fake answer."""
    return "\x1e".join(f"{m.role}\x1f{m.content}" for m in messages)


class FakeBackend:
    """Implements ``Backend`` (models/types.py) without a model.

    ``reply`` scripts generation: a callable ``GenerateRequest -> str``, or an
    iterable of strings consumed in order (the hashed text is used once it runs
    out). ``fail_on`` raises ``InferenceError`` for the requests it selects,
    affecting only those requests in a batch. ``delay_s`` sleeps once per batch
    (the backend runs in the batcher's thread, so blocking here is realistic).
    """

    def __init__(
        self,
        model_id: str = "fake",
        *,
        reply: ScriptedReply | Iterable[str] | None = None,
        fail_on: Callable[[Request], bool] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.model_id = model_id
        self._reply_fn: ScriptedReply | None = None
        self._replies: collections.deque[str] = collections.deque()
        if callable(reply):
            self._reply_fn = reply
        elif reply is not None:
            self._replies.extend(reply)
        self._fail_on = fail_on
        self.delay_s = delay_s
        # Sizes of the batches seen, so tests can check that batching happened.
        self.batch_sizes: list[int] = []
        self.closed = False
        self._lock = threading.Lock()

    # -- Backend protocol -------------------------------------------------

    def count_tokens(self, messages: Sequence[Message]) -> int:
        # Whitespace words plus a few per message for role markers: close
        # enough to a real tokenizer's shape for budget and metrics tests.
        return sum(len(m.content.split()) + 4 for m in messages)

    def generate_batch(self, reqs: Sequence[GenerateRequest]) -> list[GenerateResult | Exception]:
        self._begin_batch(len(reqs))
        slots: Slots[GenerateResult] = Slots(len(reqs))
        slots.each(range(len(reqs)), lambda i: self._generate_one(reqs[i]))
        return slots.results()

    def score_batch(self, reqs: Sequence[ScoreRequest]) -> list[ScoreResult | Exception]:
        self._begin_batch(len(reqs))
        slots: Slots[ScoreResult] = Slots(len(reqs))
        slots.each(range(len(reqs)), lambda i: self._score_one(reqs[i]))
        return slots.results()

    def _generate_one(self, req: GenerateRequest) -> GenerateResult:
        t0 = time.perf_counter()
        self._check(req)
        text = self._text_for(req)
        return GenerateResult(
            text=text,
            model=self.model_id,
            prompt_tokens=self.count_tokens(req.messages),
            completion_tokens=len(text.split()),
            latency_s=time.perf_counter() - t0,
        )

    def _score_one(self, req: ScoreRequest) -> ScoreResult:
        t0 = time.perf_counter()
        self._check(req)
        probs = fake_probs(req.messages, req.labels, req.mode)
        return ScoreResult(probs=probs, model=self.model_id, prompt_tokens=self.count_tokens(req.messages),
                           latency_s=time.perf_counter() - t0)

    def close(self) -> None:
        self.closed = True

    # -- internals --------------------------------------------------------

    def _begin_batch(self, n: int) -> None:
        with self._lock:
            self.batch_sizes.append(n)
        if self.delay_s > 0:
            time.sleep(self.delay_s)

    def _check(self, req: Request) -> None:
        if self._fail_on is not None and self._fail_on(req):
            raise InferenceError("fake backend: failure requested for this request")

    def _text_for(self, req: GenerateRequest) -> str:
        if self._reply_fn is not None:
            text = self._reply_fn(req)
        else:
            with self._lock:
                scripted = self._replies.popleft() if self._replies else None
            text = scripted if scripted is not None else fake_text(req.messages, req.max_tokens, req.seed)
        text = _apply_limits(text, req.max_tokens, req.stop)
        # Like a model continuing a prefilled reply: the reply starts with the prefill.
        return text if text.startswith(req.prefill) else f"{req.prefill} {text}".strip()


def fake_text(messages: Sequence[Message], max_tokens: int = 48, seed: int | None = None) -> str:
    """A short deterministic reply: words from ``WORDS`` picked by hashing the prompt."""
    d = _digest(prompt_key(messages), "" if seed is None else str(seed))
    n = 1 + d[0] % 4
    n = max(1, min(n, max_tokens))
    return " ".join(WORDS[d[1 + i] % len(WORDS)] for i in range(n))


def fake_probs(
    messages: Sequence[Message], labels: Sequence[str], mode: ScoringMode = ScoringMode.FIRST_TOKEN
) -> tuple[float, ...]:
    """Probabilities over ``labels`` from a hash of prompt and label; they sum to 1."""
    if mode not in tuple(ScoringMode):  # a request built from untyped input may carry anything
        raise ValueError(f"unknown scoring mode {mode!r}; use 'first_token' or 'loglik'")
    if not labels:
        raise ValueError("at least one label is needed")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {list(labels)}")
    key = prompt_key(messages)
    # Logits in [-4, 4): spread enough that the argmax is usually clear.
    logits = [int.from_bytes(_digest(key, mode, lab)[:4], "little") / 2**32 * 8 - 4 for lab in labels]
    m = max(logits)
    exps = [math.exp(x - m) for x in logits]
    z = sum(exps)
    return tuple(e / z for e in exps)


def _apply_limits(text: str, max_tokens: int, stop: Sequence[str]) -> str:
    # Mimic a real server: cut at the first stop string, then at max_tokens words.
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
    words = text[:cut].split(" ")
    return " ".join(words[: max(0, max_tokens)])

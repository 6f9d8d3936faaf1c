"""Requests and results that cross the boundary between agents and the inference worker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

_ROUTE: ContextVar[str] = ContextVar("hushtable_inference_route", default="")


def current_route() -> str:
    """The routing key of the work being done now (``routed_by``), or "" outside any."""
    return _ROUTE.get()


@contextmanager
def routed_by(key: str) -> Iterator[None]:
    """Requests made inside this block (by any agent, in any task it starts) carry ``key`` as their
    ``route``: a pool of workers sends every request of one key to the same worker. The bot uses
    the table's id, so one game stays on one worker and different games spread over the pool."""
    token = _ROUTE.set(key)
    try:
        yield
    finally:
        _ROUTE.reset(token)


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str

    def to_json(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


def messages_from_json(raw: Sequence[Any]) -> tuple[Message, ...]:
    out = []
    for m in raw:
        if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant") or not isinstance(m.get("content"), str):
            raise ValueError("each message is {'role': 'system'|'user'|'assistant', 'content': str}")
        out.append(Message(m["role"], m["content"]))
    if not out:
        raise ValueError("at least one message is needed")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class GenerateRequest:
    messages: tuple[Message, ...]
    max_tokens: int = 48
    temperature: float = 0.0
    stop: tuple[str, ...] = ()
    seed: int | None = None
    prefill: str = ""
    """The reply starts with this text (e.g. ``"ANSWER:"``), so a small model only continues it.
    Backends that can honour it return it as the start of ``GenerateResult.text``; the
    OpenAI-compatible backend cannot, and returns the model's whole reply instead."""
    route: str = field(default_factory=current_route)
    """Which worker of a pool answers: the table's id while an AI seat decides (``routed_by``);
    "" routes by the start of the conversation. It changes no answer."""


@dataclass(frozen=True, slots=True)
class GenerateResult:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached_tokens: int = 0


class ScoringMode(StrEnum):
    """How answer labels are scored: the first token's logits, or each option's summed log-likelihood."""

    FIRST_TOKEN = "first_token"
    LOGLIK = "loglik"


@dataclass(frozen=True, slots=True)
class ScoreRequest:
    """Probabilities over answer labels for the reply that follows ``messages``.

    Single-token labels (A, B, C...) are scored from the first-token logits;
    ``mode="loglik"`` scores whole options by summed log-likelihood instead.
    """

    messages: tuple[Message, ...]
    labels: tuple[str, ...]
    mode: ScoringMode = ScoringMode.FIRST_TOKEN
    route: str = field(default_factory=current_route)  # as GenerateRequest.route


@dataclass(frozen=True, slots=True)
class ScoreResult:
    probs: tuple[float, ...]
    model: str
    prompt_tokens: int = 0
    latency_s: float = 0.0
    cached_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class InferenceError(RuntimeError):
    """The worker could not answer (down, overloaded, bad request). Callers fall back."""


class WorkerUnavailable(InferenceError):
    """A worker could not answer at all (unreachable, timed out, 5xx): another worker of the same model may."""


@runtime_checkable
class Inference(Protocol):
    """What agents talk to: an in-process batcher, an HTTP client, or an OpenAI-compatible server."""

    @property
    def model_id(self) -> str: ...  # read-only here: a batcher reports its backend's

    async def generate(self, req: GenerateRequest) -> GenerateResult: ...

    async def score_labels(self, req: ScoreRequest) -> ScoreResult: ...

    async def aclose(self) -> None: ...


class Backend(Protocol):
    """A model that runs batches synchronously; one batcher task owns it (models/worker/batcher.py)."""

    model_id: str

    def count_tokens(self, messages: Sequence[Message]) -> int: ...

    def generate_batch(self, reqs: Sequence[GenerateRequest]) -> list[GenerateResult | Exception]: ...

    def score_batch(self, reqs: Sequence[ScoreRequest]) -> list[ScoreResult | Exception]: ...

    def close(self) -> None: ...

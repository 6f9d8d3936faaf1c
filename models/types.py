"""Requests and results that cross the boundary between agents and the inference worker."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


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

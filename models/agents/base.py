"""What an AI seat is: a Player that maps (Observation, ActionSpec) to an action, and logs its calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from games.base import Action, ActionSpec, Observation


@dataclass(frozen=True, slots=True)
class CallLog:
    """One call an agent made to a model (or none, for rule-based agents), for the agent_calls log."""

    agent_spec: str
    model_id: str = ""
    operation: str = "none"  # "generate" | "score" | "embed" | "none"
    prompt: Any = None  # JSON-able: chat messages, labels, options
    raw_output: str = ""
    label_probs: Any = None  # JSON-able: {label or option: probability}
    latency_ms: float = 0.0
    retries: int = 0
    fallback: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    calls: tuple[CallLog, ...] = field(default_factory=tuple)


@runtime_checkable
class Player(Protocol):
    """An AI seat. ``feedback`` is the readable reason the previous answer was refused, if any."""

    spec: str

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None) -> Decision: ...

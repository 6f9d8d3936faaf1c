"""What an AI seat is: a Player that maps (Observation, ActionSpec) to an action, and logs its calls."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from games.base import Action, ActionSpec, Observation

Check = Callable[[Action], str | None]
"""The rules' verdict on an action before it is sent: None when the engine would accept it, else its
reason. The table builds it from the pure engine and the current state, so an agent can filter its
candidates without seeing anything its Observation does not hold."""


@dataclass(frozen=True, slots=True)
class CallLog:
    """One call an agent made to a model (or none, for rule-based agents), for the agent_calls log."""

    agent_spec: str
    model_id: str = ""
    operation: str = "none"  # "generate" | "score" | "embed" | "none"
    prompt: Any = None  # JSON-able: chat messages, labels, options
    raw_output: str = ""
    label_probs: Any = None  # JSON-able: {label or option: probability}
    latency_ms: float = 0.0  # this call's own time; the move's total is Outcome.latency_ms, recorded once
    retries: int = 0  # the attempt this call belongs to within the move (0 = the first answer)
    fallback: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Decision:
    action: Action
    calls: tuple[CallLog, ...] = field(default_factory=tuple)


@runtime_checkable
class Player(Protocol):
    """An AI seat.

    ``feedback`` is the readable reason the previous answer was refused, if any; ``attempt``
    counts the answers already given for this move (a re-ask continues it, so the agent
    draws something new); ``check`` tells whether the rules accept an action now."""

    spec: str

    async def act(
        self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0, check: Check | None = None
    ) -> Decision: ...

"""What an AI seat is: a Player that maps (Observation, ActionSpec) to an action, and logs its calls."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from games.base import Action, ActionSpec, Event, Observation, rng

Check = Callable[[Action], str | None]
"""The rules' verdict on an action before it is sent: None when the engine would accept it, else its
reason. The table builds it from the pure engine and the current state, so an agent can filter its
candidates without seeing anything its Observation does not hold."""


# What a notice that another seat has moved may hold besides that seat: where in the game it is, never the move.
_WHERE = frozenset({"round", "ballot", "stage", "card", "team", "turn"})
_MOVER = ("seat", "voter")


def _another_moved(event: Event, seat: int) -> bool:
    """Whether ``event`` only says that another seat has moved ("Ben has voted", "a clue is in")."""
    movers = [event.data[k] for k in _MOVER if k in event.data]
    return bool(movers) and set(event.data) <= _WHERE | set(_MOVER) and all(m != seat for m in movers)


def settled_events(obs: Observation) -> int:
    """How far the game has gone for this seat, leaving out notices that others have moved: in a step all
    seats take at once (a vote, Just One's clues) those land before or after this seat's turn by timing
    alone, and counting them would make the same deal play out differently from one run to the next."""
    return sum(1 for e in obs.events if not _another_moved(e, obs.seat))


def turn_rng(seed: int, obs: Observation, purpose: str, attempt: int) -> random.Random:
    """An agent's draw for ``purpose`` from its seed, the turn and the attempt: a re-ask draws anew, a replay
    the same, and so does a game started again from its seed whichever simultaneous move the table took first."""
    return rng(seed, purpose, obs.game, obs.seat, settled_events(obs), obs.phase, attempt)


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


class Source(StrEnum):
    """Where a move came from."""

    MODEL = "model"  # the language model's answer (alone, or it changed the specialist's pick)
    SPECIALIST = "specialist"  # embedding evidence or search (the model, if asked, agreed or was not asked)
    FALLBACK = "fallback"  # the agent failed or gave no legal answer: the table's fallback agent played
    RANDOM = "random"  # a seeded random draw (the random player)
    RULES = "rules"  # nothing to decide (one option), or the rules' neutral action


@dataclass(frozen=True, slots=True)
class Decision:
    """An agent's action, its calls, and where it came from.

    ``model_share`` is the model's part in the decision, from 0 (the model was not asked or
    could not move it) to 1 (the model alone): for a choice, the share of the model's
    log-probability margin in the final margin between the pick and the runner-up.
    ``deadline_hit`` says the move reached its wall-clock deadline and ``source`` played
    instead of the model's answer."""

    action: Action
    calls: tuple[CallLog, ...] = field(default_factory=tuple)
    source: Source = Source.SPECIALIST
    model_share: float = 0.0
    deadline_hit: bool = False


class AnswerRefused(ValueError):
    """The agent gave no acceptable answer within its retries; the runner falls back.

    ``calls`` keeps every attempt (prompt, raw output, reason) for the agent-call log."""

    def __init__(self, message: str, calls: Sequence[CallLog] = ()) -> None:
        super().__init__(message)
        self.calls = tuple(calls)


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

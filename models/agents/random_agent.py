"""The random player: uniform over offered options, filler words for text. Deterministic per seat and turn."""

from __future__ import annotations

import zlib

from games.base import ActionSpec, Observation, rng
from games.play import random_action
from models.agents.base import CallLog, Decision


class RandomAgent:
    def __init__(self, spec: str = "random", seed: int = 0) -> None:
        self.spec = spec
        self.seed = seed

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None) -> Decision:
        # Same observation, same answer: a resumed game replays the same choices.
        attempt = 0 if feedback is None else zlib.crc32(feedback.encode())
        r = rng(self.seed, "random-agent", obs.game, obs.seat, len(obs.events), obs.phase, attempt)
        action = random_action(spec, r)
        return Decision(action, (CallLog(self.spec, operation="none", raw_output=" | ".join(action.value)),))

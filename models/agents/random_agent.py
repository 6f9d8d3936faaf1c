"""The random player: uniform over offered options, filler words for text. Deterministic per seat, turn and attempt.

Each attempt of a move draws afresh (the attempt number is part of the seed), so a
re-ask after a refusal never repeats the refused answer for the same reason. Given
the rules' ``check``, it keeps drawing until the rules accept an answer: every option
of a choice in a shuffled order, then for text random filler, then single words of
the baseline vocabulary. That makes it the table's last resort.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator

from games.base import Action, ActionSpec, Choice, Observation, Text
from games.play import FILLER, random_action
from models.agents.base import CallLog, Check, Decision, Source, turn_rng

DRAWS = 64  # random texts tried before the word list is walked
class RandomAgent:
    def __init__(self, spec: str = "random", seed: int = 0) -> None:
        self.spec = spec
        self.seed = seed

    async def act(
        self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0, check: Check | None = None
    ) -> Decision:
        started = time.perf_counter()
        # Same observation and attempt, same answer: a resumed game replays the same choices, and so does
        # a game started again from its seed, whichever simultaneous move the table took first.
        r = turn_rng(self.seed, obs, "random-agent", attempt)
        action = random_action(spec, r)
        tried = 1
        if check is not None and check(action) is not None:
            for candidate in self._candidates(spec, r):
                tried += 1
                if check(candidate) is None:
                    action = candidate
                    break
        log = CallLog(self.spec, operation="none", raw_output=" | ".join(action.value), retries=attempt,
                      latency_ms=(time.perf_counter() - started) * 1000, label_probs={"candidates_tried": tried})
        return Decision(action, (log,), Source.RANDOM)

    @staticmethod
    def _candidates(spec: ActionSpec, r: random.Random) -> Iterator[Action]:
        if isinstance(spec, Choice):
            options = list(spec.options)
            r.shuffle(options)
            yield from (Action.choose(spec.kind, o.id) for o in options)
            return
        assert isinstance(spec, Text)
        for _ in range(DRAWS):
            yield random_action(spec, r)
        from models.embeddings import default_vocab

        words = [w for w in (*FILLER, *default_vocab()) if len(w) <= spec.max_chars and " " not in w]
        r.shuffle(words)
        n = len(spec.fields)
        for i in range(0, len(words) - n + 1, n):
            yield Action.say(spec.kind, *words[i : i + n])

"""The word-embedding baselines for every role of every game (``embed:minilm?k=16``).

Each game's moves live in its agent module (``models/agents/games/<game>.py``,
``GameAgent.baseline``: the Decrypto paper's appendix D for Decrypto, the same
nearest-word idea for Who-is-Spy and the Chameleon). This module is the Player that
runs them, off the event loop, and logs each move.

Every draw comes from the agent's seed, the game, the seat and the turn, so a replayed
game replays the same answers.
"""

from __future__ import annotations

import asyncio
import random
import time

from games.base import Action, ActionSpec, Choice, Observation
from models.agents import wordsense
from models.agents.base import CallLog, Check, Decision, Source, turn_rng
from models.agents.games import game_agent
from models.agents.games.decrypto import code_scores, decrypto_decode, decrypto_hints, decrypto_intercept
from models.agents.games.kit import Baseline
from models.agents.games.spy import spy_target
from models.embeddings import DEFAULT_K, Embedder, Pick, VocabIndex, fits, mean_vec, overlaps, sample_top_k, unit_vec


class EmbeddingAgent:
    """A Player for every role of every game that has an agent module, on word embeddings."""

    def __init__(self, index: VocabIndex, *, seed: int = 0, k: int = DEFAULT_K, spec: str = "embed:minilm") -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.spec = spec
        self.index = index
        self.seed = seed
        self.k = k

    def warm(self) -> None:
        """Embed the vocabulary now, and read WordNet, so that no move's time includes them."""
        self.index.warm()
        wordsense.warm()

    async def act(
        self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0, check: Check | None = None
    ) -> Decision:
        started = time.perf_counter()
        # Embedding is CPU work: keep it off the event loop the bot's platforms share.
        action, note = await asyncio.to_thread(self.decide, obs, spec, attempt)
        log = CallLog(
            self.spec,
            model_id=self.index.embedder.model_id,
            operation="embed",
            prompt={"game": obs.game, "phase": obs.phase, "kind": spec.kind, "feedback": feedback, "attempt": attempt},
            raw_output=" | ".join(action.value),
            label_probs=note or None,
            latency_ms=(time.perf_counter() - started) * 1000,
            retries=attempt,
        )
        return Decision(action, (log,), Source.SPECIALIST)

    def _rng(self, obs: Observation, attempt: int) -> random.Random:
        # The attempt is in the seed: a re-ask after a refusal draws another answer.
        return turn_rng(self.seed, obs, "embed-agent", attempt)

    def decide(self, obs: Observation, spec: ActionSpec, attempt: int = 0) -> tuple[Action, dict[str, float]]:
        """The action and, for choices, the score of each option (logged in place of label probabilities)."""
        r = self._rng(obs, attempt)
        if isinstance(spec, Choice) and len(spec.options) == 1:
            return Action.choose(spec.kind, spec.options[0].id), {}
        move = game_agent(obs.game).baseline.get(spec.kind)
        if move is None:
            raise ValueError(f"the embedding baseline does not play {obs.game}/{spec.kind}")
        return move(Baseline(self.index, self.k), obs, spec, r)


__all__ = [
    # Kept here for the SNEAK evaluation until it imports models.embeddings directly.
    "DEFAULT_K",
    "Embedder",
    "EmbeddingAgent",
    "Pick",
    "VocabIndex",
    "code_scores",
    "decrypto_decode",
    "decrypto_hints",
    "decrypto_intercept",
    "fits",
    "mean_vec",
    "overlaps",
    "sample_top_k",
    "spy_target",
    "unit_vec",
]

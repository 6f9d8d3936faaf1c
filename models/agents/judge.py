"""How good a clue is, the SNEAK way: utility for the allies against leakage to the adversary.

``EmbeddingJudge`` estimates SNEAK's numbers with cosine similarities of the bundled
embedding model in place of an evaluator model's label scores:

- ally (knows the secret ``w``): sees the clue among decoys made without the secret
  (for the card words nearest the secret, each one's nearest vocabulary word off the
  card); ``p_ally`` is the softmax over ``sim(message, w) / TAU`` at the clue;
- chameleon (does not know ``w``): ``p_cham`` is the softmax over the card words of
  ``sim(clue, word) / TAU`` at ``w``;
- Utility = max(0, (p_ally - 1/|M|) / (1 - 1/|M|)), Leakage = max(0, (p_cham - 1/|W|) / (1 - 1/|W|)),
  SoftScore = Utility * (1 - Leakage) (the paper's definitions).

``SneakJudge`` is the same three numbers by the SNEAK evaluation's bundled embedding
evaluator (``models/eval``: category-level decoys, calibrated temperatures); the
strategy ranks clues by it when it is there (``judge=sneak``, the default) and by
``EmbeddingJudge`` otherwise (``judge=own``). It is the agents' only use of
``models/eval``, imported when first built, so the evaluation never depends on the agents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import numpy as np

from games.base import normalize
from models.embeddings import Embedder, VocabIndex, overlaps

if TYPE_CHECKING:  # models/eval is imported when a SNEAK judge is first made: a tree may go without it
    from models.eval.evaluators import Judgement
    from models.eval.instances import Instance

TAU = 0.07
"""Temperature of the similarity softmaxes: MiniLM cosines of related words sit ~0.2 above unrelated ones."""
DECOYS = 5


def softmax(xs: Sequence[float], tau: float = TAU) -> list[float]:
    m = max(xs)
    exps = [math.exp((x - m) / tau) for x in xs]
    z = sum(exps)
    return [e / z for e in exps]


def chance_corrected(p: float, n: int) -> float:
    return max(0.0, (p - 1.0 / n) / (1.0 - 1.0 / n)) if n > 1 else 0.0


class Judge(Protocol):
    """SoftScore of a clue for a secret on a card (higher: useful to allies, unhelpful to the adversary)."""

    def soft_score(self, clue: str, secret: str, card: Sequence[str], category: str = "") -> float: ...


class EmbeddingJudge:
    """SNEAK's utility, leakage and SoftScore for a clue, estimated with word embeddings."""

    def __init__(self, index: VocabIndex) -> None:
        self.index = index
        self._decoys = lru_cache(maxsize=256)(self._decoys_for)

    def _decoys_for(self, secret: str, card: tuple[str, ...]) -> tuple[str, ...]:
        """Clues made without the secret: for the card words nearest it, each one's nearest word off the card."""
        others = [w for w in card if normalize(w) != normalize(secret)]
        if not others:
            return ()
        sims = self.index.vecs(others) @ self.index.vec(secret)
        chosen = [others[i] for i in np.argsort(-sims, kind="stable")[:DECOYS]]
        on_card = {normalize(w) for w in card}
        out: list[str] = []
        for w in chosen:
            for i in self.index.ranked(self.index.vec(w))[:64]:
                cand = self.index.words[int(i)]
                if cand not in on_card and cand not in out and not any(overlaps(cand, c) for c in card):
                    out.append(cand)
                    break
        return tuple(out)

    def utility(self, clue: str, secret: str, card: Sequence[str]) -> float:
        messages = [clue, *self._decoys(secret, tuple(card))]
        sims = self.index.vecs(messages) @ self.index.vec(secret)
        return chance_corrected(softmax([float(x) for x in sims])[0], len(messages))

    def leakage(self, clue: str, secret: str, card: Sequence[str]) -> float:
        sims = self.index.vecs(list(card)) @ self.index.vec(clue)
        probs = softmax([float(x) for x in sims])
        at = next((i for i, w in enumerate(card) if normalize(w) == normalize(secret)), None)
        return chance_corrected(probs[at], len(card)) if at is not None else 0.0

    def soft_score(self, clue: str, secret: str, card: Sequence[str], category: str = "") -> float:
        return self.utility(clue, secret, card) * (1.0 - self.leakage(clue, secret, card))


class SyncEvaluator(Protocol):
    """A SNEAK evaluator that judges at once (``models/eval/evaluators.py``: the embedding evaluator)."""

    def ally_now(self, inst: Instance, messages: Sequence[str]) -> Judgement: ...

    def chameleon_now(self, inst: Instance) -> Judgement: ...


class SyncDecoys(Protocol):
    """A decoy pool that answers at once (``models/eval/decoys.py``)."""

    def pool_now(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]: ...


class SneakJudge:
    """A SNEAK evaluator of ``models/eval`` behind the same ``soft_score``: by default its embedding
    evaluator (calibrated temperatures) with category-level embedding decoys; any evaluator that judges
    synchronously (``ally_now``/``chameleon_now``) and any decoy pool (``pool_now``) can be handed in."""

    def __init__(self, embedder: Embedder, *, evaluator: SyncEvaluator | None = None,
                 decoys: SyncDecoys | None = None) -> None:
        from models.eval.decoys import EmbeddingDecoys
        from models.eval.evaluators import EmbeddingEvaluator

        self.evaluator: SyncEvaluator = (evaluator if evaluator is not None
                                         else EmbeddingEvaluator(embedder, f"embed:{embedder.model_id}"))
        self.decoys: SyncDecoys = decoys if decoys is not None else EmbeddingDecoys(embedder)

    def soft_score(self, clue: str, secret: str, card: Sequence[str], category: str = "") -> float:
        from models.eval.decoys import pick
        from models.eval.evaluators import secret_index
        from models.eval.instances import BENCH_GAME, Instance
        from models.eval.metrics import score

        try:
            # A move being weighed, not a logged one: the instance belongs to no game.
            inst = Instance(BENCH_GAME, category, tuple(card), secret, clue)
            chosen = pick(self.decoys.pool_now(category, inst.candidates), clue)
        except ValueError:  # the secret is not on the card, or too few decoys: no estimate
            return 0.0
        ally, cham = self.evaluator.ally_now(inst, (clue, *chosen)), self.evaluator.chameleon_now(inst)
        return score(ally.probs, 0, cham.probs, secret_index(inst)).soft


class JudgeCache:
    """One SNEAK judge per embedding model, kept by whoever owns the embedders (the agents' wiring):
    its decoy vocabulary is embedded once."""

    def __init__(self) -> None:
        self._judges: dict[int, tuple[Embedder, SneakJudge]] = {}

    def __call__(self, embedder: Embedder) -> SneakJudge:
        hit = self._judges.get(id(embedder))
        if hit is None or hit[0] is not embedder:
            hit = self._judges[id(embedder)] = (embedder, SneakJudge(embedder))
        return hit[1]


__all__ = ["DECOYS", "TAU", "EmbeddingJudge", "Judge", "JudgeCache", "SneakJudge", "chance_corrected", "softmax"]

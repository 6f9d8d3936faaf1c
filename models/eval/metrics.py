"""The SNEAK metrics exactly as the paper defines them (section 2.1), and how they are averaged.

For one message and one evaluator:

- Utility = max(0, (p_ally - 1/|M|) / (1 - 1/|M|))
- Leakage = max(0, (p_cham - 1/|W|) / (1 - 1/|W|))
- SoftScore = Utility * (1 - Leakage)
- BinaryScore = 1 when the ally ranks the message first (among the top on a
  tie) and the chameleon does not rank the secret first, else 0.

Reported values are x100. Several evaluators are combined by computing the
four metrics **per evaluator and then averaging** them; SoftScore is never the
product of averaged utility and leakage (the paper's Table 9 row "Body of
Water / Ocean / Salty: U 66.4, L 33.3, SS 33.1, BS 33.3" is only consistent
with the former; tests/eval/test_metrics.py shows the difference).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# Probabilities this close count as the same rank (label scoring in float32).
TIE_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class Scores:
    """The four metrics of one message under one evaluator, each in [0, 1]."""

    utility: float
    leakage: float
    soft: float
    binary: float

    def x100(self) -> dict[str, float]:
        return {"utility": 100 * self.utility, "leakage": 100 * self.leakage, "soft": 100 * self.soft,
                "binary": 100 * self.binary}


def normalised(p: float, n: int) -> float:
    """(p - 1/n) / (1 - 1/n), clipped at 0: 0 at chance, 1 at certainty."""
    if n < 2:
        raise ValueError("normalising needs at least two options")
    if not (0.0 <= p <= 1.0 + TIE_EPS) or math.isnan(p):
        raise ValueError(f"a probability must lie in [0, 1], got {p}")
    return max(0.0, (p - 1.0 / n) / (1.0 - 1.0 / n))


def ranks_first(probs: Sequence[float], index: int) -> bool:
    """True when option ``index`` has the highest probability (ties count as first)."""
    return probs[index] >= max(probs) - TIE_EPS


def score(ally_probs: Sequence[float], gold_message: int, cham_probs: Sequence[float], secret: int) -> Scores:
    """The metrics of one message from the ally's distribution over messages and the chameleon's over words."""
    u = normalised(ally_probs[gold_message], len(ally_probs))
    lk = normalised(cham_probs[secret], len(cham_probs))
    binary = 1.0 if ranks_first(ally_probs, gold_message) and not ranks_first(cham_probs, secret) else 0.0
    return Scores(u, lk, u * (1.0 - lk), binary)


def mean_scores(items: Iterable[Scores]) -> Scores:
    """Plain mean of each metric (over evaluators of one message, or over messages)."""
    xs = list(items)
    if not xs:
        raise ValueError("nothing to average")
    n = len(xs)
    return Scores(sum(s.utility for s in xs) / n, sum(s.leakage for s in xs) / n, sum(s.soft for s in xs) / n,
                  sum(s.binary for s in xs) / n)


def across_evaluators(per_evaluator: Mapping[str, Sequence[Scores]]) -> dict[str, Scores]:
    """Each evaluator's mean over its messages, plus ``"average"``: the mean of those per-evaluator means.

    Every evaluator is expected to have scored the same messages; the average
    weighs evaluators equally, as the paper's tables do.
    """
    out = {name: mean_scores(xs) for name, xs in per_evaluator.items() if xs}
    if out:
        out[AVERAGE] = mean_scores(out.values())
    return out


AVERAGE = "average"

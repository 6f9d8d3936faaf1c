"""The benches' shared statistics: Wilson intervals for shares, a percentile bootstrap for per-deal means and
differences, and the power line (the smallest difference a sample can show)."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z95 = 1.959964
"""Two-sided alpha 0.05."""
Z80 = 0.841621
"""Power 0.8."""


def wilson(k: float, n: int) -> tuple[float, float]:
    """95% Wilson interval of k successes in n."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = k / n
    den = 1 + Z95 ** 2 / n
    mid = (p + Z95 ** 2 / (2 * n)) / den
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


def bootstrap(values: Sequence[float], reps: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean of per-deal values (resampling deals)."""
    if not values:
        return (float("nan"), float("nan"))
    r = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[r.randrange(n)] for _ in range(n)) / n for _ in range(reps))
    return (means[int(0.025 * reps)], means[int(0.975 * reps) - 1])


def detectable(n: int, p: float = 0.3) -> float:
    """Smallest difference of two shares of ``n`` each (around ``p``, held within 0.05-0.95) a two-sided test at
    alpha 0.05 finds with power 0.8."""
    p = min(max(p, 0.05), 0.95)
    return (Z95 + Z80) * math.sqrt(2 * p * (1 - p) / n) if n else float("nan")


def fmt_share(k: int, n: int) -> str:
    lo, hi = wilson(k, n)
    return f"{k / n:4.0%} [{lo:.0%}, {hi:.0%}] (n={n})" if n else "-"


def fmt_diff(values: Sequence[float]) -> str:
    if not values:
        return "-"
    lo, hi = bootstrap(values)
    return f"{100 * sum(values) / len(values):+4.0f} points [{100 * lo:+.0f}, {100 * hi:+.0f}]"


__all__ = ["Z80", "Z95", "bootstrap", "detectable", "fmt_diff", "fmt_share", "wilson"]

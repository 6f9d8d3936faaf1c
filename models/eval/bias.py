"""SNEAK appendix E.2: does an evaluator favour messages written by its own model? (``hushtable sneak bias``)

Messages from two or more generators (``embed:minilm``, ``embed:assoc``, ``llm:...``) are scored by
evaluators built on the same and on other models, on the same instances and decoys as ``sneak bench``.
A generator and an evaluator are "the same model" when their kind and model name agree, parameters
aside (``embed:minilm?k=8`` writes with the model ``embed:minilm?t_cham=0.05`` judges with).

Per evaluator that has a same-model generator, two differences per metric (x100):

- **self - others** (the paper's Figure 8): the evaluator's mean over its own model's messages minus
  its mean over the other generators' messages. This mixes self-preference with how good the
  generators are: a better generator scores higher under every evaluator.
- **beyond the others' view** (a difference in differences): that gap minus the same gap as the other
  evaluators see it (their mean). A generator's quality is in both terms and cancels; what remains is
  how much more this evaluator likes its own model's messages than the other evaluators do.

Each comes with a 95% percentile bootstrap interval over instances (the (card, secret) pairs resampled
with replacement, every message of an instance together, ``games.base.rng``-seeded numpy draws), so
the interval covers the instance-to-instance spread. The paper gives no numbers for E.2 (Figure 8
only): "differences are small and inconsistent across evaluators and metrics".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from games.base import rng
from models.eval.evaluators import fingerprint
from models.eval.generators import generator_kind
from models.eval.score import Evaluation
from models.eval.summary import METRICS

BOOTSTRAP = 2000
PAPER_E2 = ("The paper (App. E.2, Figure 8; no numbers in its text): self- and cross-model scores differ little and "
            "not in one direction, 'no systematic same-model bias'.")


def generator_model(spec: str) -> str:
    """The model a generator writes with: ``kind:name`` without parameters."""
    kind, arg, _ = generator_kind(spec)
    return f"{kind}:{arg or ('minilm' if kind == 'embed' else 'default')}"


def evaluator_model(spec: str) -> str:
    """The model an evaluator judges with: ``kind:name`` without parameters."""
    fp = fingerprint(spec)
    return f"{fp['kind']}:{fp['model']}"


@dataclass(frozen=True, slots=True)
class Cell:
    """One generator under one evaluator: the mean of each metric (x100) and how many messages."""

    generator: str
    evaluator: str
    same: bool
    means: dict[str, float]
    n: int
    failures: int


@dataclass(frozen=True, slots=True)
class Difference:
    """A difference of means (x100) with its 95% bootstrap interval."""

    value: float
    low: float
    high: float

    def text(self) -> str:
        return f"{self.value:+7.2f} [{self.low:+7.2f}, {self.high:+7.2f}]"


@dataclass(frozen=True, slots=True)
class EvaluatorBias:
    evaluator: str
    own: str  # the same-model generator
    self_minus_others: dict[str, Difference]
    beyond_others: dict[str, Difference] | None  # None: one evaluator only, nothing to compare with


@dataclass(frozen=True, slots=True)
class Bias:
    generators: list[str]
    evaluators: list[str]
    cells: list[Cell]
    per_evaluator: list[EvaluatorBias]
    pooled: dict[str, Difference] | None  # beyond_others averaged over the evaluators with an own generator
    instances: int
    unpaired: list[str]  # evaluators without a same-model generator


def _own(evaluator: str, generators: Sequence[str]) -> str | None:
    model = evaluator_model(evaluator)
    return next((g for g in generators if generator_model(g) == model), None)


def bias(evals: Sequence[Evaluation], generators: Sequence[str], evaluators: Sequence[str], *, seed: int = 0,
         rounds: int = BOOTSTRAP) -> Bias:
    """The per-pair table and the same-model differences; ``evals`` may hold other methods (left aside)."""
    keys = sorted({(e.instance.category, e.instance.secret) for e in evals if e.instance.role in generators})
    at = {k: i for i, k in enumerate(keys)}
    g_at = {g: i for i, g in enumerate(generators)}
    e_at = {e: i for i, e in enumerate(evaluators)}
    # (metric, instance, generator, evaluator) -> score x100; nan where there is no message or the judgement failed
    x = np.full((len(METRICS), len(keys), len(generators), len(evaluators)), np.nan)
    fails: dict[tuple[str, str], int] = defaultdict(int)
    for e in evals:
        g, ev = e.instance.role, e.evaluator
        if g not in g_at or ev not in e_at:
            continue
        if e.scores is None:
            fails[(g, ev)] += 1
            continue
        v = e.scores.x100()
        for m_i, m in enumerate(METRICS):
            x[m_i, at[(e.instance.category, e.instance.secret)], g_at[g], e_at[ev]] = v[m]
    cells = []
    for g in generators:
        for ev in evaluators:
            col = x[:, :, g_at[g], e_at[ev]]
            n = int(np.sum(~np.isnan(col[0])))
            means = {m: (float(np.nanmean(col[i])) if n else math.nan) for i, m in enumerate(METRICS)}
            cells.append(Cell(g, ev, _own(ev, generators) == g, means, n, fails[(g, ev)]))
    r = np.random.default_rng(rng(seed, "sneak-bias-bootstrap").randrange(2**63))
    draws = r.integers(0, len(keys), size=(rounds, len(keys))) if keys else np.zeros((rounds, 0), dtype=int)
    per: list[EvaluatorBias] = []
    unpaired: list[str] = []
    pooled_parts: list[np.ndarray] = []  # (metric, 1 + rounds) per evaluator
    for ev in evaluators:
        own = _own(ev, generators)
        if own is None or len(generators) < 2:
            unpaired.append(ev)
            continue
        others = [g_at[g] for g in generators if g != own]

        def gap(sample: np.ndarray, e_i: int, own: str = own, others: list[int] = others) -> np.ndarray:
            """(metric,): mean of own-model messages minus mean of the others', under evaluator ``e_i``."""
            with np.errstate(all="ignore"):
                own_mean = _nanmean(sample[:, :, g_at[own], e_i])
                other_mean = _nanmean(sample[:, :, others, e_i].reshape(len(METRICS), -1))
            return np.asarray(own_mean - other_mean)

        rest = [e_at[o] for o in evaluators if o != ev]

        def both(sample: np.ndarray, ev: str = ev, rest: list[int] = rest) -> tuple[np.ndarray, np.ndarray]:
            mine = gap(sample, e_at[ev])
            if not rest:
                return mine, np.full(len(METRICS), np.nan)
            with np.errstate(all="ignore"):
                theirs = np.nanmean(np.stack([gap(sample, o) for o in rest]), axis=0)
            return mine, mine - theirs

        point = both(x)
        boot = [both(x[:, d]) for d in draws]
        smo = _differences(point[0], np.stack([b[0] for b in boot]))
        beyond = _differences(point[1], np.stack([b[1] for b in boot])) if rest else None
        if rest:
            pooled_parts.append(np.concatenate([point[1][None], np.stack([b[1] for b in boot])]))
        per.append(EvaluatorBias(ev, own, smo, beyond))
    pooled = None
    if pooled_parts:
        with np.errstate(all="ignore"):
            stacked = np.nanmean(np.stack(pooled_parts), axis=0)  # (1 + rounds, metric)
        pooled = _differences(stacked[0], stacked[1:])
    return Bias(list(generators), list(evaluators), cells, per, pooled, len(keys), unpaired)


def _nanmean(a: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring nan; nan (no warning) where a row holds none."""
    n = np.sum(~np.isnan(a), axis=-1)
    s = np.nansum(a, axis=-1)
    return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def _differences(point: np.ndarray, boot: np.ndarray) -> dict[str, Difference]:
    out = {}
    for i, m in enumerate(METRICS):
        b = boot[:, i]
        b = b[~np.isnan(b)]
        lo, hi = (float(np.percentile(b, 2.5)), float(np.percentile(b, 97.5))) if len(b) else (math.nan, math.nan)
        out[m] = Difference(float(point[i]), lo, hi)
    return out


def bias_text(b: Bias, seconds: float, cores: int) -> str:
    lines = [f"Same-model evaluator bias (SNEAK App. E.2): {len(b.generators)} generators x {len(b.evaluators)} "
             f"evaluators, {b.instances} instances; metrics x100, '*' marks a same-model pair",
             f"{'generator':<22}{'evaluator':<22}" + "".join(f"{m:>9}" for m in METRICS) + f"{'n':>6}{'fail':>6}"]
    for c in b.cells:
        lines.append(f"{c.generator[:21]:<22}{(c.evaluator + (' *' if c.same else ''))[:21]:<22}"
                     + "".join(f"{c.means[m]:>9.2f}" for m in METRICS) + f"{c.n:>6}{c.failures:>6}")
    lines.append("\nPer evaluator, 95% bootstrap interval over instances ("
                 "utility, SoftScore, BinaryScore: + favours its own model's messages; leakage: + its chameleon "
                 "reads its own model's messages better):")
    for p in b.per_evaluator:
        lines.append(f"  {p.evaluator} (own generator {p.own})")
        lines.append("    self - others:          " + "  ".join(f"{m} {p.self_minus_others[m].text()}" for m in METRICS))
        if p.beyond_others is not None:
            lines.append("    beyond the others' view: " + "  ".join(f"{m} {p.beyond_others[m].text()}" for m in METRICS))
    if len(b.generators) == 2 and len(b.per_evaluator) == 2:
        lines.append("  (two generators, two evaluators: one interaction, so both evaluators show the same "
                     "'beyond' numbers)")
    if b.pooled is not None:
        lines.append("  pooled over evaluators, beyond the others' view: "
                     + "  ".join(f"{m} {b.pooled[m].text()}" for m in METRICS))
    if not b.per_evaluator:
        lines.append("  (no evaluator has a same-model generator: name generators and evaluators on the same models, "
                     "e.g. -g embed:minilm -g embed:assoc -e embed:minilm -e embed:assoc)")
    elif b.unpaired:
        lines.append(f"  without a same-model generator (in the table only): {', '.join(b.unpaired)}")
    lines.append("\n" + PAPER_E2)
    lines.append(f"took {seconds:.1f} s (models loaded, messages generated and scored) on {cores} core(s)")
    return "\n".join(lines)


__all__ = ["BOOTSTRAP", "Bias", "Cell", "Difference", "EvaluatorBias", "bias", "bias_text", "evaluator_model",
           "generator_model"]

"""``hushtable sneak agreement --human``: the clue-report evaluators against the members' answers, clue by clue.

The human study (``models/eval/study.py``) asks members the ally task (which message was
written for the secret?) and the chameleon task (which word is the secret?) about logged and
benchmark clues; each item keeps every evaluator's probabilities over the options people saw.
Here, per clue (its ally and chameleon items):

- people's *utility* is the share of the ally answers that are right, people's *leakage* the
  share of the chameleon answers that are right;
- an evaluator's utility is its probability of the right message in the ally item, its
  leakage its probability of the secret in the chameleon item (the paper's appendix B.3
  compares the same two: human vote shares with evaluator probabilities; SNEAK's normalised
  metrics are a monotonic function of these for a clue's fixed number of options).

For each evaluator (and their mean when there are several) and each metric, over all clues
and per kind of clue (``models/eval/clue_kind.py``: reference or name, association, category
word): Spearman's rho and Pearson's r (``scipy.stats``) with 95% percentile bootstrap
intervals (``scipy.stats.bootstrap``, paired resampling of clues, a fixed seed); a resample
whose values are all tied has no correlation and is left out of its interval. Then one plain
sentence per line: whether the evaluator ranks those clues as people do, against them, or
whether the clues are too few to tell, and how far its level lies from people's.

Nothing here feeds back into an evaluator: its probabilities are the stored ones, computed
before any member answered, and no setting is fitted on these answers. Clues are named by
their key (``log:game:seq:part`` or ``bench:…``) and kind, never quoted.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from models.eval.clue_kind import KIND_NAMES, ClueKind
from models.eval.human import MEAN, Item, Task

ALL = "all"
METRICS = ("utility", "leakage")
MIN_CLUES = 3  # fewer clues give no correlation worth a sentence
RESAMPLES = 2000
SEED = 0
LEVEL_GAP = 0.2  # a mean gap (0-1) beyond which an evaluator's level is said to differ from people's
OUTLIER_GAP = 0.5  # a clue where evaluator and people differ by this much (0-1) is listed


@dataclass(frozen=True, slots=True)
class HumanClue:
    """One clue with people's shares of right answers and each evaluator's probability of the right option."""

    key: str
    category: str
    message: str
    kind: ClueKind
    ally_answers: int
    chameleon_answers: int
    people: Mapping[str, float]  # metric -> share of right answers (only metrics with answers)
    evaluators: Mapping[str, Mapping[str, float]]  # evaluator -> metric -> probability of the right option


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float
    undefined: int  # resamples with no correlation (all tied), left out


@dataclass(frozen=True, slots=True)
class Correlation:
    evaluator: str
    metric: str
    kind: str  # ALL or a ClueKind value
    n: int
    spearman: float | None
    spearman_ci: Interval | None
    pearson: float | None
    pearson_ci: Interval | None
    people_mean: float | None
    evaluator_mean: float | None

    def verdict(self) -> str:
        """The plain sentence: does the evaluator rank these clues as people do?"""
        if self.n < MIN_CLUES or self.spearman is None:
            return "too few clues (or all tied) to tell"
        ci = self.spearman_ci
        if ci is not None and ci.low > 0:
            said = "ranks these clues as people do"
        elif ci is not None and ci.high < 0:
            said = "DISAGREES with people: ranks these clues against their answers"
        elif self.spearman <= 0:
            said = "DISAGREES with people: its ranking of these clues runs against theirs (the interval spans 0)"
        else:
            said = "leans people's way, but the interval includes no agreement"
        if self.people_mean is not None and self.evaluator_mean is not None:
            gap = self.evaluator_mean - self.people_mean
            if abs(gap) > LEVEL_GAP:
                said += (f"; it puts {self.metric} {abs(100 * gap):.0f} points "
                         f"{'above' if gap > 0 else 'below'} people's")
        return said


@dataclass(frozen=True, slots=True)
class HumanAgreement:
    clues: tuple[HumanClue, ...]
    correlations: tuple[Correlation, ...]
    evaluators: tuple[str, ...]
    apart: Mapping[str, tuple[tuple[HumanClue, str, float], ...]]  # evaluator -> (clue, metric, gap) far from people


def clues_from_study(items: Sequence[Item], votes: Mapping[str, Sequence[int]],
                     kind_of: Callable[[str, str], ClueKind]) -> list[HumanClue]:
    """Each clue with at least one answer to one of its items; ``kind_of(message, category)`` its kind."""
    by_clue: dict[str, dict[Task, Item]] = defaultdict(dict)
    for it in items:
        for suffix in (":ally", ":chameleon"):
            if it.key.endswith(suffix):
                by_clue[it.key[: -len(suffix)]][it.task] = it
    out = []
    for key, pair in sorted(by_clue.items()):
        ally, cham = pair.get(Task.ALLY), pair.get(Task.CHAMELEON)
        people: dict[str, float] = {}
        evs: dict[str, dict[str, float]] = defaultdict(dict)
        for metric, asked in (("utility", ally), ("leakage", cham)):
            if asked is None:
                continue
            answers = list(votes.get(asked.key, ()))
            if answers:
                people[metric] = sum(1 for a in answers if a == asked.gold) / len(answers)
            for ev, probs in asked.probs.items():
                if 0 <= asked.gold < len(probs):
                    evs[ev][metric] = float(probs[asked.gold])
        if not people:
            continue
        shown = cham or ally
        assert shown is not None  # a clue is listed for one of its items
        message = (cham.message if cham is not None else None) or (ally.options[ally.gold] if ally else "")
        category = shown.category
        out.append(HumanClue(key, category, str(message), kind_of(str(message), category),
                             len(votes.get(ally.key, ())) if ally else 0, len(votes.get(cham.key, ())) if cham else 0,
                             people, {e: dict(m) for e, m in evs.items()}))
    return out


def _rho(a: Any, b: Any, axis: int = -1) -> Any:
    from scipy import stats

    return stats.pearsonr(stats.rankdata(a, axis=axis), stats.rankdata(b, axis=axis), axis=axis).statistic


def _r(a: Any, b: Any, axis: int = -1) -> Any:
    from scipy import stats

    return stats.pearsonr(a, b, axis=axis).statistic


def _point_and_interval(xs: Sequence[float], ys: Sequence[float],
                        statistic: Callable[..., Any]) -> tuple[float | None, Interval | None]:
    import numpy as np
    from scipy import stats

    if len(xs) < MIN_CLUES or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant resamples: their nan is counted below
        point = float(statistic(np.asarray(xs), np.asarray(ys)))
        res = stats.bootstrap((list(xs), list(ys)), statistic, paired=True, vectorized=True, n_resamples=RESAMPLES,
                              method="percentile", rng=np.random.default_rng(SEED))
    dist = np.asarray(res.bootstrap_distribution)
    finite = dist[np.isfinite(dist)]
    if not len(finite):
        return point, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return point, Interval(float(low), float(high), int(dist.size - finite.size))


def _values(clues: Sequence[HumanClue], ev: str, metric: str, evaluators: Sequence[str]) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for c in clues:
        if metric not in c.people:
            continue
        if ev == MEAN:
            have = [c.evaluators[e][metric] for e in evaluators if metric in c.evaluators.get(e, {})]
            if len(have) != len(evaluators):
                continue
            y = sum(have) / len(have)
        elif metric in c.evaluators.get(ev, {}):
            y = c.evaluators[ev][metric]
        else:
            continue
        xs.append(c.people[metric])
        ys.append(y)
    return xs, ys


def agreement(clues: Sequence[HumanClue]) -> HumanAgreement:
    """Correlations per evaluator (and their mean), metric and kind of clue, and the clues far from people."""
    evaluators = tuple(sorted({e for c in clues for e in c.evaluators}))
    names = [*evaluators, *([MEAN] if len(evaluators) > 1 else [])]
    out = []
    for ev in names:
        for metric in METRICS:
            for kind in (ALL, *(k.value for k in ClueKind)):
                mine = [c for c in clues if kind == ALL or c.kind.value == kind]
                xs, ys = _values(mine, ev, metric, evaluators)
                rho, rho_ci = _point_and_interval(xs, ys, _rho)
                r, r_ci = _point_and_interval(xs, ys, _r)
                out.append(Correlation(ev, metric, kind, len(xs), rho, rho_ci, r, r_ci,
                                       sum(xs) / len(xs) if xs else None, sum(ys) / len(ys) if ys else None))
    apart: dict[str, tuple[tuple[HumanClue, str, float], ...]] = {}
    for ev in evaluators:
        far = [(c, m, c.evaluators[ev][m] - c.people[m]) for c in clues for m in METRICS
               if m in c.people and m in c.evaluators.get(ev, {})
               and abs(c.evaluators[ev][m] - c.people[m]) >= OUTLIER_GAP]
        apart[ev] = tuple(sorted(far, key=lambda t: (-abs(t[2]), t[0].key, t[1])))
    return HumanAgreement(tuple(clues), tuple(out), evaluators, apart)


def render(a: HumanAgreement, *, listed: int = 10) -> str:
    """The correlations as a table, a sentence per line, and the clues where each evaluator is far from people."""

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:+.2f}"

    def ci(i: Interval | None) -> str:
        return "" if i is None else f" [{i.low:+.2f}, {i.high:+.2f}]"

    def mean(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.0f}"

    kinds: dict[str, int] = defaultdict(int)
    for c in a.clues:
        kinds[c.kind.value] += 1
    answers = sum(c.ally_answers + c.chameleon_answers for c in a.clues)
    lines = ["SNEAK evaluators against people (the human study's answers; the SNEAK paper, appendix B.3)",
             f"{len(a.clues)} clue(s) with answers ({answers} answer(s)); kinds: "
             + ", ".join(f"{KIND_NAMES[k]} {kinds.get(k.value, 0)}" for k in ClueKind),
             "People's utility: share of ally answers right; leakage: share of chameleon answers right. An "
             "evaluator's: its probability of the right option. 95% bootstrap intervals in brackets "
             f"({RESAMPLES} paired resamples of clues).",
             f"  {'evaluator':<22}{'metric':<9}{'clues':<12}{'n':>4}{'Spearman ρ':>28}{'Pearson r':>28}"
             f"{'people':>8}{'eval.':>7}  verdict"]
    for cor in a.correlations:
        if cor.kind != ALL and not cor.n:
            continue  # a kind without clues: the head line already says none
        lines.append(f"  {cor.evaluator:<22}{cor.metric:<9}{cor.kind:<12}{cor.n:>4}"
                     f"{num(cor.spearman) + ci(cor.spearman_ci):>28}{num(cor.pearson) + ci(cor.pearson_ci):>28}"
                     f"{mean(cor.people_mean):>8}{mean(cor.evaluator_mean):>7}  {cor.verdict()}")
    undefined = max((i.undefined for c in a.correlations for i in (c.spearman_ci, c.pearson_ci) if i), default=0)
    if undefined:
        lines.append(f"  (up to {undefined} of {RESAMPLES} resamples had all-tied values and no correlation; "
                     "the intervals leave them out)")
    for ev in a.evaluators:
        far = a.apart.get(ev, ())
        if not far:
            lines.append(f"{ev}: no clue where it is {100 * OUTLIER_GAP:.0f} or more points from people.")
            continue
        lines.append(f"{ev}: {len(far)} clue judgement(s) {100 * OUTLIER_GAP:.0f} or more points from people's"
                     + (f" (the {listed} farthest)" if len(far) > listed else "") + ":")
        for clue, metric, gap in far[:listed]:
            lines.append(f"  {clue.key} ({KIND_NAMES[clue.kind]}): {metric} {100 * clue.evaluators[ev][metric]:.0f} "
                         f"against people's {100 * clue.people[metric]:.0f} ({'higher' if gap > 0 else 'lower'})")
    return "\n".join(lines)


class NoAnswers(ValueError):
    """The study has no answer to a clue item yet: nothing to compare."""


async def human_agreement(store: Any) -> HumanAgreement:
    """The agreement over the study stored in ``store`` (``storage.annotations``); NoAnswers when none."""
    import storage.annotations as store_notes
    from models.eval.clue_kind import clue_kind
    from models.eval.deep_study import TASK as DEEP
    from models.eval.wordnet import wordnet

    raw, votes = await store_notes.study(store)
    items = [Item.from_json(d) for d in raw if d.get("task") != DEEP]
    if not any(votes.get(i.key) for i in items):
        raise NoAnswers("no answers in the human study yet: members answer with /judge (or hushtable sneak judge) "
                        "before people and evaluators can be compared")
    wn = wordnet()
    return agreement(clues_from_study(items, votes, lambda m, c: clue_kind(m, c, wn)))

"""Table-2-style summaries of evaluations, the evaluator-validity verdict, and CSV/JSON output.

A summary groups evaluations by a label (a method in the benchmark; a game, a
player or a role for live play), computes the four metrics per evaluator, and
then their average across evaluators (``models.eval.metrics``). Failed
judgements are counted per group and evaluator, never averaged in.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from models.eval.metrics import AVERAGE, Scores, across_evaluators

METRICS = ("utility", "leakage", "soft", "binary")
HEADERS = {"utility": "Util.", "leakage": "Leak.", "soft": "S.S.", "binary": "B.S."}

# How far apart two means must be (x100) to count as "much greater" and "about equal".
MUCH_GREATER = 20.0
ABOUT_EQUAL = 10.0

# The paper's reference values (Table 2, averaged over its three evaluators).
PAPER_BASELINES = {
    "random": Scores(0.0785, 0.0789, 0.0671, 0.0734),
    "category": Scores(0.3149, 0.0756, 0.2843, 0.3008),
    "secret-synonym": Scores(0.7573, 0.7102, 0.1231, 0.1215),
}


@dataclass(frozen=True, slots=True)
class Scored:
    """What a summary needs of one evaluation: its group, evaluator and scores (None: failed)."""

    group: str
    evaluator: str
    scores: Scores | None


@dataclass(frozen=True, slots=True)
class Row:
    group: str
    evaluator: str  # an evaluator spec or ``AVERAGE``
    scores: Scores
    n: int
    failures: int


def summarise(items: Iterable[Scored]) -> list[Row]:
    """Per group: a row per evaluator, then the across-evaluator average row."""
    by_group: dict[str, dict[str, list[Scores]]] = defaultdict(lambda: defaultdict(list))
    fails: dict[tuple[str, str], int] = defaultdict(int)
    for it in items:
        if it.scores is None:
            fails[(it.group, it.evaluator)] += 1
            by_group[it.group].setdefault(it.evaluator, [])
        else:
            by_group[it.group][it.evaluator].append(it.scores)
    rows: list[Row] = []
    for group, per_ev in by_group.items():
        means = across_evaluators(per_ev)
        for ev in sorted(per_ev):
            if ev in means:
                rows.append(Row(group, ev, means[ev], len(per_ev[ev]), fails[(group, ev)]))
            else:
                rows.append(Row(group, ev, Scores(float("nan"), float("nan"), float("nan"), float("nan")), 0,
                                fails[(group, ev)]))
        if AVERAGE in means and len(per_ev) > 1:
            rows.append(Row(group, AVERAGE, means[AVERAGE], min(len(v) for v in per_ev.values()),
                            sum(fails[(group, ev)] for ev in per_ev)))
    return rows


def lookup(rows: Sequence[Row]) -> dict[tuple[str, str], Scores]:
    return {(r.group, r.evaluator): r.scores for r in rows}


@dataclass(frozen=True, slots=True)
class Verdict:
    evaluator: str
    checks: dict[str, bool]

    @property
    def valid(self) -> bool:
        return all(self.checks.values())

    def text(self) -> str:
        failed = [k for k, ok in self.checks.items() if not ok]
        return "reproduces the paper's orderings" if not failed else "fails: " + "; ".join(failed)


def validity(rows: Sequence[Row], evaluator: str) -> Verdict | None:
    """Does this evaluator order the reference baselines as the paper's evaluators do?

    Utility: secret-synonym > category > random. Leakage: secret-synonym >>
    category ~ random (>> : at least ``MUCH_GREATER`` points above both; ~ :
    within ``ABOUT_EQUAL`` points). SoftScore: category > secret-synonym > random.
    """
    t = lookup(rows)
    try:
        r, c, s = (t[(g, evaluator)].x100() for g in ("random", "category", "secret-synonym"))
    except KeyError:
        return None
    checks = {
        "utility: secret-synonym > category > random": s["utility"] > c["utility"] > r["utility"],
        f"leakage: secret-synonym >> category, random (by {MUCH_GREATER:g})":
            s["leakage"] - max(c["leakage"], r["leakage"]) >= MUCH_GREATER,
        f"leakage: category ~ random (within {ABOUT_EQUAL:g})": abs(c["leakage"] - r["leakage"]) <= ABOUT_EQUAL,
        "softscore: category > secret-synonym > random": c["soft"] > s["soft"] > r["soft"],
    }
    return Verdict(evaluator, checks)


def _fmt(x: float) -> str:
    return "  -  " if x != x else f"{x:6.2f}"


def render(rows: Sequence[Row], *, title: str = "", group_name: str = "Method",
           order: Callable[[str], Any] | None = None) -> str:
    """A plain-text table: one line per group and evaluator, metrics x100, with counts and failures."""
    groups = list(dict.fromkeys(r.group for r in rows))
    if order is not None:
        groups.sort(key=order)
    width = max([len(group_name), *(len(g) for g in groups)]) + 2
    evw = max([9, *(len(r.evaluator) for r in rows)]) + 2
    lines = [title] if title else []
    lines.append(f"{group_name:<{width}}{'Evaluator':<{evw}}" + "".join(f"{HEADERS[m]:>8}" for m in METRICS)
                 + f"{'n':>7}{'fail':>6}")
    for g in groups:
        for r in (r for r in rows if r.group == g):
            v = r.scores.x100()
            lines.append(f"{g:<{width}}{r.evaluator:<{evw}}" + "".join(f"{_fmt(v[m]):>8}" for m in METRICS)
                         + f"{r.n:>7}{r.failures:>6}")
    return "\n".join(lines)


def to_records(rows: Sequence[Row], extra: Mapping[str, object] | None = None) -> list[dict[str, object]]:
    return [{**(extra or {}), "group": r.group, "evaluator": r.evaluator, "n": r.n, "failures": r.failures,
             **{m: round(v, 4) for m, v in r.scores.x100().items()}} for r in rows]


def to_csv(rows: Sequence[Row]) -> str:
    buf = io.StringIO()
    recs = to_records(rows)
    w = csv.DictWriter(buf, fieldnames=["group", "evaluator", "n", "failures", *METRICS], lineterminator="\n")
    w.writeheader()
    w.writerows(recs)
    return buf.getvalue()


def to_json(rows: Sequence[Row], verdicts: Sequence[Verdict] = (), meta: Mapping[str, object] | None = None) -> str:
    return json.dumps({"meta": dict(meta or {}), "rows": to_records(rows),
                       "validity": [{"evaluator": v.evaluator, "valid": v.valid, "checks": v.checks} for v in verdicts]},
                      indent=2)

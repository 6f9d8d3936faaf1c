"""The SNEAK paper's human study (appendix B.2-B.3): items for people, and the numbers of its Tables 6 and 7.

Two tasks, as the paper's annotators did them:

- *ally*: the category, the candidates, the secret and several messages (the
  clue and its decoys): which message was written for the secret?
- *chameleon*: the category, the candidates and one message: which word is the
  secret?

An item is built from a stored evaluation of an informed clue (``item_from_rows``;
bluffs are not items: nobody wrote them for the secret) or from a benchmark
instance scored by an evaluator (``item_from_evaluation``); it keeps its options in
the order people see them and each evaluator's probabilities in that order, so a
person and an evaluator are compared on the same choice.

``report`` gives, per task: worker-level accuracy (every annotation), plurality
accuracy (per item, the most-voted option; an item whose top is tied between k
options counts 1/k when the right one is among them) with chance (the mean of
1/|options|), Fleiss' kappa, and per evaluator (and their mean, the paper's
"averaged across three evaluators") the top-1 agreement with the human plurality
(items whose plurality is not tied), the same on items with a strict majority
(more than half the annotations on one option), and Pearson's r between the
human vote share of the right option and the evaluator's probability of it (the
paper's "ally utility" and "chameleon leakage" correlations, by ``scipy.stats``).

Fleiss' kappa (Fleiss, 1971, "Measuring nominal scale agreement among many
raters"), with n_i annotations of item i and n_ij of them on option j:
P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1)), P = mean_i P_i,
p_j = sum_i n_ij / sum_i n_i, P_e = sum_j p_j^2, kappa = (P - P_e) / (1 - P_e);
items with fewer than two annotations carry no agreement and are left out. Options
are the positions people saw (an item's options are shown in one fixed order).
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

ANNOTATIONS_PER_ITEM = 5  # the paper's B.2: five independent annotations per item
MEAN = "mean of evaluators"


class Task(StrEnum):
    ALLY = "ally"
    CHAMELEON = "chameleon"


@dataclass(frozen=True, slots=True)
class Item:
    """One question for people, with the right answer and each evaluator's probabilities over its options."""

    key: str
    task: Task
    category: str
    candidates: tuple[str, ...]
    secret: str | None  # shown in the ally task only
    message: str | None  # shown in the chameleon task only
    options: tuple[str, ...]  # in the order people see them
    gold: int  # the right option's position
    probs: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # evaluator -> per option, same order
    game_id: int | None = None  # a logged clue's game (its players never judge it)
    source: str = "log"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "task": self.task.value, "category": self.category,
                "candidates": list(self.candidates), "secret": self.secret, "message": self.message,
                "options": list(self.options), "gold": self.gold, "probs": {k: list(v) for k, v in self.probs.items()},
                "game_id": self.game_id, "source": self.source}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Item:
        return Item(str(d["key"]), Task(d["task"]), str(d["category"]), tuple(d["candidates"]), d.get("secret"),
                    d.get("message"), tuple(d["options"]), int(d["gold"]),
                    {k: tuple(float(x) for x in v) for k, v in (d.get("probs") or {}).items()},
                    d.get("game_id"), str(d.get("source") or "log"))


def _order(key: str, n: int) -> list[int]:
    """The fixed order an item's options are shown in (seeded by the item's key, so every person sees the same)."""
    order = list(range(n))
    random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:12], 16)).shuffle(order)
    return order


def _items(key: str, category: str, candidates: Sequence[str], secret: str, message: str, decoys: Sequence[str],
           ally: Mapping[str, Sequence[float]], cham: Mapping[str, Sequence[float]], game_id: int | None,
           source: str) -> list[Item]:
    out = []
    messages = [message, *decoys]  # the stored order: the clue is option 0
    order = _order(key + ":ally", len(messages))
    out.append(Item(f"{key}:ally", Task.ALLY, category, tuple(candidates), secret, None,
                    tuple(messages[i] for i in order), order.index(0),
                    {ev: tuple(float(p[i]) for i in order) for ev, p in ally.items() if len(p) == len(messages)},
                    game_id, source))
    order = _order(key + ":chameleon", len(candidates))
    out.append(Item(f"{key}:chameleon", Task.CHAMELEON, category, tuple(candidates[i] for i in order), None, message,
                    tuple(candidates[i] for i in order), order.index(list(candidates).index(secret)),
                    {ev: tuple(float(p[i]) for i in order) for ev, p in cham.items() if len(p) == len(candidates)},
                    game_id, source))
    return out


def item_from_rows(rows: Sequence[Any]) -> list[Item]:
    """The ally and chameleon items of one logged clue from its stored evaluations (one per evaluator; rows
    judged on other decoys than the first row's are left out of the ally item). Bluffs and clues whose
    judgements all failed give no item."""
    ok = [r for r in rows if r.ally_probs is not None and r.cham_probs is not None]
    if not ok or ok[0].instance.get("bluff"):
        return []
    first = ok[0]
    inst = first.instance
    if inst.get("secret") not in inst.get("candidates", []) or not inst.get("message"):
        return []
    key = f"log:{first.game_id}:{first.action_seq}:{first.part}"
    ally = {r.evaluator: r.ally_probs for r in ok if list(r.decoys) == list(first.decoys)}
    cham = {r.evaluator: r.cham_probs for r in ok}
    return _items(key, str(inst["category"]), list(inst["candidates"]), str(inst["secret"]), str(inst["message"]),
                  list(first.decoys), ally, cham, first.game_id, "log")


def item_from_evaluations(key: str, evaluations: Sequence[Any]) -> list[Item]:
    """The items of one benchmark instance from its ``models.eval.score.Evaluation`` under each evaluator."""
    ok = [e for e in evaluations if e.ally_probs is not None and e.cham_probs is not None]
    if not ok:
        return []
    inst = ok[0].instance
    ally = {e.evaluator: e.ally_probs for e in ok if e.decoys == ok[0].decoys}
    cham = {e.evaluator: e.cham_probs for e in ok}
    return _items(f"bench:{key}", inst.category, list(inst.candidates), inst.secret, inst.message, list(ok[0].decoys),
                  ally, cham, None, "bench")


def prompt_text(item: Item) -> str:
    """What a person is asked (numbered options, 1-based)."""
    head = f"Category: {item.category}\nCandidates: {', '.join(item.candidates)}"
    if item.task is Task.ALLY:
        ask = (f"{head}\nSecret: {item.secret}\nOne of these messages was written by someone who knew the secret, "
               "to show an ally they know it. Which one?")
    else:
        ask = f"{head}\nMessage: \u201c{item.message}\u201d\nThe message was written by someone who knew the secret. Which word is it?"
    return ask + "\n" + "\n".join(f"{i + 1}. {o}" for i, o in enumerate(item.options))


# --------------------------------------------------------------------------- the numbers


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa over items (rows of per-option counts; items with fewer than two annotations left out).
    None when there is nothing to measure (no item, or every annotation on one option: P_e = 1)."""
    rows = [list(r) for r in counts if sum(r) >= 2]
    if not rows:
        return None
    width = max(len(r) for r in rows)
    rows = [r + [0] * (width - len(r)) for r in rows]
    p_items = [(sum(x * x for x in r) - sum(r)) / (sum(r) * (sum(r) - 1)) for r in rows]
    total = sum(sum(r) for r in rows)
    p_j = [sum(r[j] for r in rows) / total for j in range(width)]
    p_bar = sum(p_items) / len(p_items)
    p_e = sum(p * p for p in p_j)
    if math.isclose(p_e, 1.0):
        return None
    return (p_bar - p_e) / (1 - p_e)


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    from scipy.stats import pearsonr

    return float(pearsonr(xs, ys).statistic)


@dataclass(frozen=True, slots=True)
class Agreement:
    evaluator: str
    top1: float | None  # share of items (unique human plurality) where the evaluator's top option is it
    top1_items: int
    strict: float | None  # the same over items with a strict human majority
    strict_items: int
    r: float | None  # Pearson's r: human share of the right option vs the evaluator's probability of it
    r_items: int


@dataclass(frozen=True, slots=True)
class TaskReport:
    task: Task
    items: int  # items with at least one annotation
    complete: int  # items with ANNOTATIONS_PER_ITEM or more
    annotations: int
    worker_accuracy: float | None
    plurality_accuracy: float | None
    chance: float | None
    kappa: float | None
    agreement: tuple[Agreement, ...]


def _plurality(counts: Sequence[int]) -> list[int]:
    top = max(counts)
    return [j for j, c in enumerate(counts) if c == top]


def task_report(task: Task, items: Sequence[Item], votes: Mapping[str, Sequence[int]]) -> TaskReport:
    """The task's Table 6 and Table 7 numbers from the annotations (item key -> chosen positions)."""
    mine = [i for i in items if i.task is task and votes.get(i.key)]
    counts = {i.key: [sum(1 for v in votes[i.key] if v == j) for j in range(len(i.options))] for i in mine}
    n_ann = sum(len(votes[i.key]) for i in mine)
    worker = sum(counts[i.key][i.gold] for i in mine) / n_ann if n_ann else None
    plural = [((i.gold in (top := _plurality(counts[i.key]))) / len(top)) for i in mine]
    evaluators = sorted({ev for i in mine for ev in i.probs})
    agreements = []
    for ev in [*evaluators, *([MEAN] if len(evaluators) > 1 else [])]:
        top1: list[bool] = []
        strict: list[bool] = []
        xs: list[float] = []
        ys: list[float] = []
        for i in mine:
            if ev == MEAN:
                have = [i.probs[e] for e in evaluators if e in i.probs]
                if len(have) != len(evaluators):
                    continue
                probs = [sum(col) / len(have) for col in zip(*have, strict=True)]
            elif ev in i.probs:
                probs = list(i.probs[ev])
            else:
                continue
            c = counts[i.key]
            top = _plurality(c)
            best = max(range(len(probs)), key=lambda j: probs[j])
            if len(top) == 1:
                top1.append(best == top[0])
                if c[top[0]] * 2 > sum(c):
                    strict.append(best == top[0])
            xs.append(c[i.gold] / sum(c))
            ys.append(probs[i.gold])
        agreements.append(Agreement(ev, sum(top1) / len(top1) if top1 else None, len(top1),
                                    sum(strict) / len(strict) if strict else None, len(strict),
                                    _pearson(xs, ys), len(xs)))
    return TaskReport(task, len(mine), sum(1 for i in mine if len(votes[i.key]) >= ANNOTATIONS_PER_ITEM), n_ann,
                      worker, sum(plural) / len(plural) if plural else None,
                      sum(1 / len(i.options) for i in mine) / len(mine) if mine else None,
                      fleiss_kappa([counts[i.key] for i in mine]), tuple(agreements))


def report(items: Sequence[Item], votes: Mapping[str, Sequence[int]]) -> list[TaskReport]:
    return [task_report(t, items, votes) for t in Task]


PAPER = {Task.ALLY: {"worker": 77.3, "plurality": 88.9, "chance": 16.7, "kappa": 0.73, "top1": 88.9, "strict": 91.7,
                     "r": 0.61},
         Task.CHAMELEON: {"worker": 44.6, "plurality": 68.4, "chance": 8.3, "kappa": 0.27, "top1": 66.7, "strict": 74.2,
                          "r": 0.39}}


def render(reports: Sequence[TaskReport]) -> str:
    """Tables 6 and 7 of the paper, ours beside its numbers (percentages 0-100; kappa and r as they are)."""

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}%"

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    lines = ["SNEAK human study (the SNEAK paper, appendix B.2-B.3; the paper's numbers in brackets)",
             "Table 6: human accuracy",
             f"  {'task':<10}{'items':>7}{'complete':>10}{'annot.':>8}{'worker acc.':>18}{'plurality acc.':>20}"
             f"{'chance':>16}{'Fleiss κ':>14}"]
    for r in reports:
        p = PAPER[r.task]
        lines.append(f"  {r.task.value:<10}{r.items:>7}{r.complete:>10}{r.annotations:>8}"
                     f"{pct(r.worker_accuracy) + ' [' + str(p['worker']) + '%]':>18}"
                     f"{pct(r.plurality_accuracy) + ' [' + str(p['plurality']) + '%]':>20}"
                     f"{pct(r.chance) + ' [' + str(p['chance']) + '%]':>16}"
                     f"{num(r.kappa) + ' [' + str(p['kappa']) + ']':>14}")
    lines.append(f"  (complete: items with {ANNOTATIONS_PER_ITEM} annotations, the paper's count; a tied plurality "
                 "counts 1/k when the right option is among the k tied)")
    lines.append("Table 7: evaluators against the human plurality")
    lines.append(f"  {'task':<10}{'evaluator':<24}{'top-1':>18}{'strict majority':>22}{'r (share vs p)':>22}")
    for r in reports:
        p = PAPER[r.task]
        if not r.agreement:
            lines.append(f"  {r.task.value:<10}(no evaluator probabilities on these items)")
        for a in r.agreement:
            lines.append(f"  {r.task.value:<10}{a.evaluator:<24}"
                         f"{f'{pct(a.top1)} ({a.top1_items})':>18}{f'{pct(a.strict)} ({a.strict_items})':>22}"
                         f"{f'{num(a.r)} ({a.r_items})':>22}")
        lines.append(f"  {'':<10}{'[paper, 3 LLMs averaged]':<24}{str(p['top1']) + '%':>18}{str(p['strict']) + '%':>22}"
                     f"{p['r']:>22}")
    lines.append("  (in brackets after each number: the items it is over; top-1 leaves out items whose plurality is "
                 "tied; r: Pearson's, human share of the right option against the evaluator's probability of it)")
    return "\n".join(lines)


def running_score(correct: Sequence[bool]) -> str:
    """What a member sees after an answer: how many they got right so far."""
    n = len(correct)
    right = sum(correct)
    streak = 0
    for c in reversed(correct):
        if not c:
            break
        streak += 1
    return f"{right} of {n} right ({100 * right / n:.0f}%)" + (f", {streak} in a row" if streak > 1 else "")



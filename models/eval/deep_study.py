"""DEEP rated by members: SpyGame's human evaluation of descriptions (its Table 8), in the human study.

``hushtable deep --out FILE`` keeps every description with the judge's rating against the target
word and each distractor; ``hushtable sneak human --add-deep FILE`` turns each (description, word)
pair into an item that members rate as the judge did, on the paper's 1-5 scale ("1 denotes very
inaccurate and 5 very accurate"), through ``/judge`` like the SNEAK items. An item is rated by
five different members (``ANNOTATIONS_PER_ITEM``); a member sees the judge's rating only after
giving theirs. ``render`` gives, per agent and mode, the members' mean on targets and distractors
beside the judge's on the same items (the paper's Table 1 layout), each member's means apart
(Table 8: annotators by number, never by name), and Pearson's r between an item's mean member
rating and the judge's rating: how far the judge can stand in for people.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from games.text import typed_number

TASK = "deep"
SCALE = (1, 5)

# The SpyGame paper's DEEP numbers, as printed: per model, (aggressive target, aggressive distractor,
# conservative target, conservative distractor), on its 40 target words.
PAPER_JUDGE: dict[str, tuple[float, float, float, float]] = {
    # Table 1, GPT-4 as the judge.
    "Baichuan-7B": (4.08, 1.35, 3.27, 1.44), "ChatGLM2-6B": (4.49, 1.45, 3.89, 2.07),
    "Vicuna-7B-v1.5": (4.78, 1.31, 3.81, 2.35), "Llama-2-7B-chat-hf": (4.78, 1.29, 3.89, 2.15),
    "Text-Davinci-002": (5.00, 1.28, 4.27, 2.49), "Text-Davinci-003": (5.00, 1.38, 3.68, 2.50),
    "GPT-3.5-Turbo": (5.00, 1.32, 4.76, 2.68), "GPT-4": (5.00, 1.22, 4.38, 3.06),
}
PAPER_HUMANS: dict[str, tuple[float, float, float, float]] = {
    # Table 1's last block, "Human Evaluation Scores": the annotators' mean.
    "Vicuna-7B-v1.5": (4.79, 2.15, 3.83, 2.15), "GPT-3.5-Turbo": (4.82, 2.14, 3.46, 2.44),
    "GPT-4": (4.87, 2.08, 2.85, 2.83),
}
PAPER_ANNOTATORS: dict[str, dict[str, tuple[float, float, float, float]]] = {
    # Table 8, each of the two annotators.
    "annotator 1": {"Vicuna-7B-v1.5": (4.92, 2.11, 3.24, 1.89), "GPT-3.5-Turbo": (4.95, 2.11, 3.08, 2.14),
                    "GPT-4": (5.00, 2.08, 2.08, 2.38)},
    "annotator 2": {"Vicuna-7B-v1.5": (4.65, 2.19, 4.41, 2.41), "GPT-3.5-Turbo": (4.68, 2.16, 3.84, 2.73),
                    "GPT-4": (4.73, 2.08, 3.62, 3.27)},
}


def paper_rows(title: str, rows: Mapping[str, tuple[float, float, float, float]], indent: str = "  ") -> list[str]:
    """Rows of the paper's DEEP numbers under a title naming their table: aggressive target / distractor,
    conservative target / distractor."""
    out = [f"{indent}{title}"]
    out += [f"{indent}  {name:<20}" + "".join(f"{v:>12.2f}" for v in vals) for name, vals in rows.items()]
    return out


@dataclass(frozen=True, slots=True)
class DeepItem:
    key: str
    agent: str
    mode: str  # aggressive or conservative
    target: str  # the word the agent described
    word: str  # the word the description is rated against (the target or a distractor)
    description: str
    judge: str
    judge_rating: int | None

    @property
    def is_target(self) -> bool:
        return self.word == self.target

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "task": TASK, "agent": self.agent, "mode": self.mode, "target": self.target,
                "word": self.word, "description": self.description, "judge": self.judge,
                "judge_rating": self.judge_rating}

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> DeepItem:
        jr = d.get("judge_rating")
        return DeepItem(str(d["key"]), str(d["agent"]), str(d["mode"]), str(d["target"]), str(d["word"]),
                        str(d["description"]), str(d.get("judge") or ""), int(jr) if jr is not None else None)


def items_from_run(run: Mapping[str, Any]) -> list[DeepItem]:
    """Items from ``hushtable deep --out``'s JSON: one per described mode and rated word (no empty description)."""
    judge = str(run.get("judge") or "")
    records = run.get("records")
    if not isinstance(records, Mapping):
        raise ValueError("not the JSON of hushtable deep --out (no records by agent)")
    out: list[DeepItem] = []
    for agent, words in records.items():
        for rec in words:
            target = str(rec["word"])
            for mode in ("aggressive", "conservative"):
                part = rec.get(mode)
                if not isinstance(part, Mapping) or not str(part.get("description") or "").strip():
                    continue
                text = str(part["description"]).strip()
                for word, rating in (part.get("ratings") or {}).items():
                    raw = json.dumps([agent, mode, target, word, text], ensure_ascii=False)
                    key = "deep:" + hashlib.sha256(raw.encode()).hexdigest()[:16]
                    out.append(DeepItem(key, str(agent), mode, target, str(word), text, judge,
                                        int(rating) if rating is not None else None))
    return out


def prompt_text(item: DeepItem) -> str:
    return (f"How well does this description fit the word \"{item.word}\"?\n"
            f"Description: {item.description}\n"
            "1 = very inaccurate, 5 = very accurate")


def parse(answer: str) -> int | None:
    value = typed_number(answer)
    return value if value is not None and SCALE[0] <= value <= SCALE[1] else None


@dataclass(frozen=True, slots=True)
class Vote:
    item_key: str
    annotator: str
    rating: int


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    from scipy.stats import pearsonr

    if len(xs) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return float(pearsonr(xs, ys).statistic)


@dataclass(frozen=True, slots=True)
class DeepReport:
    rows: dict[tuple[str, str], dict[str, float | int | None]]  # (agent, mode) -> numbers
    per_member: dict[str, dict[tuple[str, str], tuple[float | None, float | None]]]  # "member k" -> cell -> means
    r: float | None
    r_items: int
    items: int
    annotations: int


def report(items: Sequence[DeepItem], votes: Sequence[Vote]) -> DeepReport:
    by_key = {i.key: i for i in items}
    mine = [v for v in votes if v.item_key in by_key]
    ratings: dict[str, list[int]] = defaultdict(list)
    for v in mine:
        ratings[v.item_key].append(v.rating)
    rated = [by_key[k] for k in ratings]
    rows: dict[tuple[str, str], dict[str, float | int | None]] = {}
    for cell in sorted({(i.agent, i.mode) for i in rated}):
        here = [i for i in rated if (i.agent, i.mode) == cell]
        tgt = [i for i in here if i.is_target]
        dis = [i for i in here if not i.is_target]
        rows[cell] = {
            "human target": _mean([r for i in tgt for r in ratings[i.key]]),
            "human distractor": _mean([r for i in dis for r in ratings[i.key]]),
            "judge target": _mean([i.judge_rating for i in tgt if i.judge_rating is not None]),
            "judge distractor": _mean([i.judge_rating for i in dis if i.judge_rating is not None]),
            "items": len(here),
            "annotations": sum(len(ratings[i.key]) for i in here),
        }
    order: list[str] = []
    for v in mine:
        if v.annotator not in order:
            order.append(v.annotator)
    per_member: dict[str, dict[tuple[str, str], tuple[float | None, float | None]]] = {}
    for n, who in enumerate(order, start=1):
        theirs = [v for v in mine if v.annotator == who]
        cells: dict[tuple[str, str], tuple[float | None, float | None]] = {}
        for cell in rows:
            t = [v.rating for v in theirs if (by_key[v.item_key].agent, by_key[v.item_key].mode) == cell
                 and by_key[v.item_key].is_target]
            d = [v.rating for v in theirs if (by_key[v.item_key].agent, by_key[v.item_key].mode) == cell
                 and not by_key[v.item_key].is_target]
            cells[cell] = (_mean(t), _mean(d))
        per_member[f"member {n}"] = cells
    pairs = [(sum(ratings[i.key]) / len(ratings[i.key]), float(i.judge_rating)) for i in rated
             if i.judge_rating is not None]
    r = _pearson([p[0] for p in pairs], [p[1] for p in pairs])
    return DeepReport(rows, per_member, r, len(pairs), len(rated), len(mine))


def render(rep: DeepReport) -> str:
    def f(x: float | int | None) -> str:
        return "–" if x is None else f"{x:.2f}"

    lines = [f"DEEP rated by members (SpyGame, Tables 1 and 8): {rep.items} item(s), {rep.annotations} rating(s), "
             "scale 1-5; aggressive: target high, distractors low; conservative: target lower",
             f"  {'agent':<22}{'mode':<14}{'members: target':>17}{'distractor':>12}{'judge: target':>15}"
             f"{'distractor':>12}{'items':>7}{'ratings':>9}"]
    for (agent, mode), row in rep.rows.items():
        lines.append(f"  {agent[:21]:<22}{mode:<14}{f(row['human target']):>17}{f(row['human distractor']):>12}"
                     f"{f(row['judge target']):>15}{f(row['judge distractor']):>12}{row['items']:>7}"
                     f"{row['annotations']:>9}")
    if rep.per_member:
        lines.append("  Each member (target / distractor means, by agent and mode):")
        for who, cells in rep.per_member.items():
            lines.append(f"    {who:<10}" + "   ".join(f"{a[:14]} {m[:4]}. {f(t)} / {f(d)}"
                                                        for (a, m), (t, d) in cells.items()))
    lines.append(f"  Pearson's r, an item's mean member rating against the judge's: {f(rep.r)} "
                 f"(over {rep.r_items} items with a judge rating)")
    lines.append(f"  The paper's human ratings (its models, its 40 words; not these items), {'':<6}"
                 f"{'aggr. target':>12}{'distractor':>12}{'cons. target':>12}{'distractor':>12}")
    lines += paper_rows("SpyGame Table 1, 'Human Evaluation Scores' (mean of the annotators):", PAPER_HUMANS, "    ")
    for who, rows in PAPER_ANNOTATORS.items():
        lines += paper_rows(f"SpyGame Table 8, {who}:", rows, "    ")
    lines.append("    (the paper gives no correlation between its annotators and the GPT-4 judge; its Table 1 "
                 "judge rows are printed by hushtable deep)")
    return "\n".join(lines)


__all__ = ["PAPER_ANNOTATORS", "PAPER_HUMANS", "PAPER_JUDGE", "TASK", "DeepItem", "DeepReport", "Vote", "items_from_run", "paper_rows",
           "parse", "prompt_text", "render", "report"]

"""The SNEAK paper's analyses (section 4) over the standalone benchmark: evaluator agreement (4.1), the
semantic structure of category difficulty (4.2) and the candidate / decoy size sweep (4.3, Figure 4).

Each analysis scores messages the way ``hushtable sneak bench`` does (the same instances, reference
baselines, decoys and evaluators) and then reads the per-instance evaluations differently:

- **agreement**: per generator, the spread of each metric across evaluators (standard deviation,
  points, averaged over the generators) and, per pair of evaluators, Spearman's rank correlation of
  the generators' means; the three reference baselines get the same numbers in a block of their own,
  never ranked among the generators. The paper ranks 9 models and reports
  average deviations of 5.42 (utility) and 4.76 (leakage) points, Spearman 0.90-0.97 (utility),
  0.95-0.99 (leakage), 0.90-0.95 (SoftScore). With few methods a rank correlation says little: the
  number of methods ranked is printed beside it.
- **similarity**: per card, the average pairwise WordNet path similarity of its candidates (the best
  over the two words' noun senses, NLTK's ``path_similarity``: 1 / (1 + shortest hypernym path)), and
  Pearson's r with the generator's mean utility, leakage and SoftScore over the card (averaged over
  evaluators). The paper: r = -0.43 (utility), -0.28 (score). Its abstract / concrete split follows
  the category norms the paper drew its cards from; our cards carry no such label, so it is not made.
- **sweep**: one parameter at a time around the default (12 candidates, 5 decoy messages). The secrets
  are the same in every column (the first words of each card, as many as the smallest candidate set),
  so a column differs only in the parameter. For the candidate sweep the messages are generated again
  for each candidate set (the generator sees the candidates); for the decoy sweep the default
  column's messages are rescored with more or fewer decoys. The paper's Figure 4: larger candidate
  sets mainly lower leakage, more decoys mainly lower utility.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from games.base import normalize
from models.embeddings import VocabIndex
from models.eval.baselines import Baseline, NoMessage, WordNetBaselines
from models.eval.bench import make_generator
from models.eval.decoys import DEFAULT_DECOYS, DecoyStrategy
from models.eval.evaluators import ClientFor, EmbedderFor, Evaluator, load_evaluators
from models.eval.generators import generate_all
from models.eval.instances import Instance, bench_instances
from models.eval.metrics import AVERAGE, Scores
from models.eval.score import Evaluation, evaluate
from models.eval.summary import METRICS, Row, Scored, summarise
from models.eval.wordnet import WordNet

DEFAULT_CANDIDATES = 12
Progress = Callable[[str, int, int], None]

# The paper's section 4 numbers, printed beside ours.
PAPER_AGREEMENT = {"std utility": 5.42, "std leakage": 4.76, "spearman utility": (0.9042, 0.9680),
                   "spearman leakage": (0.9547, 0.9929), "spearman soft": (0.8995, 0.9547)}
PAPER_SIMILARITY_R = {"utility": -0.43, "soft": -0.28}


@dataclass(frozen=True, slots=True)
class Scoring:
    """What scoring needs: the evaluators (warmed up), the decoy rule, the models, the seed."""

    evaluators: Sequence[Evaluator]
    decoys: DecoyStrategy
    client_for: ClientFor
    index: VocabIndex
    wn: WordNet
    seed: int = 0
    progress: Progress | None = None
    embedder_for: EmbedderFor | None = None


async def make_scoring(evaluators: Sequence[str], *, client_for: ClientFor, embedder_for: EmbedderFor, seed: int = 0,
                       progress: Progress | None = None) -> Scoring:
    """The evaluators loaded one at a time (as the benchmark does) and the paper's WordNet decoys."""
    from models.eval.decoys import WordNetDecoys
    from models.eval.wordnet import wordnet

    evs = await load_evaluators(evaluators, client_for=client_for, embedder_for=embedder_for)
    wn = wordnet()
    return Scoring(evs, WordNetDecoys(wn), client_for, VocabIndex(embedder_for("minilm")), wn, seed, progress, embedder_for)


@dataclass(slots=True)
class Messages:
    """Instances with each method's message (generators by spec, baselines by name); what had none."""

    instances: list[Instance]
    missing: dict[str, int] = field(default_factory=dict)


def _ticker(progress: Progress | None, stage: str, total: int) -> Callable[[int], None] | None:
    if progress is None:
        return None
    report = progress
    return lambda n: report(stage, n, total)


async def messages_for(base: Sequence[Instance], generators: Sequence[str], s: Scoring, *,
                       label: str = "generate") -> Messages:
    """Every generator's and reference baseline's message for each instance (``role`` names the method)."""
    out: list[Instance] = []
    missing: dict[str, int] = defaultdict(int)
    refs = WordNetBaselines(s.wn, seed=s.seed)
    per_gen: dict[str, list[str | None]] = {}
    for spec in generators:
        gen = await make_generator(spec, refine=False, client_for=s.client_for, index=s.index, seed=s.seed,
                                   embedder_for=s.embedder_for)
        done = await generate_all(gen, base, progress=_ticker(s.progress, f"{label} {spec}", len(base)))
        per_gen[spec] = [g.message for g in done]
    for i, inst in enumerate(base):
        for b in Baseline:
            try:
                out.append(dataclasses.replace(inst, message=refs.message(b, inst).text, role=b.value))
            except NoMessage:
                missing[b.value] += 1
        for spec, msgs in per_gen.items():
            m = msgs[i]
            if m is None:
                missing[spec] += 1
            else:
                out.append(dataclasses.replace(inst, message=m, role=spec))
    return Messages(out, dict(missing))


async def score_all(msgs: Messages, s: Scoring, *, n_decoys: int = DEFAULT_DECOYS,
                    label: str = "score") -> list[Evaluation]:
    total = len(msgs.instances) * len(s.evaluators)
    return await evaluate(msgs.instances, s.evaluators, s.decoys, n_decoys=n_decoys,
                          progress=_ticker(s.progress, label, total))


def rows_of(evals: Sequence[Evaluation]) -> list[Row]:
    return summarise(Scored(e.instance.role, e.evaluator, e.scores) for e in evals)


# --------------------------------------------------------------------------- 4.1 agreement


@dataclass(frozen=True, slots=True)
class Agreement:
    """Agreement over the generators (the paper ranks its 9 models), and apart from them over the three reference
    baselines: a baseline is a fixed point of the scale, and ranking it among the models would let its wide gap to
    them pass for agreement about the models."""

    rows: list[Row]
    methods: list[str]  # the generators ranked
    evaluators: list[str]
    mean_std: dict[str, float]  # metric -> points: the evaluators' standard deviation, averaged over the generators
    spearman: dict[tuple[str, str], dict[str, float]]  # evaluator pair -> metric -> rho over the generators (nan: undefined)
    baselines: list[str] = field(default_factory=list)  # the reference baselines, ranked apart
    baseline_std: dict[str, float] = field(default_factory=dict)
    baseline_spearman: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    if len(a) < 3 or len(set(a)) < 2 or len(set(b)) < 2:
        return math.nan
    return float(spearmanr(a, b).statistic)


def _spread(table: dict[tuple[str, str], dict[str, float]], methods: Sequence[str], evaluators: Sequence[str]
            ) -> tuple[dict[str, float], dict[tuple[str, str], dict[str, float]]]:
    mean_std: dict[str, float] = {}
    for m in METRICS:
        stds = []
        for g in methods:
            xs = [table[(g, e)][m] for e in evaluators]
            mu = sum(xs) / len(xs)
            stds.append(math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else math.nan)
        mean_std[m] = sum(stds) / len(stds) if stds else math.nan
    rho = {(a, b): {m: _spearman([table[(g, a)][m] for g in methods], [table[(g, b)][m] for g in methods])
                    for m in METRICS} for a, b in combinations(evaluators, 2)}
    return mean_std, rho


BASELINE_NAMES = frozenset(b.value for b in Baseline)


def agreement(evals: Sequence[Evaluation]) -> Agreement:
    """Across evaluators: how far apart their scores are, and whether they rank the generators alike; the same for
    the reference baselines, apart."""
    rows = [r for r in rows_of(evals) if r.evaluator != AVERAGE]
    evaluators = sorted({r.evaluator for r in rows})
    table = {(r.group, r.evaluator): r.scores.x100() for r in rows if r.n}
    scored = sorted({g for g, _ in table if all((g, e) in table for e in evaluators)})
    methods = [g for g in scored if g not in BASELINE_NAMES]
    baselines = sorted((g for g in scored if g in BASELINE_NAMES), key=_method_key)
    mean_std, rho = _spread(table, methods, evaluators)
    b_std, b_rho = _spread(table, baselines, evaluators)
    return Agreement(rows, methods, evaluators, mean_std, rho, baselines, b_std, b_rho)


def agreement_text(a: Agreement) -> str:
    lines = [f"Evaluator agreement (SNEAK 4.1): {len(a.evaluators)} evaluators",
             f"\nGenerators ranked ({len(a.methods)}: {', '.join(a.methods) or 'none; add generators with -g'}; the "
             "paper ranks its 9 models, no baseline among them)",
             "Spread across evaluators, standard deviation in points, averaged over the generators (paper: utility "
             f"{PAPER_AGREEMENT['std utility']}, leakage {PAPER_AGREEMENT['std leakage']}):"]
    lines.append("  " + "  ".join(f"{m} {_f(a.mean_std[m])}" for m in METRICS))
    lines.append("Spearman's rho of the generators' means per pair of evaluators (paper: utility 0.90-0.97, leakage "
                 "0.95-0.99, SoftScore 0.90-0.95, over 9 models):")
    if not a.spearman:
        lines.append("  (one evaluator: nothing to compare; name two or more with -e)")
    for (x, y), r in a.spearman.items():
        lines.append(f"  {x} vs {y}: " + "  ".join(f"{m} {_f(r[m], 2)}" for m in METRICS))
    if len(a.methods) < 5:
        lines.append(f"  ({len(a.methods)} generators: a rank correlation over so few says little; add generators "
                     "with -g; 'nan' is undefined: fewer than 3 ranked, or one evaluator gave them all the same score)")
    if a.baselines:
        lines.append(f"\nReference baselines, ranked apart from the generators ({', '.join(a.baselines)}; the paper "
                     "reports no agreement over them):")
        lines.append("  spread: " + "  ".join(f"{m} {_f(a.baseline_std[m])}" for m in METRICS))
        for (x, y), r in a.baseline_spearman.items():
            lines.append(f"  {x} vs {y}: " + "  ".join(f"{m} {_f(r[m], 2)}" for m in METRICS))
    return "\n".join(lines)


def _f(x: float, digits: int = 2) -> str:
    return "nan" if x != x else f"{x:.{digits}f}"


# --------------------------------------------------------------------------- 4.2 similarity


def _path_similarity(wn: WordNet, a: str, b: str, cache: dict[str, list[dict[str, int]]]) -> float | None:
    """The best NLTK-style path similarity over the two words' noun senses; None if either has none."""
    for w in (a, b):
        if w not in cache:
            cache[w] = [wn.closure(s) for s in wn.senses(w)]
    if not cache[a] or not cache[b]:
        return None
    best = 0.0
    for ca in cache[a]:
        for cb in cache[b]:
            shared = ca.keys() & cb.keys()
            if shared:
                best = max(best, 1.0 / (1 + min(ca[o] + cb[o] for o in shared)))
            else:  # NLTK joins the noun hierarchies under one root: a path through it
                best = max(best, 1.0 / (3 + max(ca.values()) + max(cb.values())))
    return best


def card_similarity(wn: WordNet, candidates: Sequence[str]) -> tuple[float | None, int]:
    """Average pairwise path similarity of the candidates WordNet knows as nouns; how many it does not."""
    cache: dict[str, list[dict[str, int]]] = {}
    sims = [s for a, b in combinations(candidates, 2) if (s := _path_similarity(wn, a, b, cache)) is not None]
    unknown = sum(1 for w in candidates if not cache.get(w))
    return (sum(sims) / len(sims) if sims else None), unknown


@dataclass(frozen=True, slots=True)
class CardPoint:
    category: str
    similarity: float
    unknown: int
    scores: dict[str, float]  # metric -> mean x100 over the card's instances and the evaluators
    n: int


@dataclass(frozen=True, slots=True)
class Similarity:
    method: str
    cards: list[CardPoint]
    left_out: list[str]  # cards WordNet knows too few words of
    r: dict[str, tuple[float, float, float, float]]  # metric -> (r, low, high, p): 95% interval by Fisher's z


def _pearson(x: Sequence[float], y: Sequence[float]) -> tuple[float, float, float, float]:
    from scipy.stats import pearsonr

    if len(x) < 4 or len(set(x)) < 2 or len(set(y)) < 2:
        return (math.nan,) * 4
    res = pearsonr(x, y)
    ci = res.confidence_interval(0.95)
    return float(res.statistic), float(ci.low), float(ci.high), float(res.pvalue)


def similarity(evals: Sequence[Evaluation], wn: WordNet, method: str) -> Similarity:
    """Per card: candidate similarity beside the method's scores; Pearson's r across cards."""
    by_card: dict[str, list[Evaluation]] = defaultdict(list)
    cands: dict[str, tuple[str, ...]] = {}
    for e in evals:
        if e.instance.role == method:
            by_card[e.instance.category].append(e)
            cands[e.instance.category] = e.instance.candidates
    points: list[CardPoint] = []
    left_out: list[str] = []
    for cat, es in by_card.items():
        sim, unknown = card_similarity(wn, cands[cat])
        ok = [e.scores for e in es if e.scores is not None]
        if sim is None or unknown > len(cands[cat]) // 2 or not ok:
            left_out.append(cat)
            continue
        per_ev: dict[str, list[Scores]] = defaultdict(list)
        for e in es:
            if e.scores is not None:
                per_ev[e.evaluator].append(e.scores)
        # the card's mean per evaluator, then the mean over evaluators (as the paper averages)
        means = {m: sum(sum(s.x100()[m] for s in v) / len(v) for v in per_ev.values()) / len(per_ev) for m in METRICS}
        points.append(CardPoint(cat, sim, unknown, means, len(ok)))
    r = {m: _pearson([p.similarity for p in points], [p.scores[m] for p in points]) for m in METRICS}
    return Similarity(method, points, left_out, r)


def similarity_text(s: Similarity) -> str:
    lines = [f"Semantic structure of category difficulty (SNEAK 4.2): method {s.method}, {len(s.cards)} cards",
             f"{'card':<28}{'similarity':>11}{'unknown':>9}" + "".join(f"{m:>9}" for m in METRICS)]
    for p in sorted(s.cards, key=lambda p: p.similarity):
        lines.append(f"{p.category[:27]:<28}{p.similarity:>11.3f}{p.unknown:>9}"
                     + "".join(f"{p.scores[m]:>9.2f}" for m in METRICS))
    if s.left_out:
        lines.append(f"left out (WordNet knows half the words or fewer as nouns): {', '.join(s.left_out)}")
    lines.append("Pearson's r of similarity with each metric across cards, 95% interval (paper: utility "
                 f"{PAPER_SIMILARITY_R['utility']}, score {PAPER_SIMILARITY_R['soft']}):")
    for m in METRICS:
        r, lo, hi, pv = s.r[m]
        lines.append(f"  {m:<8} r {_f(r)} [{_f(lo)}, {_f(hi)}]  p {_f(pv, 3)}")
    lines.append("Not made: the paper's abstract / concrete split (our cards carry no such label).")
    return "\n".join(lines)


# --------------------------------------------------------------------------- 4.3 sweep


@dataclass(frozen=True, slots=True)
class SweepCell:
    parameter: str  # "candidates" or "decoys"
    value: int
    rows: list[Row]  # every method, per evaluator and averaged


@dataclass(frozen=True, slots=True)
class Sweep:
    cells: list[SweepCell]
    secrets_per_card: int
    cards: int
    missing: dict[str, int]


async def sweep(cards: Sequence[tuple[str, Sequence[str]]], generators: Sequence[str], s: Scoring, *,
                candidates: Sequence[int], decoys: Sequence[int]) -> Sweep:
    """The candidate-set sweep (decoys at the default) and the decoy sweep (candidates at the default)."""
    sizes = sorted(set(candidates) | {DEFAULT_CANDIDATES})
    usable = [(c, list(w)) for c, w in cards if len(w) >= max(sizes)]
    if not usable:
        raise ValueError(f"no card has {max(sizes)} words: lower the largest candidate set")
    k = min(sizes)
    secrets = {c: {normalize(x) for x in w[:k]} for c, w in usable}
    cells: list[SweepCell] = []
    missing: dict[str, int] = defaultdict(int)
    default_msgs: Messages | None = None
    for size in sizes:
        base = [i for i in bench_instances(usable, size) if normalize(i.secret) in secrets[i.category]]
        msgs = await messages_for(base, generators, s, label=f"generate |W|={size}")
        for name, n in msgs.missing.items():
            missing[f"{name} (|W|={size})"] += n
        if size == DEFAULT_CANDIDATES:
            default_msgs = msgs
        if size in candidates or size == DEFAULT_CANDIDATES and DEFAULT_DECOYS in decoys:
            evals = await score_all(msgs, s, label=f"score |W|={size}")
            if size in candidates:
                cells.append(SweepCell("candidates", size, rows_of(evals)))
            if size == DEFAULT_CANDIDATES and DEFAULT_DECOYS in decoys:
                cells.append(SweepCell("decoys", DEFAULT_DECOYS, rows_of(evals)))
    assert default_msgs is not None
    for n in sorted(set(decoys) - {DEFAULT_DECOYS}):
        evals = await score_all(default_msgs, s, n_decoys=n, label=f"score |M|={n}")
        cells.append(SweepCell("decoys", n, rows_of(evals)))
    cells.sort(key=lambda c: (c.parameter, c.value))
    return Sweep(cells, k, len(usable), dict(missing))


def _summary_rows(rows: Sequence[Row]) -> dict[str, Row]:
    evs = {r.evaluator for r in rows}
    ev = AVERAGE if AVERAGE in evs else sorted(evs)[0]
    return {r.group: r for r in rows if r.evaluator == ev}


def sweep_text(sw: Sweep) -> str:
    lines = [f"Sensitivity to candidate and decoy set sizes (SNEAK 4.3): {sw.cards} cards, the first "
             f"{sw.secrets_per_card} words of each as secrets in every column; metrics x100 (averaged over the "
             "evaluators when there are several)",
             "Paper (Figure 4): larger candidate sets mainly lower leakage; more decoy messages mainly lower utility."]
    for param, sym in (("candidates", "|W|"), ("decoys", "|M|")):
        cells = [c for c in sw.cells if c.parameter == param]
        if not cells:
            continue
        other = f"|M|={DEFAULT_DECOYS}" if param == "candidates" else f"|W|={DEFAULT_CANDIDATES}"
        lines.append(f"\n{param} swept ({other}):")
        lines.append(f"{'method':<22}{sym:>5}" + "".join(f"{m:>9}" for m in METRICS) + f"{'n':>6}{'fail':>6}")
        methods = sorted({g for c in cells for g in _summary_rows(c.rows)}, key=_method_key)
        for g in methods:
            for c in cells:
                r = _summary_rows(c.rows).get(g)
                if r is None:
                    continue
                v = r.scores.x100()
                lines.append(f"{g[:21]:<22}{c.value:>5}" + "".join(f"{_f(v[m]):>9}" for m in METRICS)
                             + f"{r.n:>6}{r.failures:>6}")
        values = " / ".join(str(c.value) for c in cells)
        lines.append(f"chance on this table's scale ({sym} = {values}): utility 0, leakage 0, soft 0 (normalised: "
                     "max(0, (p - 1/n) / (1 - 1/n)); a judge that spreads its probability evenly scores 0 on all four), "
                     f"binary {_binary_chance(param, cells)} (a judge that picks one option at random)")
        lines.append("raw chance, before normalising (not on this table's scale; also the normalised mean of a judge "
                     f"that picks at random with full confidence): ally 1/(|M|+1) {_chance_text(param, cells, 'ally')} "
                     f"(|M| decoys and the real message), chameleon 1/|W| {_chance_text(param, cells, 'cham')}")
    if sw.missing:
        lines.append("\nwithout a message (left out): " + ", ".join(f"{k} {v}" for k, v in sw.missing.items()))
    return "\n".join(lines)


def _chance_text(param: str, cells: Sequence[SweepCell], who: str) -> str:
    if param == "candidates":
        vals = [100 / (DEFAULT_DECOYS + 1) if who == "ally" else 100 / c.value for c in cells]
    else:
        vals = [100 / (c.value + 1) if who == "ally" else 100 / DEFAULT_CANDIDATES for c in cells]
    return " / ".join(f"{v:.1f}" for v in vals)


def _binary_chance(param: str, cells: Sequence[SweepCell]) -> str:
    """BinaryScore of a judge picking at random: the ally picks the real message (1/(|M|+1)) and the chameleon
    misses the secret (1 - 1/|W|)."""
    pairs = [(DEFAULT_DECOYS + 1, c.value) if param == "candidates" else (c.value + 1, DEFAULT_CANDIDATES) for c in cells]
    return " / ".join(f"{100 / m * (1 - 1 / w):.1f}" for m, w in pairs)


def _method_key(g: str) -> tuple[int, str]:
    order = {b.value: i for i, b in enumerate(Baseline)}
    return (order.get(g, len(order)), g)


def sweep_figure(sw: Sweep, out_stem: Path, method: str) -> list[Path]:
    """Figure 4: the four metrics against |W| and against |M|, for one method (PNG and SVG)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4))
    FigureCanvasAgg(fig)
    for i, (param, sym) in enumerate((("candidates", "|W| candidates"), ("decoys", "|M| decoy messages"))):
        ax = fig.add_subplot(1, 2, i + 1)
        cells = [c for c in sw.cells if c.parameter == param and method in _summary_rows(c.rows)]
        for m in METRICS:
            ax.plot([c.value for c in cells], [_summary_rows(c.rows)[method].scores.x100()[m] for c in cells],
                    marker="o", label=m)
        ax.set_xlabel(sym)
        ax.set_ylabel("score (0-100)")
        ax.set_ylim(-3, 103)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"SNEAK sensitivity: {method}")
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [out_stem.with_suffix(".png"), out_stem.with_suffix(".svg")]
    for p in paths:
        fig.savefig(p, bbox_inches="tight")
    return paths


__all__ = ["Agreement", "Scoring", "Similarity", "Sweep", "agreement", "agreement_text", "card_similarity",
           "make_scoring", "messages_for", "score_all", "similarity", "similarity_text", "sweep", "sweep_figure", "sweep_text"]

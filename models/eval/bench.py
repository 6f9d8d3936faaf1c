"""The standalone SNEAK benchmark over our Chameleon cards (``hushtable sneak bench``).

Every word of every card is a secret (the ``sneak`` setting plays a card's
first 12 words, as SNEAK keeps a category's 12 most named members; ``classic``
all 16). For each instance the generator's message and the three reference
baselines' messages are scored by every evaluator against the same decoys;
the result is the paper's Table 2 per evaluator and averaged, plus the
validity verdict of each evaluator and the points of the utility-leakage plot.
Generation parse failures are counted per instance and left out of the means.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from games import decks
from models.embeddings import DEFAULT_K, VocabIndex
from models.eval.baselines import Baseline, NoMessage, WordNetBaselines
from models.eval.decoys import DecoyStrategy, EmbeddingDecoys, LLMDecoys, WordNetDecoys
from models.eval.evaluators import ClientFor, EmbedderFor, load_evaluators
from models.eval.generators import Baselines, EmbedGenerator, Generated, LLMGenerator, generate_all, generator_kind, shots_of
from models.eval.instances import Instance, bench_instances
from models.eval.methods import METHODS, MethodGenerator
from models.eval.plot import Point
from models.eval.score import evaluate
from models.eval.summary import Row, Scored, Verdict, summarise, validity
from models.eval.wordnet import wordnet


class Setting(StrEnum):
    SNEAK = "sneak"
    CLASSIC = "classic"


class DecoyRule(StrEnum):
    WORDNET = "wordnet"  # the paper's (section 2.2)
    EMBED = "embed"  # MiniLM-ranked broad terms
    LLM = "llm"  # appendix C's prompt to llm:default, MiniLM top-up


class BaselineSource(StrEnum):
    WORDNET = "wordnet"  # the paper's (section 3.1), independent of the evaluators
    EMBED = "embed"  # MiniLM's nearest vocabulary words (what a MiniLM evaluator passes by construction)


CARD_SIZE = {Setting.SNEAK: 12, Setting.CLASSIC: 16}
DEFAULT_EVALUATORS = ("embed:minilm",)


@dataclass(frozen=True, slots=True)
class BenchConfig:
    generator: str
    evaluators: Sequence[str] = DEFAULT_EVALUATORS
    cards: int | None = None
    setting: Setting = Setting.SNEAK
    refine: bool = False
    seed: int = 0
    deck: Sequence[tuple[str, Sequence[str]]] | None = None  # a researcher's cards (default: the bundled ones)
    deck_name: str = "bundled cards"
    decoys: DecoyRule = DecoyRule.WORDNET
    baselines: BaselineSource = BaselineSource.WORDNET


@dataclass(slots=True)
class BenchResult:
    config: BenchConfig
    rows: list[Row]
    verdicts: list[Verdict]
    instances: int
    generation_failures: int
    seconds: dict[str, float] = field(default_factory=dict)
    examples: list[dict[str, object]] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # evaluation failures by reason (most common first)
    missing: dict[str, int] = field(default_factory=dict)  # baseline -> instances without a message
    decoys_name: str = ""
    # Every generated message with the generator's raw reply: CoT's reasoning, SETS's samples, verdicts and votes.
    generations: list[dict[str, object]] = field(default_factory=list)

    def points(self) -> list[Point]:
        return [Point(r.group, r.scores.x100()["leakage"], r.scores.x100()["utility"], r.scores.x100()["soft"])
                for r in self.rows if r.evaluator == self.summary_evaluator]

    @property
    def summary_evaluator(self) -> str:
        evs = {r.evaluator for r in self.rows}
        return "average" if "average" in evs else sorted(evs)[0]


def method_order(group: str) -> tuple[int, str]:
    return ({b.value: i for i, b in enumerate(Baseline)}.get(group, len(Baseline)), group)


BUNDLED_EMBEDDER = "minilm"  # the model whose vocabulary callers index


async def make_generator(spec: str, *, refine: bool, client_for: ClientFor, index: VocabIndex,
                         seed: int, embedder_for: EmbedderFor | None = None) -> LLMGenerator | EmbedGenerator | MethodGenerator:
    """``index`` is the bundled MiniLM's vocabulary; ``embed:NAME`` with another model draws from that
    model's own vocabulary (``embedder_for``), never silently from MiniLM's."""
    kind, arg, params = generator_kind(spec)
    if kind == "llm":
        method = params.get("method", "zero-shot")
        if method not in METHODS:
            raise ValueError(f"generation method must be one of {', '.join(METHODS)}, not {method!r}")
        shots = shots_of(params)
        if method != "zero-shot":
            if refine:
                raise ValueError("--refine (RMR) is a method of its own: not with method=cot or sets")
            return MethodGenerator(await client_for(arg or "default"), spec, method, shots=shots)
        return LLMGenerator(await client_for(arg or "default"), spec, refine=refine, shots=shots)
    if (arg or BUNDLED_EMBEDDER) != BUNDLED_EMBEDDER:
        if embedder_for is None:
            raise ValueError(f"{spec} cannot generate here; use embed:{BUNDLED_EMBEDDER}")
        index = VocabIndex(embedder_for(arg))
    return EmbedGenerator(index, spec, k=int(params.get("k", DEFAULT_K)), seed=seed)


async def run_bench(
    cfg: BenchConfig,
    *,
    client_for: ClientFor,
    embedder_for: EmbedderFor,
    decoys: DecoyStrategy | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> BenchResult:
    """Generate, add the baselines, score; ``progress(stage, done_increment, total)`` reports as it goes."""
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    embedder = embedder_for("minilm")
    index = VocabIndex(embedder)
    if decoys is None:
        decoys = (WordNetDecoys(wordnet()) if cfg.decoys is DecoyRule.WORDNET else EmbeddingDecoys(embedder)
                  if cfg.decoys is DecoyRule.EMBED
                  else LLMDecoys(await client_for("default"), EmbeddingDecoys(embedder), spec="llm:default"))
    evaluators = await load_evaluators(cfg.evaluators, client_for=client_for, embedder_for=embedder_for)
    deck = list(cfg.deck) if cfg.deck is not None else list(decks.cards())
    cards = deck[: cfg.cards] if cfg.cards else deck
    base = bench_instances(cards, CARD_SIZE[cfg.setting])
    gen = await make_generator(cfg.generator, refine=cfg.refine, client_for=client_for, index=index, seed=cfg.seed,
                               embedder_for=embedder_for)

    def tick(stage: str, total: int) -> Callable[[int], None]:
        return lambda n: progress(stage, n, total) if progress is not None else None

    generated: list[Generated] = await generate_all(gen, base, progress=tick("generate", len(base)))
    seconds["generate"] = time.perf_counter() - t0
    old = Baselines(index, seed=cfg.seed)
    refs = WordNetBaselines(wordnet(), seed=cfg.seed)
    scored_instances: list[Instance] = []
    groups: list[str] = []
    failures = 0
    examples: list[dict[str, object]] = []
    missing: Counter[str] = Counter()
    traces = [trace(gen.spec, inst, g) for inst, g in zip(base, generated, strict=True)]
    for inst, g in zip(base, generated, strict=True):
        msgs: dict[str, str] = {}
        for b in Baseline:
            if cfg.baselines is BaselineSource.EMBED:
                msgs[b.value] = old.message(b, inst)
                continue
            try:
                msgs[b.value] = refs.message(b, inst).text
            except NoMessage:
                missing[b.value] += 1
        if g.message is None:
            failures += 1
        else:
            msgs[gen.spec] = g.message
        if len(examples) < 8:
            examples.append({"category": inst.category, "secret": inst.secret, "messages": dict(msgs)})
        for group, m in msgs.items():
            scored_instances.append(dataclasses.replace(inst, message=m, role=group))
            groups.append(group)
    seconds["baselines"] = time.perf_counter() - t0 - seconds["generate"]
    t1 = time.perf_counter()
    results = await evaluate(scored_instances, evaluators, decoys,
                             progress=tick("score", len(scored_instances) * len(evaluators)))
    seconds["score"] = time.perf_counter() - t1
    items = [Scored(r.instance.role, r.evaluator, r.scores) for r in results]
    errors = dict(Counter(f"{r.evaluator}: {r.error}"[:300] for r in results if r.error).most_common(5))
    rows = summarise(items)
    rows.sort(key=lambda r: (method_order(r.group), r.evaluator == "average", r.evaluator))
    # Per evaluator only: an average's verdict would hide a failing member.
    verdicts = [v for v in (validity(rows, e.spec) for e in evaluators) if v is not None]
    seconds["total"] = time.perf_counter() - t0
    return BenchResult(cfg, rows, verdicts, len(base), failures, seconds, examples, errors, dict(missing),
                       decoys.name, traces)


def trace(spec: str, inst: Instance, g: Generated) -> dict[str, object]:
    """One generation as kept in ``generations.jsonl``: the instance, the message (None: a parse failure) and the
    generator's raw output (SETS's audit as an object, CoT's reasoning and the zero-shot reply as text)."""
    raw: object = g.raw
    if g.raw.startswith("{"):
        try:
            raw = json.loads(g.raw)
        except ValueError:
            raw = g.raw
    return {"generator": spec, "category": inst.category, "secret": inst.secret, "message": g.message, "raw": raw}

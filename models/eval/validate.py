"""Does an evaluator earn its place? The paper's baseline orderings on held-back cards, with intervals.

``validate`` scores the three reference baselines (``models/eval/baselines.py``:
synonyms in the card's sense from WordNet and the Moby Thesaurus, the card's
WordNet lexicalization, unrelated WordNet nouns)
against WordNet decoys on cards the evaluator was never tuned on, one evaluator
at a time (each model is loaded and warmed alone), and checks the orderings the
paper's evaluators show (Table 2), each on a percentile bootstrap over cards:

- ``>``: the 95% interval of the difference lies above 0;
- ``>>``: it lies above ``MUCH_GREATER`` points;
- ``~``: it lies within ``ABOUT_EQUAL`` points either side.

An evaluator is valid when every check passes. Verdicts are per evaluator:
there is no average verdict, so a failing evaluator cannot hide behind a good
one. Held back: the bundled cards the embedding temperatures were not fitted
on (``models/eval/calibrate.py`` fits on every other card; validation takes the
others), or any deck a researcher brings, less any card whose category the
fit used. Nothing here (baselines, decoys, the choice of WordNet relations)
was tuned on any card.

``record`` keeps a verdict in ``data/validated.json`` under the evaluator's
fingerprint (``evaluators.fingerprint``) *and* the deck it was measured on
(``deck_key``: ``bundled`` for the bundled held-back cards, else a digest of the
cards), so a verdict on one deck never replaces another's. A deck of fewer than
``MIN_RECORD_CARDS`` held-back cards is not recorded: its intervals are too wide
for a verdict to mean much, and a small favourable deck could otherwise record
a pass. ``standing(spec)`` reads the bundled verdict back for the bot's start,
which refuses an evaluator without a passing one; verdicts on other decks are
kept beside it and listed (``other_decks``), never in its place.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from games import decks
from games.base import normalize
from models.eval.baselines import Baseline, NoMessage, WordNetBaselines
from models.eval.decoys import DecoyStrategy, WordNetDecoys
from models.eval.evaluators import ClientFor, EmbedderFor, Evaluator, fingerprint, resolve, warm_up
from models.eval.instances import Instance, bench_instances
from models.eval.score import evaluate
from models.eval.wordnet import wordnet

CARD_SIZE = 12
MUCH_GREATER = 20.0
ABOUT_EQUAL = 10.0
BOOTSTRAP_ROUNDS = 1000
RECORD_FILE = "validated.json"
# Fewer held-back cards than this are not recorded: with 12 secrets a card, 24 cards are 288 secrets, where the
# bootstrap intervals of the bundled cards (52) widen by about half; below it a handful of cards decides a verdict.
MIN_RECORD_CARDS = 24
BUNDLED = "bundled"
METRICS = ("utility", "leakage", "soft")
Card = tuple[str, Sequence[str]]


def calibration_cards() -> list[Card]:
    """The cards the embedding evaluator's temperatures were fitted on (every other bundled card)."""
    return [(c, tuple(w)) for c, w in list(decks.cards())[::2]]


def deck_key(cards: Sequence[Card]) -> str:
    """Which deck a verdict is about: ``bundled`` when these are the bundled held-back cards (in any order,
    from any file), else ``deck:`` and a digest of the normalised cards."""
    def canon(cs: Sequence[Card]) -> list[tuple[str, list[str]]]:
        return sorted((normalize(c), sorted(normalize(w) for w in ws)) for c, ws in cs)

    mine = canon(cards)
    if mine == canon(held_back()[0]):
        return BUNDLED
    return "deck:" + hashlib.sha256(json.dumps(mine).encode()).hexdigest()[:12]


def held_back(deck: Sequence[Card] | None = None) -> tuple[list[Card], int]:
    """The cards to validate on and how many of ``deck`` were left out for being calibration cards."""
    if deck is None:
        return [(c, tuple(w)) for c, w in list(decks.cards())[1::2]], 0
    used = {normalize(c) for c, _ in calibration_cards()}
    kept = [c for c in deck if normalize(c[0]) not in used]
    return kept, len(deck) - len(kept)


@dataclass(frozen=True, slots=True)
class Check:
    name: str  # "utility: secret-synonym > category"
    point: float  # the difference of means, x100
    low: float
    high: float
    passed: bool

    def text(self) -> str:
        return f"{'PASS' if self.passed else 'FAIL'}  {self.name}: {self.point:+.1f} [{self.low:+.1f}, {self.high:+.1f}]"


@dataclass(slots=True)
class EvaluatorVerdict:
    spec: str
    fingerprint: dict[str, Any]
    checks: list[Check] = field(default_factory=list)
    means: dict[str, dict[str, float]] = field(default_factory=dict)  # baseline -> metric -> mean x100
    n: dict[str, int] = field(default_factory=dict)  # baseline -> instances scored
    failures: int = 0
    error: str | None = None  # the evaluator could not run at all

    @property
    def valid(self) -> bool:
        return self.error is None and bool(self.checks) and all(c.passed for c in self.checks)

    def reason(self) -> str:
        """One line: why it is not valid (or that it is)."""
        if self.error:
            return f"could not run ({self.error})"
        bad = [c.name for c in self.checks if not c.passed]
        return "passes every ordering" if not bad else "fails " + "; ".join(bad)


@dataclass(slots=True)
class Validation:
    cards: int
    left_out: int
    instances: int
    missing: dict[str, int]  # baseline -> instances WordNet had no message for
    sources: dict[str, dict[str, int]]  # baseline -> message source -> count
    decoys: str
    deck: str
    verdicts: list[EvaluatorVerdict]
    examples: list[dict[str, Any]] = field(default_factory=list)
    deck_key: str = BUNDLED  # what a record keys the verdicts by (``deck_key``); "" for a partial run


# Each check: name, kind, and the difference it is about (a function of the three baselines' means).
Means = dict[str, dict[str, float]]
CHECKS: tuple[tuple[str, str, Callable[[Means], float]], ...] = (
    ("utility: secret-synonym > category", ">", lambda m: m["secret-synonym"]["utility"] - m["category"]["utility"]),
    ("utility: category > random", ">", lambda m: m["category"]["utility"] - m["random"]["utility"]),
    (f"leakage: secret-synonym >> category, random (by {MUCH_GREATER:g})", ">>",
     lambda m: m["secret-synonym"]["leakage"] - max(m["category"]["leakage"], m["random"]["leakage"])),
    (f"leakage: category ~ random (within {ABOUT_EQUAL:g})", "~",
     lambda m: m["category"]["leakage"] - m["random"]["leakage"]),
    ("softscore: category > secret-synonym", ">", lambda m: m["category"]["soft"] - m["secret-synonym"]["soft"]),
    ("softscore: secret-synonym > random", ">", lambda m: m["secret-synonym"]["soft"] - m["random"]["soft"]),
)


def _passes(kind: str, low: float, high: float) -> bool:
    if kind == ">":
        return low > 0
    if kind == ">>":
        return low > MUCH_GREATER
    return -ABOUT_EQUAL <= low and high <= ABOUT_EQUAL


Sums = dict[str, dict[str, list[float]]]  # card -> baseline -> [sum utility, sum leakage, sum soft, n]


def _means(per_card: Sums, cards: Sequence[str]) -> Means:
    out: Means = {}
    for b in Baseline:
        tot = [0.0, 0.0, 0.0, 0.0]
        for c in cards:
            row = per_card[c].get(b.value)
            if row:
                tot = [x + y for x, y in zip(tot, row, strict=True)]
        n = tot[3] or 1.0
        out[b.value] = {m: 100 * tot[i] / n for i, m in enumerate(METRICS)}
    return out


def checks_for(per_card: Sums, *, rounds: int = BOOTSTRAP_ROUNDS, seed: int = 0) -> tuple[list[Check], Means]:
    """Every ordering check with its percentile-bootstrap interval over cards (cards resampled whole)."""
    cards = sorted(per_card)
    point = _means(per_card, cards)
    r = random.Random(seed)
    samples: list[list[float]] = [[] for _ in CHECKS]
    for _ in range(rounds):
        pick = [cards[r.randrange(len(cards))] for _ in cards]
        m = _means(per_card, pick)
        for i, (_, _, diff) in enumerate(CHECKS):
            samples[i].append(diff(m))
    out = []
    for (name, kind, diff), xs in zip(CHECKS, samples, strict=True):
        xs.sort()
        low, high = xs[int(0.025 * (len(xs) - 1))], xs[int(0.975 * (len(xs) - 1))]
        out.append(Check(name, diff(point), low, high, _passes(kind, low, high)))
    return out, point


def _ticker(progress: Callable[[str, int, int], None], stage: str, total: int) -> Callable[[int], None]:
    return lambda n: progress(stage, n, total)


async def validate(
    specs: Sequence[str], *, client_for: ClientFor, embedder_for: EmbedderFor, deck: Sequence[Card] | None = None,
    deck_name: str = "bundled cards not used for calibration", decoys: DecoyStrategy | None = None, seed: int = 0,
    rounds: int = BOOTSTRAP_ROUNDS, progress: Callable[[str, int, int], None] | None = None, limit: int | None = None,
) -> Validation:
    """The baselines on held-back cards (the first ``limit`` of them) under each evaluator in turn."""
    cards, left_out = held_back(deck)
    cards = cards[:limit] if limit else cards
    res = await score_cards(specs, cards, client_for=client_for, embedder_for=embedder_for, deck_name=deck_name,
                            decoys=decoys, seed=seed, rounds=rounds, progress=progress)
    res.left_out = left_out
    res.deck_key = deck_key(cards) if not limit else ""
    return res


async def score_cards(
    specs: Sequence[str], cards: Sequence[Card], *, client_for: ClientFor, embedder_for: EmbedderFor,
    deck_name: str, decoys: DecoyStrategy | None = None, seed: int = 0, rounds: int = BOOTSTRAP_ROUNDS,
    progress: Callable[[str, int, int], None] | None = None,
) -> Validation:
    """The baselines and checks on exactly ``cards``, none left out. ``validate`` calls it with held-back cards;
    a development run calls it with the calibration cards (``bench/sneak_calibration.py``), which are never
    recorded as a verdict (``deck_key`` is left empty)."""
    if len(cards) < 2:
        raise ValueError(f"{len(cards)} held-back card(s): an interval over cards needs at least 2")
    wn = wordnet()
    refs = WordNetBaselines(wn, seed=seed)
    decoys = decoys or WordNetDecoys(wn)
    base = bench_instances(cards, CARD_SIZE)
    scored: list[Instance] = []
    missing: dict[str, int] = defaultdict(int)
    sources: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    examples: list[dict[str, Any]] = []
    for inst in base:
        msgs: dict[str, str] = {}
        for b in Baseline:
            try:
                m = refs.message(b, inst)
            except NoMessage:
                missing[b.value] += 1
                continue
            sources[b.value][m.source.value] += 1
            msgs[b.value] = m.text
            scored.append(dataclasses.replace(inst, message=m.text, role=b.value))
        if len(examples) < 12 and inst.secret == inst.candidates[0]:
            examples.append({"category": inst.category, "secret": inst.secret, "messages": msgs})
    verdicts: list[EvaluatorVerdict] = []
    for spec in specs:  # one at a time: each model loads alone, and one failure never hides another's verdict
        v = EvaluatorVerdict(spec, fingerprint(spec))
        verdicts.append(v)
        try:
            ev: Evaluator = await resolve(spec, client_for=client_for, embedder_for=embedder_for)
        except Exception as exc:  # noqa: BLE001 - reported with its type, the next evaluator still runs
            v.error = f"{type(exc).__name__}: {exc}"[:300]
            continue
        v.error = await warm_up(ev)
        if v.error:
            continue
        tick = _ticker(progress, f"validate {spec}", len(scored)) if progress is not None else None
        results = await evaluate(scored, [ev], decoys, progress=tick)
        per_card: Sums = defaultdict(dict)
        for res in results:
            if res.scores is None:
                v.failures += 1
                continue
            row = per_card[res.instance.category].setdefault(res.instance.role, [0.0, 0.0, 0.0, 0.0])
            s = res.scores
            for i, x in enumerate((s.utility, s.leakage, s.soft, 1.0)):
                row[i] += x
            v.n[res.instance.role] = v.n.get(res.instance.role, 0) + 1
        if len(per_card) < 2:
            v.error = f"only {len(per_card)} card(s) scored ({v.failures} judgement(s) failed)"
            continue
        v.checks, v.means = checks_for(per_card, rounds=rounds, seed=seed)
    return Validation(len(cards), 0, len(base), dict(missing), {k: dict(x) for k, x in sources.items()},
                      decoys.name, deck_name, verdicts, examples, "")


def render(res: Validation) -> str:
    """The printed verdict: per evaluator, per ordering, with the intervals and what was measured on what."""
    lines = [f"SNEAK evaluator validation on {res.cards} held-back card(s) ({res.deck}; {res.left_out} left out as "
             f"calibration cards), {res.instances} secrets, decoys {res.decoys}, baselines from WordNet 3.0 and the "
             "Moby Thesaurus.",
             f"Deck: {res.deck_key or 'a part of the held-back cards'}"
             + ("" if res.deck_key == BUNDLED else " (a verdict here never replaces the bundled cards' verdict, which "
                "the bot's start reads)"),
             "Baseline messages: " + "; ".join(
                 f"{b}: " + ", ".join(f"{n} {src}" for src, n in sorted(res.sources.get(b, {}).items()))
                 + (f", {res.missing[b]} none" if res.missing.get(b) else "") for b in (x.value for x in Baseline)),
             f"Intervals: 95% percentile bootstrap over cards ({BOOTSTRAP_ROUNDS} rounds); scale 0-100."]
    for v in res.verdicts:
        lines.append("")
        lines.append(f"{v.spec}: {'VALID' if v.valid else 'NOT VALID'} — {v.reason()}")
        if v.error:
            continue
        lines.append(f"  {'baseline':<16}{'Util.':>8}{'Leak.':>8}{'S.S.':>8}{'n':>7}")
        for b in Baseline:
            m = v.means[b.value]
            lines.append(f"  {b.value:<16}{m['utility']:8.1f}{m['leakage']:8.1f}{m['soft']:8.1f}{v.n.get(b.value, 0):7d}")
        if v.failures:
            lines.append(f"  ({v.failures} judgement(s) failed and are left out)")
        lines += [f"  {c.text()}" for c in v.checks]
    return "\n".join(lines)


# --------------------------------------------------------------------------- the record the bot's start reads


def digest(fp: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


def _record_text() -> str:
    try:
        return resources.files("models.eval").joinpath("data", RECORD_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return "{}"


def record_key(fp: dict[str, Any], deck: str) -> str:
    """A record's key: the evaluator's fingerprint digest and the deck (``deck_key``)."""
    return f"{digest(fp)}@{deck}"


def records(text: str | None = None) -> dict[str, dict[str, Any]]:
    """Stored verdicts by ``record_key``."""
    data: dict[str, dict[str, Any]] = json.loads(text if text is not None else _record_text())
    return data


class NotRecordable(ValueError):
    """A validation run that may not be kept as a verdict; the message is one sentence."""


def recordable(res: Validation) -> str | None:
    """Why ``res`` may not be recorded (one sentence), or None."""
    if not res.deck_key:
        return "a partial run (--cards) is not recorded: a verdict covers every held-back card"
    if res.cards < MIN_RECORD_CARDS:
        return (f"{res.cards} held-back card(s) are too few to record a verdict (at least {MIN_RECORD_CARDS}: "
                "fewer give intervals a handful of cards decides)")
    return None


def record(res: Validation, path: Path) -> dict[str, dict[str, Any]]:
    """Add (or replace) each evaluator's verdict on this deck in the record file at ``path``; returns the new
    content. Verdicts on other decks, the bundled one included, are kept. ``NotRecordable`` (nothing written)
    for a run ``recordable`` refuses."""
    why = recordable(res)
    if why is not None:
        raise NotRecordable(why)
    data = records(path.read_text(encoding="utf-8") if path.exists() else "{}")
    for v in res.verdicts:
        data[record_key(v.fingerprint, res.deck_key)] = {
            "spec": v.spec, "fingerprint": v.fingerprint, "valid": v.valid, "reason": v.reason(),
            "checks": [dataclasses.asdict(c) for c in v.checks], "means": v.means, "cards": res.cards,
            "deck": res.deck, "deck_key": res.deck_key, "decoys": res.decoys,
            "date": datetime.now(UTC).date().isoformat(),
        }
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return data


def other_decks(spec: str, stored: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Recorded verdicts of ``spec`` on decks other than the bundled cards (for reports; the start ignores them)."""
    prefix = digest(fingerprint(spec)) + "@"
    rows = (stored if stored is not None else records()).items()
    return [v for k, v in sorted(rows) if k.startswith(prefix) and k != prefix + BUNDLED]


class EvaluatorRefused(ValueError):
    """A configured evaluator has not passed validation; the message is one line for the operator."""


OVERRIDE = "!"  # "!llm:default" in HUSHTABLE_SNEAK_EVALUATORS: use it although it has not passed


def standing(spec: str, stored: dict[str, dict[str, Any]] | None = None) -> str | None:
    """Why ``spec`` may not judge chat clues (one line), or None when it passed validation."""
    try:
        fp = fingerprint(spec)
    except ValueError as exc:
        return f"SNEAK evaluator {spec!r} is not an evaluator: {exc}"
    rec = (stored if stored is not None else records()).get(record_key(fp, BUNDLED))
    if rec is None:
        return (f"SNEAK evaluator {spec} has not been validated on the bundled cards with these settings; run `hushtable sneak validate "
                f"-e {spec} --record`, or write {OVERRIDE}{spec} to use it anyway")
    if not rec.get("valid"):
        return (f"SNEAK evaluator {spec} failed validation on {rec.get('cards')} held-back cards "
                f"({rec.get('reason')}); write {OVERRIDE}{spec} to use it anyway")
    return None


def admitted(specs: Sequence[str], stored: dict[str, dict[str, Any]] | None = None) -> list[str]:
    """The configured evaluators, each checked: ``EvaluatorRefused`` (one line) for the first that has not
    passed validation and carries no ``!`` override; the specs without their override marks otherwise."""
    out: list[str] = []
    for raw in specs:
        spec = raw.strip()
        if spec.startswith(OVERRIDE):
            spec = spec[len(OVERRIDE):].strip()
            try:
                fingerprint(spec)  # still a real evaluator spec
            except ValueError as exc:
                raise EvaluatorRefused(f"SNEAK evaluator {spec!r} is not an evaluator: {exc}") from None
        else:
            why = standing(spec, stored)
            if why is not None:
                raise EvaluatorRefused(why)
        out.append(spec)
    if not out:
        raise EvaluatorRefused("HUSHTABLE_SNEAK_EVALUATORS names no evaluator")
    return out

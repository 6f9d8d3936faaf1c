"""SNEAK appendix E.3: which relation between a message and its secret works? (``hushtable sneak relations``)

Each message is classified by its WordNet 3.0 relation to the secret (``models.eval.wordnet``; no
embedding or language model, so the labels are independent of the evaluators), the first that holds:

- **synonym**: the message names one of the secret's noun senses (they share a synset);
- **hyponym**: a sense of the message lies under a sense of the secret (a kind of it: dog -> puppy);
- **hypernym**: a sense of the secret lies under a sense of the message (broader: dog -> canine);
- **meronym/holonym**: a member link between the two senses, or a chain of up to two part or substance links,
  either way (tree -> trunk, tree -> forest);
- **coordinate**: a sense of each shares a direct hypernym (siblings: dog -> wolf);
- **gloss word**: a word of the message is in the definition of a sense of the secret, or the secret in
  the message's (tea -> leaves: "dried leaves of the tea shrub");
- **other/association**: none of these, messages WordNet does not know included (counted apart).

Every noun sense of both words is tried (the card's sense is not singled out), so a relation through a
rare sense counts. A message of several words is tried whole first, then word by word (the first
relation in the order above that any word has). The paper's E.3 labels messages by hand-style
property-norm types (entity, situation, taxonomic, introspective; Wu & Barsalou 2009, McRae et al.
2005), which WordNet cannot tell apart; synonym, hypernym, hyponym and coordinate are its taxonomic
relations, meronym/holonym its entity parts, and a gloss word or an association mostly its situation
and entity properties. The paper gives no numbers in its text for E.3 (a figure and a summary).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from games.base import normalize
from models.eval.metrics import AVERAGE
from models.eval.score import Evaluation
from models.eval.summary import METRICS, Scored, summarise
from models.eval.wordnet import GENERIC_HEADS, Synset, WordNet


class Relation(StrEnum):
    SYNONYM = "synonym"
    HYPONYM = "hyponym"
    HYPERNYM = "hypernym"
    PART = "meronym/holonym"
    COORDINATE = "coordinate"
    GLOSS = "gloss word"
    OTHER = "other/association"


MEMBER_LINKS = frozenset({"%m", "#m"})
PART_STEPS = 2
PAPER_E3 = (
    "The paper (App. E.3; no numbers in its text): entity relations (attributes, parts, materials) score best and "
    "taxonomic ones (superordinates, synonyms, coordinates) worst, coordinates among the poorest for their "
    "ambiguity;\nfunctional relations, synonyms and entity behaviours leak more, temporal and action associations "
    "leak less. Ours: WordNet relations, not its property-norm labels (see models/eval/relations.py).")


@dataclass(frozen=True, slots=True)
class Label:
    relation: Relation
    known: bool  # WordNet knows the message (or a word of it)


def _words(text: str) -> list[str]:
    return [w.strip(".,;:()\"'!?") for w in normalize(text).replace("-", " ").split()]


class Classifier:
    """Labels (message, secret) pairs from WordNet, caching each word's senses."""

    def __init__(self, wn: WordNet) -> None:
        self.wn = wn
        self._senses: dict[str, list[Synset]] = {}

    def senses(self, term: str) -> list[Synset]:
        """The term's own noun senses (never a head word's: 'ice cream' is not 'cream')."""
        if term not in self._senses:
            lem = self.wn.lemma(term)
            self._senses[term] = self.wn.senses(lem) if lem is not None else []
        return self._senses[term]

    def known(self, term: str) -> bool:
        return any(self.wn.lemma(term, pos) is not None for pos in ("noun", "adj", "verb"))

    def _parents(self, s: Synset) -> set[str]:
        return {off for sym, off, p in s.links if sym in ("@", "@i") and p == "n"}

    def _parts(self, senses: Sequence[Synset]) -> set[str]:
        """Offsets reached from ``senses`` by a member link, or by up to PART_STEPS part or substance links in one
        direction (a petal is part of a corolla, part of a flower; never part of a whole and then another part
        of it, a sibling)."""
        out = {off for s in senses for sym, off, p in s.links if sym in MEMBER_LINKS and p == "n"}
        for way in (("%p", "%s"), ("#p", "#s")):
            level = list(senses)
            for _ in range(PART_STEPS):
                level = [t for s in level for sym, off, p in s.links if sym in way and p == "n"
                         and (t := self.wn.synsets.get((off, "n"))) is not None]
                out.update(t.offset for t in level)
        return out

    def _definitions(self, senses: Sequence[Synset]) -> set[str]:
        out: set[str] = set()
        for s in senses:
            out.update(_words(s.gloss.split(";")[0].split('"')[0]))
        return out

    def term_relation(self, term: str, secret: str, secret_senses: Sequence[Synset]) -> Relation | None:
        mine = self.senses(term)
        if mine and secret_senses:
            own = {s.offset for s in secret_senses}
            if own & {m.offset for m in mine}:
                return Relation.SYNONYM
            if any(own & self.wn.closure(m).keys() for m in mine):
                return Relation.HYPONYM
            if any({m.offset for m in mine} & self.wn.closure(s).keys() for s in secret_senses):
                return Relation.HYPERNYM
            if self._parts(secret_senses) & {m.offset for m in mine}:
                return Relation.PART
            secret_parents = set().union(*(self._parents(s) for s in secret_senses))
            if any(self._parents(m) & secret_parents for m in mine):
                return Relation.COORDINATE
        lemma = self.wn.lemma(term) or term
        secret_words = set(_words(secret)) | {normalize(self.wn.lemma(secret) or secret)}
        if {normalize(term), normalize(lemma)} & self._definitions(secret_senses) or \
                secret_words & self._definitions(mine):
            return Relation.GLOSS
        return None

    def label(self, message: str, secret: str) -> Label:
        secret_senses = self.senses(secret) or self.wn.senses(secret)
        whole = "_".join(_words(message))
        terms = [whole] + [w for w in _words(message) if len(w) >= 3 and w not in GENERIC_HEADS and w != whole]
        found = [r for t in dict.fromkeys(terms) if (r := self.term_relation(t, secret, secret_senses)) is not None]
        order = list(Relation)
        if found:
            return Label(min(found, key=order.index), True)
        return Label(Relation.OTHER, any(self.known(t) for t in terms))


@dataclass(frozen=True, slots=True)
class RelationRow:
    method: str
    relation: Relation
    n: int  # messages
    unknown: int  # of them, messages WordNet does not know (other/association only)
    means: dict[str, float]  # metric -> x100, averaged over evaluators (each evaluator's mean first)
    failures: int
    example: str  # one "secret -> message" pair


@dataclass(frozen=True, slots=True)
class Relations:
    rows: list[RelationRow]
    methods: list[str]
    evaluators: list[str]


def relations(evals: Sequence[Evaluation], wn: WordNet, order: Sequence[str]) -> Relations:
    """Per method and relation: how many messages, and their mean metrics across the evaluators."""
    c = Classifier(wn)
    labels: dict[tuple[str, str], Label] = {}
    counted: dict[tuple[str, Relation], Counter[str]] = defaultdict(Counter)
    examples: dict[tuple[str, Relation], str] = {}
    items: list[Scored] = []
    for e in evals:
        inst = e.instance
        if inst.message is None:
            continue
        key = (inst.message, inst.secret)
        if key not in labels:
            labels[key] = c.label(inst.message, inst.secret)
        lab = labels[key]
        cell = (inst.role, lab.relation)
        ident = f"{inst.category}\x1f{inst.secret}"
        if ident not in counted[cell]:
            counted[cell][ident] = 0 if lab.known else 1
        examples.setdefault(cell, f"{inst.secret} -> {inst.message}")
        items.append(Scored(f"{inst.role}\x1f{lab.relation.value}", e.evaluator, e.scores))
    summary = summarise(items)
    evaluators = sorted({r.evaluator for r in summary if r.evaluator != AVERAGE})
    chosen = AVERAGE if len(evaluators) > 1 else (evaluators[0] if evaluators else AVERAGE)
    rows = []
    for r in summary:
        if r.evaluator != chosen:
            continue
        method, rel = r.group.split("\x1f")
        cell = (method, Relation(rel))
        x = r.scores.x100()
        rows.append(RelationRow(method, Relation(rel), len(counted[cell]), sum(counted[cell].values()),
                                {m: x[m] for m in METRICS}, r.failures, examples[cell]))
    rank = {m: i for i, m in enumerate(order)}
    rel_order = list(Relation)
    rows.sort(key=lambda r: (rank.get(r.method, len(rank)), r.method, rel_order.index(r.relation)))
    methods = list(dict.fromkeys(r.method for r in rows))
    return Relations(rows, methods, evaluators)


def relations_text(res: Relations, seconds: float, cores: int) -> str:
    ev = "averaged over " + ", ".join(res.evaluators) if len(res.evaluators) > 1 else \
        (res.evaluators[0] if res.evaluators else "no evaluator")
    lines = [f"Message relation to the secret (SNEAK App. E.3), by WordNet; metrics x100 ({ev})",
             f"{'method':<18}{'relation':<19}{'n':>5}{'share':>7}" + "".join(f"{m:>9}" for m in METRICS)
             + f"{'fail':>6}  example (unknown: messages WordNet does not know)"]
    for method in res.methods:
        mine = [r for r in res.rows if r.method == method]
        total = sum(r.n for r in mine) or 1
        for r in mine:
            note = f"  [unknown {r.unknown}]" if r.unknown else ""
            lines.append(f"{method[:17]:<18}{r.relation.value:<19}{r.n:>5}{100 * r.n / total:>6.0f}%"
                         + "".join(f"{r.means[m]:>9.2f}" for m in METRICS) + f"{r.failures:>6}  {r.example[:40]}{note}")
    lines.append("\n" + PAPER_E3)
    lines.append(f"took {seconds:.1f} s (models loaded, messages generated, scored and labelled) on {cores} core(s)")
    return "\n".join(lines)


__all__ = ["Classifier", "Label", "Relation", "RelationRow", "Relations", "relations", "relations_text"]

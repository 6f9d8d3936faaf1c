"""Strategy from the SNEAK objective, estimated cheaply with the bundled embedding model.

A clue-giver wants high utility for its allies and low leakage to the adversary.
``EmbeddingJudge`` estimates both the way SNEAK measures them, with cosine
similarities of all-MiniLM-L6-v2 in place of an evaluator model's label scores:

- ally (knows the secret ``w``): sees the clue among decoys made without the secret
  (for the card words nearest the secret, each one's nearest vocabulary word off the
  card); ``p_ally`` is the softmax over ``sim(message, w) / TAU`` at the clue;
- chameleon (does not know ``w``): ``p_cham`` is the softmax over the card words of
  ``sim(clue, word) / TAU`` at ``w``;
- Utility = max(0, (p_ally - 1/|M|) / (1 - 1/|M|)), Leakage = max(0, (p_cham - 1/|W|) / (1 - 1/|W|)),
  SoftScore = Utility * (1 - Leakage) (the paper's definitions).

``SneakJudge`` is the same three numbers by the SNEAK evaluation issue's bundled
embedding evaluator (``models/eval``: category-level decoys, calibrated temperatures);
the strategy ranks clues by it when it is there (``judge=sneak``, the default) and by
``EmbeddingJudge``, our own small estimate, otherwise (``judge=own``).

Beside clue ranking, ``choice_evidence`` gives votes and guesses their evidence (the
clue least likely made with the secret, the description farthest from one's own
word, the card word the clues point to, the code the hints map to) and
``rank_texts`` orders free-text candidates for every role.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from games.base import Action, ActionSpec, Choice, Observation, Text, normalize
from models.agents.embed import (
    Embedder,
    VocabIndex,
    code_scores,
    decrypto_decode,
    decrypto_intercept,
    mean_vec,
    overlaps,
    spy_target,
)

TAU = 0.07
"""Temperature of the similarity softmaxes: MiniLM cosines of related words sit ~0.2 above unrelated ones."""
DECOYS = 5


def _softmax(xs: Sequence[float], tau: float = TAU) -> list[float]:
    m = max(xs)
    exps = [math.exp((x - m) / tau) for x in xs]
    z = sum(exps)
    return [e / z for e in exps]


def _chance_corrected(p: float, n: int) -> float:
    return max(0.0, (p - 1.0 / n) / (1.0 - 1.0 / n)) if n > 1 else 0.0


class EmbeddingJudge:
    """SNEAK's utility, leakage and SoftScore for a clue, estimated with word embeddings."""

    def __init__(self, index: VocabIndex) -> None:
        self.index = index
        self._decoys = lru_cache(maxsize=256)(self._decoys_for)

    def _decoys_for(self, secret: str, card: tuple[str, ...]) -> tuple[str, ...]:
        """Clues made without the secret: for the card words nearest it, each one's nearest word off the card."""
        others = [w for w in card if normalize(w) != normalize(secret)]
        if not others:
            return ()
        sims = self.index.vecs(others) @ self.index.vec(secret)
        chosen = [others[i] for i in np.argsort(-sims, kind="stable")[:DECOYS]]
        on_card = {normalize(w) for w in card}
        out: list[str] = []
        for w in chosen:
            for i in self.index.ranked(self.index.vec(w))[:64]:
                cand = self.index.words[int(i)]
                if cand not in on_card and cand not in out and not any(overlaps(cand, c) for c in card):
                    out.append(cand)
                    break
        return tuple(out)

    def utility(self, clue: str, secret: str, card: Sequence[str]) -> float:
        messages = [clue, *self._decoys(secret, tuple(card))]
        sims = self.index.vecs(messages) @ self.index.vec(secret)
        return _chance_corrected(_softmax([float(x) for x in sims])[0], len(messages))

    def leakage(self, clue: str, secret: str, card: Sequence[str]) -> float:
        sims = self.index.vecs(list(card)) @ self.index.vec(clue)
        probs = _softmax([float(x) for x in sims])
        at = next((i for i, w in enumerate(card) if normalize(w) == normalize(secret)), None)
        return _chance_corrected(probs[at], len(card)) if at is not None else 0.0

    def soft_score(self, clue: str, secret: str, card: Sequence[str], category: str = "") -> float:
        return self.utility(clue, secret, card) * (1.0 - self.leakage(clue, secret, card))


class SneakJudge:
    """The SNEAK evaluation issue's own embedding evaluator (``models/eval``: category-level embedding
    decoys, calibrated temperatures) behind the same ``soft_score``: what ``llm:default`` ranks clues by."""

    def __init__(self, embedder: Embedder) -> None:
        from models.eval.decoys import EmbeddingDecoys
        from models.eval.evaluators import EmbeddingEvaluator

        self.evaluator = EmbeddingEvaluator(embedder, f"embed:{embedder.model_id}")
        self.decoys = EmbeddingDecoys(embedder)

    def soft_score(self, clue: str, secret: str, card: Sequence[str], category: str = "") -> float:
        from models.eval.decoys import pick
        from models.eval.evaluators import secret_index
        from models.eval.instances import Instance
        from models.eval.metrics import score

        try:
            inst = Instance("chameleon", category, tuple(card), secret, clue)
            chosen = pick(self.decoys.pool_now(category, inst.candidates), clue)
        except ValueError:  # the secret is not on the card, or too few decoys: no estimate
            return 0.0
        ally, cham = self.evaluator.ally_now(inst, (clue, *chosen)), self.evaluator.chameleon_now(inst)
        return score(ally.probs, 0, cham.probs, secret_index(inst)).soft


_JUDGES: dict[int, tuple[Embedder, SneakJudge]] = {}


def sneak_judge(embedder: Embedder) -> SneakJudge:
    """One judge per embedding model (the process's embedders live as long as it): its decoy vocabulary is embedded once."""
    hit = _JUDGES.get(id(embedder))
    if hit is None or hit[0] is not embedder:
        hit = _JUDGES[id(embedder)] = (embedder, SneakJudge(embedder))
    return hit[1]


Judge = EmbeddingJudge | SneakJudge


# --------------------------------------------------------------------------- choices: the evidence


def choice_evidence(index: VocabIndex, obs: Observation, spec: Choice) -> dict[str, float] | None:
    """A score per option id, higher = more likely right, from the seat's own information; None when there is none."""
    v = obs.view
    ids = list(spec.ids())
    if obs.game == "decrypto" and spec.kind == "guess":
        current = v["current_hints"]
        hints = current["hints"]
        if v["keywords"] is not None and current["team"] == v["team"]:
            keywords = [v["keywords"][str(d)] for d in range(1, 5)]
            _, sim = decrypto_decode(index, keywords, hints, ids)
        else:
            history = v["hint_history"] if v["variant"] == "benchmark" else v["hint_history"][current["team"]]
            if not any(history.get(str(d)) for d in range(1, 5)):
                return None
            import random

            _, sim = decrypto_intercept(index, history, hints, ids, random.Random(0))
        scores = code_scores(sim, ids)
        return scores or None
    if obs.game == "spy" and spec.kind == "vote":
        target = spy_target(index, v)
        if target is None:
            return None
        out: dict[str, float] = {}
        for opt in ids:
            texts = [d["text"] for d in v["descriptions"] if str(d["seat"]) == opt]
            # The description farthest from one's own word is the likeliest spy's.
            out[opt] = -float(mean_vec(index.vecs(texts)) @ target) if texts else -1.0
        return out
    if obs.game == "chameleon" and spec.kind == "vote":
        secret = v["secret"]
        target = index.vec(secret) if secret and not v["is_chameleon"] else mean_vec(index.vecs(v["card"]))
        clue_of = {str(c["seat"]): c["clue"] for c in v["clues"]}
        # The clue least likely made with the secret (for the chameleon: with the card's theme).
        return {opt: -float(index.vec(clue_of[opt]) @ target) if opt in clue_of else -1.0 for opt in ids}
    if obs.game == "chameleon" and spec.kind == "guess":
        clues = [c["clue"] for c in v["clues"] if c["seat"] != v["seat"]]
        if not clues:
            return None
        target = mean_vec(index.vecs(clues))
        # The card word the clues point to.
        return {o.id: float(index.vec(o.label) @ target) for o in spec.options}
    return None


def evidence_probs(scores: Mapping[str, float], ids: Sequence[str], tau: float = TAU) -> list[float]:
    """The evidence as a distribution over ``ids`` (missing options get the lowest score)."""
    low = min(scores.values()) if scores else 0.0
    return _softmax([scores.get(i, low) for i in ids], tau)


# --------------------------------------------------------------------------- free text: candidates and their ranking


def neighbour_words(index: VocabIndex, target: np.ndarray, k: int, avoid: Sequence[str], spec: Text) -> list[str]:
    """The ``k`` vocabulary words nearest ``target`` that fit the spec and overlap none of ``avoid``."""
    out: list[str] = []
    taken = {normalize(a) for a in avoid}
    for i in index.ranked(target):
        w = index.words[int(i)]
        if len(w) <= spec.max_chars and len(w.split()) <= spec.max_words and w not in taken \
                and not any(overlaps(w, a) for a in avoid if a):
            out.append(w)
            if len(out) >= k:
                break
    return out


def field_candidates(index: VocabIndex, obs: Observation, spec: Text, k: int = 12) -> list[list[str]]:
    """Embedding neighbours for each field of the answer (the secret's, each keyword's, the table's)."""
    v = obs.view
    if obs.game == "decrypto" and spec.kind == "hints":
        keywords = [v["keywords"][str(d)] for d in range(1, 5)]
        history = v["hint_history"] if v["variant"] == "benchmark" else v["hint_history"][v["team"]]
        used = [h for hs in history.values() for h in hs]
        code = [int(x) for x in v["code"].split("-")]
        return [neighbour_words(index, index.vec(keywords[d - 1]), k, [*keywords, *used], spec) for d in code]
    if obs.game == "decrypto" and spec.kind == "keywords":
        other = "B" if v["team"] == "A" else "A"
        out = []
        for d in range(1, 5):
            hints = v["hint_history"][other].get(str(d), [])
            out.append(neighbour_words(index, mean_vec(index.vecs(hints)), k, hints, spec) if hints else [])
        return out
    if obs.game == "spy":
        said = [d["text"] for d in v["descriptions"]]
        target = spy_target(index, v)
        if target is None:
            return [[]]
        avoid = [v["my_word"]] if v["my_word"] else []
        if spec.kind == "guess":
            return [neighbour_words(index, target, k, said, spec)]
        return [neighbour_words(index, target, k, [*avoid, *said], spec)]
    if obs.game == "chameleon" and spec.kind == "clue":
        card = list(v["card"])
        given = [c["clue"] for c in v["clues"]]
        secret = v["secret"]
        target = index.vec(secret) if secret and not v["is_chameleon"] else mean_vec(index.vecs(card))
        return [neighbour_words(index, target, k, [*card, *given], spec)]
    return [[] for _ in spec.fields]


def field_score(index: VocabIndex, obs: Observation, kind: str, field: int, text: str) -> float:
    """The part of a multi-field answer's score that one field earns (Decrypto hints and tie-break keywords)."""
    v = obs.view
    if kind == "hints":
        keywords = [v["keywords"][str(d)] for d in range(1, 5)]
        d = int(v["code"].split("-")[field])
        history = v["hint_history"] if v["variant"] == "benchmark" else v["hint_history"][v["team"]]
        sims = index.vecs(keywords) @ index.vec(text)
        # Our decoder maps it to the keyword: the margin over the other keywords.
        margin = float(sims[d - 1]) - max(float(s) for j, s in enumerate(sims) if j != d - 1)
        # The interceptor places it from the hint history of this number: keep away from it.
        past = history.get(str(d), [])
        placed = float(mean_vec(index.vecs(past)) @ index.vec(text)) if past else 0.0
        return margin - 0.5 * max(0.0, placed - 0.3)
    if kind == "keywords":
        other = "B" if v["team"] == "A" else "A"
        hints = v["hint_history"][other].get(str(field + 1), [])
        return float(index.vec(text) @ mean_vec(index.vecs(hints))) if hints else 0.0
    return 0.0


def rank_texts(index: VocabIndex, judge: Judge, obs: Observation, spec: ActionSpec,
               actions: Sequence[Action]) -> list[tuple[Action, float]]:
    """Candidates with their strategy score, best first (stable for equal scores)."""
    scored = [(a, text_score(index, judge, obs, a)) for a in actions]
    return sorted(scored, key=lambda x: -x[1])


def text_score(index: VocabIndex, judge: Judge, obs: Observation, action: Action) -> float:
    """How good a free-text answer is for this seat's side (higher is better)."""
    v = obs.view
    texts = list(action.value)
    if obs.game == "chameleon" and action.kind == "clue":
        card = list(v["card"])
        if v["secret"] and not v["is_chameleon"]:
            return judge.soft_score(texts[0], v["secret"], card, str(v.get("category") or ""))
        # The chameleon: fit the likely secrets about equally, the ones the clues so far point to most.
        sims = index.vecs(card) @ index.vec(texts[0])
        clues = [c["clue"] for c in v["clues"] if c["seat"] != v["seat"]]
        post = _softmax([float(x) for x in index.vecs(card) @ mean_vec(index.vecs(clues))]) if clues else [1 / len(card)] * len(card)
        fit = float(sum(p * s for p, s in zip(post, sims, strict=True)))
        spread = float(np.std(sims))
        return fit - spread
    if obs.game == "decrypto" and action.kind in ("hints", "keywords"):
        return sum(field_score(index, obs, action.kind, i, t) for i, t in enumerate(texts))
    if obs.game == "spy" and action.kind == "describe":
        target = spy_target(index, v)
        if target is None:
            return 0.0
        sim = float(index.vec(texts[0]) @ target)
        # Related enough for the allies, not so close that it gives the word away to the other side.
        return sim - 2.0 * max(0.0, sim - 0.55)
    if obs.game == "spy" and action.kind == "guess":
        said = [d["text"] for d in v["descriptions"] if d["seat"] != v["my_seat"]]
        return float(index.vec(texts[0]) @ mean_vec(index.vecs(said))) if said else 0.0
    return 0.0


__all__ = [
    "DECOYS",
    "TAU",
    "EmbeddingJudge",
    "Judge",
    "SneakJudge",
    "choice_evidence",
    "evidence_probs",
    "field_candidates",
    "field_score",
    "neighbour_words",
    "rank_texts",
    "sneak_judge",
    "text_score",
]

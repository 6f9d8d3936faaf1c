"""Word-embedding baselines for every role of every game (``embed:minilm?k=16``).

Decrypto follows the benchmark paper's appendix D:

- encoder: for each code digit, sample the hint uniformly from the top-K
  vocabulary words most similar to that digit's keyword, keeping only words
  more similar to that keyword than to each of the other three (the margin
  constraint), never a hint used before in the game, never a keyword or a word
  containing one. When the top K hold no such word, the nearest word beyond K
  that satisfies the constraint is used.
- decoder: assigns each hint to its most similar keyword (the paper's greedy
  argmax). With the same embedding model on both sides the margin constraint
  makes this exactly the code. When the greedy digits collide (another
  encoder's hints) or name a code that is not offered, the offered code with
  the highest total similarity is taken; that is the greedy code whenever the
  greedy code is legal, so nothing changes in the paper's setting.
- interceptor: compares each hint with the mean embedding of each keyword
  number's hint history (empty history: similarity 0, and a uniform random
  code while every history is empty) and solves the 3x4 assignment that
  maximises total similarity with ``scipy.optimize.linear_sum_assignment``.

Who-is-Spy: describe with a top-K word related to one's word but not
containing it and not said before; vote for the player whose descriptions are
least similar to one's own word. Mr. White (no word) aims at the mean of the
table's descriptions. Chameleon: a player's clue is a top-K word near the
secret that is not on the card; the chameleon's clue is a top-K word near the
card's centroid; vote for the player whose clue is least similar to the secret
(the chameleon: to the card's centroid); the caught chameleon guesses the card
word closest to the mean of the other players' clues.

Every draw comes from the agent's seed, the game, the seat and the turn, so a
replayed game replays the same answers.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from scipy.optimize import linear_sum_assignment

from games.base import Action, ActionSpec, Choice, Observation, Text, contains_word, normalize, rng, words_of
from models.agents.base import CallLog, Check, Decision
from models.agents.vocab import default_vocab

DEFAULT_K = 16
log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Unit-length vectors for texts: ``embed(texts)`` is an (n, d) float array whose rows have norm 1."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


class VocabIndex:
    """The vocabulary and its embedding matrix, computed once on first use and shared by every agent."""

    def __init__(self, embedder: Embedder, words: Sequence[str] | None = None) -> None:
        self.embedder = embedder
        self.words: tuple[str, ...] = tuple(words) if words is not None else default_vocab()
        self._keys = tuple(normalize(w) for w in self.words)
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()

    @property
    def matrix(self) -> np.ndarray:
        with self._lock:
            if self._matrix is None:
                self._matrix = np.asarray(self.embedder.embed(list(self.words)), dtype=np.float32)
            return self._matrix

    def warm(self) -> None:
        """Embed the vocabulary now (a background thread at start-up), so no move pays for it."""
        try:
            _ = self.matrix
        except Exception as exc:  # a missing model is reported by the move that needs it
            log.debug("vocabulary warm-up failed: %s", type(exc).__name__)

    def vec(self, text: str) -> np.ndarray:
        row: np.ndarray = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        return row

    def vecs(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def ranked(self, target: np.ndarray) -> np.ndarray:
        """Vocabulary indices, most similar to ``target`` first (stable on ties)."""
        return np.argsort(-(self.matrix @ target), kind="stable")


def unit_vec(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def mean_vec(vecs: np.ndarray) -> np.ndarray:
    return unit_vec(vecs.mean(axis=0))


def overlaps(candidate: str, word: str) -> bool:
    """True when ``candidate`` names or contains ``word`` (or the reverse), as words or inside one.

    Stricter than any engine's rule on purpose: a baseline should never have a
    hint refused, and "firefly" for "fire" is no hint anyway.
    """
    a, b = normalize(candidate).replace(" ", ""), normalize(word).replace(" ", "")
    if not a or not b:
        return False
    if contains_word(candidate, word) or contains_word(word, candidate) or a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and short in long_


def spy_target(index: VocabIndex, v: Any) -> np.ndarray | None:
    """What a Who-is-Spy seat aims at: its word, or for Mr. White the mean of what the table said."""
    if v["my_word"]:
        return index.vec(v["my_word"])
    said = [d["text"] for d in v["descriptions"] if d["seat"] != v["my_seat"]]
    return mean_vec(index.vecs(said)) if said else None


@dataclass(frozen=True, slots=True)
class Pick:
    word: str
    similarity: float
    candidates: int  # how many words were eligible in the top K


def sample_top_k(
    index: VocabIndex,
    target: np.ndarray,
    k: int,
    r: Any,
    allowed: Callable[[int, str], bool],
) -> Pick:
    """A uniform draw among the eligible words in the top ``k``; else the nearest eligible word beyond."""
    order = index.ranked(target)
    sims = index.matrix @ target
    top = [int(i) for i in order[:k] if allowed(int(i), index.words[int(i)])]
    if top:
        i = top[r.randrange(len(top))]
        return Pick(index.words[i], float(sims[i]), len(top))
    for i in order[k:]:
        i = int(i)
        if allowed(i, index.words[i]):
            return Pick(index.words[i], float(sims[i]), 0)
    raise ValueError("no vocabulary word satisfies the constraints")


def fits(word: str, spec: Text) -> bool:
    return len(word) <= spec.max_chars and len(words_of(word)) <= spec.max_words


# --------------------------------------------------------------------------- Decrypto


def decrypto_hints(
    index: VocabIndex, keywords: Sequence[str], code: Sequence[int], used: Sequence[str], k: int, r: Any, spec: Text
) -> list[Pick]:
    """The encoder of appendix D: one top-K hint per digit under the margin constraint."""
    kw = index.vecs(list(keywords))
    margin = index.matrix @ kw.T  # (V, 4): each word's similarity to each keyword
    taken = {normalize(h) for h in used}
    picks: list[Pick] = []
    for d in code:
        c = d - 1
        others = [j for j in range(len(keywords)) if j != c]

        def allowed(i: int, w: str, c: int = c, others: list[int] = others) -> bool:
            return (
                all(margin[i, c] > margin[i, j] for j in others)
                and normalize(w) not in taken
                and fits(w, spec)
                and not any(overlaps(w, kword) for kword in keywords)
            )

        pick = sample_top_k(index, kw[c], k, r, allowed)
        taken.add(normalize(pick.word))
        picks.append(pick)
    return picks


def code_scores(sim: np.ndarray, options: Sequence[str]) -> dict[str, float]:
    """Total similarity of each offered code; ``sim[i, d-1]`` is hint i against keyword (or history) d."""
    out: dict[str, float] = {}
    for opt in options:
        try:
            digits = [int(x) for x in opt.split("-")]
        except ValueError:
            continue
        if len(digits) == sim.shape[0] and all(1 <= d <= sim.shape[1] for d in digits):
            out[opt] = float(sum(sim[i, d - 1] for i, d in enumerate(digits)))
    return out


def decrypto_decode(index: VocabIndex, keywords: Sequence[str], hints: Sequence[str], options: Sequence[str]) -> tuple[str, np.ndarray]:
    """The decoder of appendix D: each hint to its most similar keyword."""
    sim = index.vecs(list(hints)) @ index.vecs(list(keywords)).T
    greedy = "-".join(str(int(np.argmax(row)) + 1) for row in sim)
    if greedy in options:
        return greedy, sim
    scores = code_scores(sim, options)
    return max(scores, key=lambda o: scores[o]), sim


def decrypto_intercept(
    index: VocabIndex, history: dict[str, list[str]], hints: Sequence[str], options: Sequence[str], r: Any
) -> tuple[str, np.ndarray]:
    """The interceptor of appendix D: hints against each number's mean history, by linear assignment."""
    n_keys = 4
    sim = np.zeros((len(hints), n_keys), dtype=np.float32)
    known = [d for d in range(1, n_keys + 1) if history.get(str(d))]
    if not known:
        return options[r.randrange(len(options))], sim
    h = index.vecs(list(hints))
    for d in known:
        sim[:, d - 1] = h @ mean_vec(index.vecs(history[str(d)]))
    rows, cols = linear_sum_assignment(sim, maximize=True)
    order = np.argsort(rows)
    best = "-".join(str(int(cols[i]) + 1) for i in order)
    if best in options:
        return best, sim
    # The optimal code was excluded (exclude_used_codes): the best offered one.
    scores = code_scores(sim, options)
    return max(scores, key=lambda o: scores[o]), sim


# --------------------------------------------------------------------------- the agent


class EmbeddingAgent:
    """A Player for every role of Decrypto, Who-is-Spy and Chameleon, on word embeddings."""

    def __init__(self, index: VocabIndex, *, seed: int = 0, k: int = DEFAULT_K, spec: str = "embed:minilm") -> None:
        if k < 1:
            raise ValueError("k must be at least 1")
        self.spec = spec
        self.index = index
        self.seed = seed
        self.k = k

    async def act(
        self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0, check: Check | None = None
    ) -> Decision:
        started = time.perf_counter()
        # Embedding is CPU work: keep it off the event loop the bot's platforms share.
        action, note = await asyncio.to_thread(self.decide, obs, spec, attempt)
        log = CallLog(
            self.spec,
            model_id=self.index.embedder.model_id,
            operation="embed",
            prompt={"game": obs.game, "phase": obs.phase, "kind": spec.kind, "feedback": feedback, "attempt": attempt},
            raw_output=" | ".join(action.value),
            label_probs=note or None,
            latency_ms=(time.perf_counter() - started) * 1000,
            retries=attempt,
        )
        return Decision(action, (log,))

    def _rng(self, obs: Observation, attempt: int) -> Any:
        # The attempt is in the seed: a re-ask after a refusal draws another answer.
        return rng(self.seed, "embed-agent", obs.game, obs.seat, len(obs.events), obs.phase, attempt)

    def decide(self, obs: Observation, spec: ActionSpec, attempt: int = 0) -> tuple[Action, dict[str, float]]:
        """The action and, for choices, the score of each option (logged in place of label probabilities)."""
        r = self._rng(obs, attempt)
        if isinstance(spec, Choice) and len(spec.options) == 1:
            return Action.choose(spec.kind, spec.options[0].id), {}
        handler = {
            ("decrypto", "hints"): self._decrypto_hints,
            ("decrypto", "guess"): self._decrypto_guess,
            ("decrypto", "keywords"): self._decrypto_keywords,
            ("spy", "describe"): self._spy_describe,
            ("spy", "vote"): self._spy_vote,
            ("spy", "guess"): self._spy_guess,
            ("chameleon", "clue"): self._chameleon_clue,
            ("chameleon", "vote"): self._chameleon_vote,
            ("chameleon", "guess"): self._chameleon_guess,
        }.get((obs.game, spec.kind))
        if handler is None:
            raise ValueError(f"the embedding baseline does not play {obs.game}/{spec.kind}")
        return handler(obs, spec, r)

    # ----------------------------------------------------------------- Decrypto

    @staticmethod
    def _team_view(view: Any, key: str) -> Any:
        """Benchmark views hold one team's history; teams views hold {"A": ..., "B": ...}."""
        return view[key] if view["variant"] == "benchmark" else view[key][view["team"]]

    def _decrypto_hints(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Text)
        v = obs.view
        keywords = [v["keywords"][str(d)] for d in range(1, 5)]
        code = [int(x) for x in v["code"].split("-")]
        history = self._team_view(v, "hint_history")
        used = [h for hs in history.values() for h in hs]
        picks = decrypto_hints(self.index, keywords, code, used, self.k, r, spec)
        return Action.say(spec.kind, *(p.word for p in picks)), {p.word: p.similarity for p in picks}

    def _decrypto_guess(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Choice)
        v = obs.view
        current = v["current_hints"]
        hints, options = current["hints"], list(spec.ids())
        if v["keywords"] is not None and current["team"] == v["team"]:
            keywords = [v["keywords"][str(d)] for d in range(1, 5)]
            guess, sim = decrypto_decode(self.index, keywords, hints, options)
        else:
            history = v["hint_history"] if v["variant"] == "benchmark" else v["hint_history"][current["team"]]
            guess, sim = decrypto_intercept(self.index, history, hints, options, r)
        return Action.choose(spec.kind, guess), code_scores(sim, options)

    def _decrypto_keywords(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        """Teams tie-break: for each number, the word nearest the other team's hints for it."""
        assert isinstance(spec, Text)
        v = obs.view
        other = "B" if v["team"] == "A" else "A"
        history = v["hint_history"][other]
        guesses: list[str] = []
        for d in range(1, 5):
            hints = history.get(str(d), [])
            if hints:
                target = mean_vec(self.index.vecs(hints))
                def allowed(i: int, w: str, hints: list[str] = hints) -> bool:
                    return fits(w, spec) and w not in guesses and not any(overlaps(w, h) for h in hints)

                pick = sample_top_k(self.index, target, 1, r, allowed)
                guesses.append(pick.word)
            else:
                pool = [w for w in self.index.words if fits(w, spec) and w not in guesses]
                guesses.append(pool[r.randrange(len(pool))])
        return Action.say(spec.kind, *guesses), {}

    # ----------------------------------------------------------------- Who-is-Spy

    def _spy_target(self, v: Any) -> np.ndarray | None:
        return spy_target(self.index, v)

    def _spy_describe(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Text)
        v = obs.view
        word = v["my_word"]
        said = {normalize(d["text"]) for d in v["descriptions"]}
        target = self._spy_target(v)

        def allowed(i: int, w: str) -> bool:
            return fits(w, spec) and w not in said and not (word and overlaps(w, word))

        if target is None:  # Mr. White speaking first: any word will do
            pool = [w for i, w in enumerate(self.index.words) if allowed(i, w)]
            return Action.say(spec.kind, pool[r.randrange(len(pool))]), {}
        pick = sample_top_k(self.index, target, self.k, r, allowed)
        return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}

    def _spy_vote(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Choice)
        v = obs.view
        target = self._spy_target(v)
        scores: dict[str, float] = {}
        for opt in spec.ids():
            texts = [d["text"] for d in v["descriptions"] if str(d["seat"]) == opt]
            if target is None or not texts:
                scores[opt] = 1.0  # nothing to hold against them
            else:
                scores[opt] = float(mean_vec(self.index.vecs(texts)) @ target)
        return Action.choose(spec.kind, _least(scores, r)), scores

    def _spy_guess(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Text)
        v = obs.view
        said = [d["text"] for d in v["descriptions"] if d["seat"] != v["my_seat"]]
        if not said:
            pool = [w for w in self.index.words if fits(w, spec)]
            return Action.say(spec.kind, pool[r.randrange(len(pool))]), {}
        target = mean_vec(self.index.vecs(said))
        pick = sample_top_k(self.index, target, 1, r, lambda i, w: fits(w, spec) and not any(overlaps(w, s) for s in said))
        return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}

    # ----------------------------------------------------------------- Chameleon

    def _card_centroid(self, v: Any) -> np.ndarray:
        return mean_vec(self.index.vecs(v["card"]))

    def _chameleon_clue(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Text)
        v = obs.view
        secret = v["secret"]
        card = {normalize(w) for w in v["card"]}
        given = {normalize(c["clue"]) for c in v["clues"]}
        target = self._card_centroid(v) if v["is_chameleon"] or not secret else self.index.vec(secret)

        def allowed(i: int, w: str) -> bool:
            return fits(w, spec) and w not in card and w not in given and not (secret and overlaps(w, secret))

        pick = sample_top_k(self.index, target, self.k, r, allowed)
        return Action.say(spec.kind, pick.word), {pick.word: pick.similarity}

    def _chameleon_vote(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Choice)
        v = obs.view
        target = self._card_centroid(v) if v["is_chameleon"] or not v["secret"] else self.index.vec(v["secret"])
        clue_of = {str(c["seat"]): c["clue"] for c in v["clues"]}
        scores = {
            opt: float(self.index.vec(clue_of[opt]) @ target) if opt in clue_of else 1.0 for opt in spec.ids()
        }
        return Action.choose(spec.kind, _least(scores, r)), scores

    def _chameleon_guess(self, obs: Observation, spec: ActionSpec, r: Any) -> tuple[Action, dict[str, float]]:
        assert isinstance(spec, Choice)
        v = obs.view
        clues = [c["clue"] for c in v["clues"] if c["seat"] != v["seat"]]
        if not clues:
            return Action.choose(spec.kind, spec.options[r.randrange(len(spec.options))].id), {}
        target = mean_vec(self.index.vecs(clues))
        scores = {o.id: float(self.index.vec(o.label) @ target) for o in spec.options}
        best = max(scores.values())
        ties = [o for o in spec.ids() if scores[o] == best]
        return Action.choose(spec.kind, ties[r.randrange(len(ties))]), scores


def _least(scores: dict[str, float], r: Any) -> str:
    low = min(scores.values())
    ties = [o for o, s in scores.items() if s == low]
    return str(ties[r.randrange(len(ties))])

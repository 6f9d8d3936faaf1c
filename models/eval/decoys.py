"""Decoy messages for the ally task: pluggable strategies, each cached per card.

The ally sees the real message shuffled among decoys "related to the category
but made without the secret" (paper section 2.2). A decoy is built from the
card alone (category and candidates), so one ranked pool per card serves every
secret of that card; per message, the first ``n`` pool entries that do not
overlap the message are used.

Strategies (a ``DecoyStrategy`` is anything with ``name`` and ``pool``):

- ``WordNetDecoys`` (default; section 2.2): WordNet's lexical attributes and
  related concepts of every card word (hypernyms up to three steps,
  attributes, holonyms, parts, topic domains; ``models/eval/wordnet.py``),
  aggregated across the card; the concepts that cover the most card words are
  kept (ties: the nearer concept, then the name). Related to the card, made
  without the secret, and independent of every evaluator (no embedding, no
  language model). Topped up from ``data/decoy_terms.txt`` in a seeded order
  when a card's words are not in WordNet.
- ``EmbeddingDecoys`` (offline): category-level terms from a
  vocabulary of broad descriptors, contexts and uses we ship
  (``data/decoy_terms.txt``; not the agents' hint vocabulary, whose deck words
  are members of other categories), ranked by the bundled MiniLM. A term scores its mean cosine
  similarity to the card's words minus ``peak_penalty`` times how far its
  similarity to the single closest card word rises above that mean: close to
  the card as a whole, close to no word in particular. Near-duplicates of an
  already chosen decoy (cosine above ``max_mutual``) are skipped, and so are
  restatements of the category name (cosine with it at or above
  ``max_category``): the paper's decoys are attributes and associations of the
  category's members (WordNet), not synonyms of the category, which is a
  reference baseline of its own. (Without that filter, on our first 10 cards
  the category-synonym baseline was barely told apart from its decoys.)
- ``LLMDecoys`` (appendix C's structure): asks a model for broad terms that
  cover many candidates, in rounds, keeping valid ones; tops up from
  ``EmbeddingDecoys`` if the model does not give enough.

``FixedDecoys`` uses a given list of terms for every card.

No decoy ever names or contains a card word (so never the secret, whichever
card word it is) or the category.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Protocol

import numpy as np

from games.base import normalize, rng
from models.embeddings import Embedder, build_vocab, overlaps, parse_vocab
from models.eval.prompts import prompt
from models.eval.wordnet import WordNet
from models.types import GenerateRequest, Inference, InferenceError

DEFAULT_DECOYS = 5
POOL_SIZE = 16


class DecoyStrategy(Protocol):
    """Ranked decoy candidates for a card; ``name`` identifies the strategy in stored settings."""

    name: str

    async def pool(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]: ...


def _stems(text: str) -> set[str]:
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in normalize(text).split() if len(w) >= 3}


def forbidden(term: str, category: str, candidates: Sequence[str]) -> bool:
    """True when a term names, contains or shares a word with the category or any card word
    (appendix C: "use words that are different from the category/candidate words")."""
    if not normalize(term):
        return True
    stems = _stems(term)
    return any(overlaps(term, w) or stems & _stems(w) for w in (category, *candidates))


def pick(pool: Sequence[str], message: str, n: int = DEFAULT_DECOYS) -> tuple[str, ...]:
    """The first ``n`` pool terms that do not overlap the message (a decoy equal to the message would be a twin)."""
    out = [t for t in pool if not overlaps(t, message)][:n]
    if len(out) < n:
        raise ValueError(f"only {len(out)} decoys left for message {message!r}; the pool is too small")
    return tuple(out)


@cache
def decoy_vocab() -> tuple[str, ...]:
    text = resources.files("models.eval").joinpath("data", "decoy_terms.txt").read_text(encoding="utf-8")
    return build_vocab(parse_vocab(text))


class WordNetDecoys:
    """The paper's WordNet decoys (see the module docstring)."""

    def __init__(self, wn: WordNet, *, size: int = POOL_SIZE, seed: int = 0) -> None:
        self.wn = wn
        self.size = size
        self.seed = seed
        self.name = f"wordnet:3.0?size={size}&seed={seed}"
        self._cache: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}

    def pool_now(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        key = (category, tuple(candidates))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        cover: dict[str, int] = {}
        near: dict[str, int] = {}
        for w in dict.fromkeys(candidates):
            for concept, steps in self.wn.related(w).items():
                cover[concept] = cover.get(concept, 0) + 1
                near[concept] = min(near.get(concept, steps), steps)
        ranked = sorted(cover, key=lambda c: (-cover[c], near[c], c.lower()))
        out: list[str] = []
        seen: set[str] = set()
        for term in ranked:
            t = term if term[:1].isupper() and not term[1:].islower() else term.lower()
            if normalize(t) in seen or forbidden(t, category, candidates) or len(t.split()) > 5:
                continue
            if any(overlaps(t, o) for o in out):  # "fruit tree" beside "tree" is one decoy twice
                continue
            out.append(t)
            seen.add(normalize(t))
            if len(out) >= self.size:
                break
        if len(out) < self.size:
            extra = [t for t in decoy_vocab() if not forbidden(t, category, candidates) and normalize(t) not in seen]
            rng(self.seed, "sneak-wordnet-topup", category).shuffle(extra)
            out += extra[: self.size - len(out)]
        self._cache[key] = tuple(out)
        return self._cache[key]

    async def pool(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        return await asyncio.to_thread(self.pool_now, category, candidates)


class FixedDecoys:
    """The same researcher-given terms for every card (minus any that touch the card): decoys from a list."""

    def __init__(self, terms: Sequence[str], name: str = "fixed") -> None:
        self.terms = tuple(terms)
        self.name = f"{name}:{len(self.terms)}"

    async def pool(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        return tuple(t for t in self.terms if not forbidden(t, category, candidates))


class EmbeddingDecoys:
    """Category-level terms near the card's centroid and near no single card word (see the module docstring)."""

    def __init__(self, embedder: Embedder, *, words: Sequence[str] | None = None, peak_penalty: float = 1.0,
                 max_mutual: float = 0.75, max_category: float = 0.5, size: int = POOL_SIZE) -> None:
        self.embedder = embedder
        self.words = tuple(words) if words is not None else decoy_vocab()
        self.peak_penalty = peak_penalty
        self.max_mutual = max_mutual
        self.max_category = max_category
        self.size = size
        self.name = f"embed:{embedder.model_id}?peak={peak_penalty:g}&mutual={max_mutual:g}&category={max_category:g}"
        self._matrix: np.ndarray | None = None
        self._cache: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def _vocab_matrix(self) -> np.ndarray:
        if self._matrix is None:
            self._matrix = np.asarray(self.embedder.embed(list(self.words)), dtype=np.float32)
        return self._matrix

    def pool_now(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        key = (category, tuple(candidates))
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            vocab = self._vocab_matrix()
            card = np.asarray(self.embedder.embed(list(candidates)), dtype=np.float32)
            to_category = vocab @ np.asarray(self.embedder.embed([category]), dtype=np.float32)[0]
            sims = vocab @ card.T  # (V, |W|)
            mean = sims.mean(axis=1)
            score = mean - self.peak_penalty * (sims.max(axis=1) - mean)
            chosen: list[int] = []
            for i in np.argsort(-score, kind="stable"):
                i = int(i)
                if to_category[i] >= self.max_category or forbidden(self.words[i], category, candidates):
                    continue
                if any(float(vocab[i] @ vocab[j]) > self.max_mutual for j in chosen):
                    continue
                chosen.append(i)
                if len(chosen) >= self.size:
                    break
            out = tuple(self.words[i] for i in chosen)
            self._cache[key] = out
            return out

    async def pool(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        return await asyncio.to_thread(self.pool_now, category, candidates)


_DECOY_RE = re.compile(r"<decoy>\s*(.*?)\s*</decoy>", re.IGNORECASE | re.DOTALL)


def parse_decoys(text: str) -> list[str]:
    """Terms inside ``<decoy>...</decoy>``, 1-5 words each; anything else is ignored."""
    out = []
    for raw in _DECOY_RE.findall(text):
        term = " ".join(raw.split())
        if term and len(term.split()) <= 5:
            out.append(term)
    return out


class LLMDecoys:
    """Appendix C's decoy prompt: rounds of ``suggest`` terms until the pool is full; embedding top-up."""

    def __init__(self, client: Inference, fallback: EmbeddingDecoys, *, spec: str, suggest: int = 5, rounds: int = 3,
                 size: int = 8) -> None:
        self.client = client
        self.fallback = fallback
        self.suggest = suggest
        self.rounds = rounds
        self.size = size
        self.name = f"{spec}?suggest={suggest}&rounds={rounds}"
        self.failures = 0
        self._cache: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}
        self._lock = asyncio.Lock()

    async def pool(self, category: str, candidates: Sequence[str]) -> tuple[str, ...]:
        key = (category, tuple(candidates))
        async with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        accepted: list[str] = []
        for _ in range(self.rounds):
            if len(accepted) >= self.size:
                break
            msgs = prompt("decoy", category=category, candidates="\n".join(f"- {w}" for w in candidates),
                          accepted="\n".join(f"- {d}" for d in accepted) or "- (none)", k=str(self.suggest))
            try:
                res = await self.client.generate(GenerateRequest(msgs, max_tokens=16 * self.suggest, temperature=0.0))
            except (InferenceError, ValueError):
                self.failures += 1
                break
            got = parse_decoys(res.text)
            if not got:
                self.failures += 1
            for term in got:
                if not forbidden(term, category, candidates) and normalize(term) not in {normalize(a) for a in accepted}:
                    accepted.append(term)
        backup = await self.fallback.pool(category, candidates)
        seen = {normalize(a) for a in accepted}
        out = tuple([*accepted, *(t for t in backup if normalize(t) not in seen)][: max(self.size, DEFAULT_DECOYS + 3)])
        async with self._lock:
            self._cache[key] = out
        return out


__all__ = ["DEFAULT_DECOYS", "DecoyStrategy", "EmbeddingDecoys", "FixedDecoys", "LLMDecoys", "WordNetDecoys", "forbidden",
           "parse_decoys", "pick"]

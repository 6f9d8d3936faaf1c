"""Message makers for the standalone benchmark: the paper's three reference baselines and generators.

MiniLM reference baselines (``--baselines embed``; the paper's WordNet ones,
the default, are in ``models/eval/baselines.py``), over the embedding agents'
hint vocabulary (``models/embeddings.py``) and the bundled MiniLM (a MiniLM evaluator passes these by
construction, so they validate nothing):

- ``random``: a vocabulary word drawn with ``rng(seed, "sneak-random", category,
  secret)`` among words unrelated to the card (no overlap with the category or
  any card word, and not among the 200 words nearest the card's centroid);
- ``category``: the vocabulary word nearest the category name that is neither
  the category nor a card word (a near-synonym of the category);
- ``secret-synonym``: the vocabulary word nearest the secret that is not a card
  word and does not contain the secret (a near-synonym of the secret).

Generators (``--generator SPEC``): ``embed:NAME?k=16`` says what the embedding
agents say as a Chameleon clue (a seeded draw among the ``k`` vocabulary words
nearest the secret, off the card); ``llm:SPEC`` asks a model with the paper's
message prompt, zero-shot as the paper prompts (the reply prefilled with
``<message>``; ``llm:SPEC?shots=1`` puts one worked example before the request,
for small models that otherwise copy the format's "..."), and reads the last
``<message>...</message>`` span; an answer
without one is retried up to ``RETRIES`` times by seeded sampling, then counted
as a generation parse failure. ``--refine`` asks once more for a more indirect
message conditioned on the first (recursive message refinement, section 3.2).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from games.base import normalize, rng
from models.embeddings import DEFAULT_K, VocabIndex, overlaps, sample_top_k
from models.eval.baselines import Baseline
from models.eval.instances import Instance
from models.eval.prompts import prompt
from models.eval.spec import parse_spec
from models.types import GenerateRequest, Inference, InferenceError

RANDOM_EXCLUDE_NEAREST = 200
MAX_MESSAGE_WORDS = 5
RETRIES = 2
RETRY_TEMPERATURE = 0.8
EXAMPLE_ANSWER = "moves in an L"  # the worked example's answer in data/prompts.toml
SHOTS = (0, 1)  # zero-shot (the paper's) or one worked example (``?shots=1``)


def shots_of(params: dict[str, str]) -> int:
    """The ``shots`` parameter of an ``llm:`` generator spec: 0 (default, the paper's) or 1; ValueError otherwise."""
    raw = params.get("shots", "0")
    if raw not in {str(n) for n in SHOTS}:
        raise ValueError(f"shots must be 0 (zero-shot, the paper's) or 1 (one worked example), not {raw!r}")
    return int(raw)


def prompting(spec: str) -> str:
    """How a generator spec is prompted, for the tables' headers."""
    try:
        kind, _, params = parse_spec(spec)
    except ValueError:
        return "?"
    if kind != "llm":
        return "no prompt (embedding generator)"
    return "one-shot (a worked example before the request, ?shots=1)" if params.get("shots") == "1" else \
        "zero-shot (the paper's; ?shots=1 adds a worked example)"



def _off_card(word: str, inst: Instance) -> bool:
    return not any(overlaps(word, w) for w in (inst.category, *inst.candidates))


class Baselines:
    """The three reference messages for an instance (deterministic for a seed)."""

    def __init__(self, index: VocabIndex, seed: int = 0) -> None:
        self.index = index
        self.seed = seed

    def random(self, inst: Instance) -> str:
        centroid = self.index.vecs(list(inst.candidates)).mean(axis=0)
        near = {int(i) for i in self.index.ranked(centroid / np.linalg.norm(centroid))[:RANDOM_EXCLUDE_NEAREST]}
        r = rng(self.seed, "sneak-random", inst.category, inst.secret)
        # Redraw until a word is far from the card: a handful of draws, never a scan of the vocabulary.
        for _ in range(10_000):
            i = r.randrange(len(self.index.words))
            if i not in near and _off_card(self.index.words[i], inst):
                return self.index.words[i]
        raise ValueError("no vocabulary word is unrelated to the card")

    def category(self, inst: Instance) -> str:
        return self._nearest(self.index.vec(inst.category), inst)

    def secret_synonym(self, inst: Instance) -> str:
        return self._nearest(self.index.vec(inst.secret), inst)

    def _nearest(self, target: np.ndarray, inst: Instance) -> str:
        for i in self.index.ranked(target):
            w = self.index.words[int(i)]
            if _off_card(w, inst):
                return w
        raise ValueError("no vocabulary word is off the card")

    def message(self, which: Baseline, inst: Instance) -> str:
        return {Baseline.RANDOM: self.random, Baseline.CATEGORY: self.category,
                Baseline.SECRET_SYNONYM: self.secret_synonym}[which](inst)


@dataclass(frozen=True, slots=True)
class Generated:
    message: str | None  # None: a generation parse failure
    raw: str = ""


_MESSAGE_RE = re.compile(r"<message>(.*?)(?:</message>|$)", re.IGNORECASE | re.DOTALL)


def parse_message(text: str) -> str | None:
    """The last ``<message>`` span's text (one line, at most ``MAX_MESSAGE_WORDS`` words), or None."""
    spans = [" ".join(s.split()) for s in _MESSAGE_RE.findall(text)]
    spans = [s for s in spans if s and "YOUR message" not in s and s != "..."]
    if not spans:
        return None
    words = spans[-1].split()
    return " ".join(words[:MAX_MESSAGE_WORDS]) if words else None


class LLMGenerator:
    """The paper's message prompt; the reply is prefilled with ``<message>`` so small models only continue it."""

    def __init__(self, client: Inference, spec: str, *, refine: bool = False, max_tokens: int = 24, shots: int = 0) -> None:
        self.client = client
        self.spec = spec + ("+rmr" if refine else "")
        self.refine = refine
        self.max_tokens = max_tokens
        self.shots = shots

    async def _ask(self, name: str, **values: str) -> Generated:
        """Greedy first; after an answer with no message, up to ``RETRIES`` seeded samples."""
        raw = ""
        for attempt in range(1 + RETRIES):
            req = GenerateRequest(prompt(name, example=self.shots > 0, **values), max_tokens=self.max_tokens,
                                  temperature=0.0 if attempt == 0 else RETRY_TEMPERATURE, seed=attempt,
                                  stop=("</message>", "\n"), prefill="<message>")
            try:
                res = await self.client.generate(req)
            except (InferenceError, ValueError) as exc:
                return Generated(None, f"{type(exc).__name__}: {exc}")
            raw = res.text
            text = raw if raw.lstrip().lower().startswith("<message>") else "<message>" + raw
            message = parse_message(text)
            if message is not None and normalize(message) != normalize(EXAMPLE_ANSWER):  # not a copy of the example
                return Generated(message, raw)
        return Generated(None, raw)

    async def __call__(self, inst: Instance) -> Generated:
        values = {"category": inst.category, "candidates": ", ".join(inst.candidates), "secret": inst.secret}
        first = await self._ask("message", **values)
        if not self.refine or first.message is None:
            return first
        return await self._ask("refine", first=first.message, **values)


class EmbedGenerator:
    """What the embedding agents say as a clue: a seeded draw among the ``k`` words nearest the secret, off the card."""

    def __init__(self, index: VocabIndex, spec: str, *, k: int = DEFAULT_K, seed: int = 0) -> None:
        self.index = index
        self.spec = spec
        self.k = k
        self.seed = seed

    def now(self, inst: Instance) -> Generated:
        r = rng(self.seed, "sneak-embed-generator", inst.category, inst.secret)
        pick = sample_top_k(self.index, self.index.vec(inst.secret), self.k, r, lambda i, w: _off_card(w, inst))
        return Generated(pick.word, pick.word)

    async def __call__(self, inst: Instance) -> Generated:
        return await asyncio.to_thread(self.now, inst)


def generator_kind(spec: str) -> tuple[str, str, dict[str, str]]:
    kind, arg, params = parse_spec(spec)
    if kind not in ("llm", "embed"):
        raise ValueError(f"unknown generator kind {kind!r}; use llm:... or embed:...")
    return kind, arg, params


class MessageMaker(Protocol):
    spec: str

    async def __call__(self, inst: Instance) -> Generated: ...


async def generate_all(gen: MessageMaker, instances: Sequence[Instance], concurrency: int = 16,
                       progress: object = None) -> list[Generated]:
    gate = asyncio.Semaphore(concurrency)

    async def one(inst: Instance) -> Generated:
        async with gate:
            out = await gen(inst)
        if callable(progress):
            progress(1)
        return out

    return list(await asyncio.gather(*(one(i) for i in instances)))

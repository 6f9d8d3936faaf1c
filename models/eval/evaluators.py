"""SNEAK evaluators: the simulated ally and chameleon, by label scoring (LLM) or by embeddings.

Specs, resolved like agent specs (only from configuration or the operator's
command line, never from chat):

- ``llm:default``, ``llm:/path/to/model``, ``llm:http://worker:port``,
  ``llm:openai:http://host:8000/v1#model`` (vLLM etc.), with optional
  ``?p=N`` (cyclic orderings averaged, default 2), ``&seed=S`` and
  ``&calibrate=0|1`` (contextual calibration, default 1): by default the
  judge's choices are debiased as the players' are (``models.scoring``).
- ``embed:minilm`` (or ``embed:/path``), with optional ``?t_cham=..&t_ally=..``
  (softmax temperatures; defaults from ``data/embed_calibration.json``).

LLM evaluators follow section 2.3: options are shuffled, labelled A, B, C...,
and the probability of each option is the softmax of the first-token logits
over the label tokens (the worker's ``score_labels``), mapped back to the
option, through ``models.scoring.score_choices``. With ``p`` > 1 the
probabilities of ``p`` cyclic shifts of the seeded ordering are averaged. Both
orders are drawn per instance (the chameleon's from the card and the message),
so a model's bias towards one label never lands on the same secret for every
clue of a card.

A judgement whose probabilities cannot be had (the model failed, labels are
not single tokens, the numbers are not a distribution) is a parse failure:
``Judgement.error`` says why, and callers count it rather than drop it.

The embedding evaluator: chameleon p(w) = softmax(cos(m, w) / t_cham) over the
candidates; ally p(m_j) = softmax(cos(m_j, w_s) / t_ally) over the messages.
"""

from __future__ import annotations

import asyncio
import json
import math
import string
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Protocol

import numpy as np

from games.base import normalize, rng
from models.embeddings import Embedder
from models.eval.instances import Instance
from models.eval.prompts import PROMPT_VERSION, prompt
from models.eval.spec import parse_spec
from models.scoring import Debias, Render, score_choices
from models.types import Inference, InferenceError, Message

LETTERS = string.ascii_uppercase
MAX_OPTIONS = len(LETTERS)
SUM_TOLERANCE = 1e-3


@dataclass(frozen=True, slots=True)
class Judgement:
    """Probabilities over the options in the caller's order, or the reason there are none."""

    probs: tuple[float, ...] = ()
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.error is not None


class Evaluator(Protocol):
    spec: str

    @property
    def settings(self) -> dict[str, Any]: ...

    async def chameleon(self, inst: Instance) -> Judgement: ...

    async def ally(self, inst: Instance, messages: Sequence[str]) -> Judgement: ...


def check_distribution(probs: Sequence[float], n: int) -> str | None:
    """Why ``probs`` is not a distribution over ``n`` options, or None when it is."""
    if len(probs) != n:
        return f"{len(probs)} probabilities for {n} options"
    if any(not math.isfinite(p) or p < 0 for p in probs):
        return "a probability is negative or not a number"
    if abs(sum(probs) - 1.0) > SUM_TOLERANCE:
        return f"probabilities sum to {sum(probs):.4f}"
    return None


def order(n: int, seed: int, *salt: object) -> list[int]:
    idx = list(range(n))
    rng(seed, *salt).shuffle(idx)
    return idx


class LLMEvaluator:
    """Ally and chameleon by first-token label scoring, through ``models.scoring.score_choices``.

    ``permutations`` = 1: one seeded shuffle (section 2.3). More: that many
    evenly spaced cyclic shifts of the seeded shuffle, averaged, so every
    option moves through the label positions. ``calibrate`` adds contextual
    calibration (a content-free prompt's label prior divided out).
    """

    def __init__(self, client: Inference, spec: str, *, permutations: int = 2, seed: int = 0,
                 calibrate: bool = True) -> None:
        if permutations < 1:
            raise ValueError("p (orderings averaged) must be at least 1")
        self.client = client
        self.spec = spec
        self.permutations = permutations
        self.seed = seed
        self.calibrate = calibrate

    @property
    def settings(self) -> dict[str, Any]:
        return {"kind": "llm", "permutations": self.permutations, "seed": self.seed, "calibrate": self.calibrate,
                "prompts": PROMPT_VERSION}

    @property
    def debias(self) -> Debias:
        if self.permutations > 1:
            return Debias.CYCLIC_CALIBRATED if self.calibrate else Debias.CYCLIC
        return Debias.CALIBRATED if self.calibrate else Debias.NONE

    async def _score(self, render: Render, options: Sequence[str], first: Sequence[int]) -> Judgement:
        n = len(options)
        if n > MAX_OPTIONS:
            return Judgement(error=f"{n} options; label scoring takes at most {MAX_OPTIONS}")
        try:
            res = await score_choices(self.client, render, options, debias=self.debias,
                                      max_orderings=self.permutations, order=first)
        except (InferenceError, ValueError) as exc:
            return Judgement(error=f"{type(exc).__name__}: {exc}")
        bad = check_distribution(res.probs, n)
        if bad:
            return Judgement(error=bad)
        return Judgement(tuple(res.probs), extra={"orderings": [list(o) for o in res.orderings]})

    async def chameleon(self, inst: Instance) -> Judgement:
        cands = inst.candidates
        n = len(cands)

        def render(labels: Sequence[str], texts: Sequence[str]) -> Sequence[Message]:
            listing = " ".join(f"{lab}) {t}" for lab, t in zip(labels, texts, strict=True))
            return prompt("chameleon", category=inst.category, candidates=listing, message=inst.message,
                          labels=", ".join(labels))

        # Seeded per instance: a label bias must not land on one secret for every clue of a card.
        return await self._score(render, cands, order(n, self.seed, "sneak-chameleon", inst.category, cands,
                                                      inst.secret, inst.message))

    async def ally(self, inst: Instance, messages: Sequence[str]) -> Judgement:
        n = len(messages)

        def render(labels: Sequence[str], texts: Sequence[str]) -> Sequence[Message]:
            listing = " ".join(f"{lab}) message {i}: {t}" for i, (lab, t) in enumerate(zip(labels, texts, strict=True)))
            return prompt("ally", category=inst.category, candidates=", ".join(inst.candidates), secret=inst.secret,
                          messages=listing, labels=", ".join(labels))

        return await self._score(render, messages,
                                 order(n, self.seed, "sneak-ally", inst.category, inst.secret, tuple(messages)))


# --------------------------------------------------------------------------- embeddings


@cache
def calibration() -> dict[str, Any]:
    """The shipped temperatures of the embedding evaluator and how they were fitted."""
    raw = resources.files("models.eval").joinpath("data", "embed_calibration.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(raw)
    return data


def softmax(x: np.ndarray, t: float) -> np.ndarray:
    z = x / t
    z = z - z.max()
    e = np.exp(z)
    return np.asarray(e / e.sum())


class EmbeddingEvaluator:
    """Cosine similarity with a calibrated softmax temperature (see ``models/eval/calibrate.py``)."""

    def __init__(self, embedder: Embedder, spec: str, *, t_cham: float | None = None, t_ally: float | None = None) -> None:
        cal = calibration()
        self.embedder = embedder
        self.spec = spec
        self.t_cham = float(t_cham if t_cham is not None else cal["t_cham"])
        self.t_ally = float(t_ally if t_ally is not None else cal["t_ally"])
        if self.t_cham <= 0 or self.t_ally <= 0:
            raise ValueError("temperatures must be positive")

    @property
    def settings(self) -> dict[str, Any]:
        return {"kind": "embed", "model": self.embedder.model_id, "t_cham": round(self.t_cham, 6),
                "t_ally": round(self.t_ally, 6)}

    def _vecs(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def chameleon_now(self, inst: Instance) -> Judgement:
        sims = self._vecs(inst.candidates) @ self._vecs([inst.message])[0]
        return Judgement(tuple(float(p) for p in softmax(sims.astype(np.float64), self.t_cham)))

    def ally_now(self, inst: Instance, messages: Sequence[str]) -> Judgement:
        sims = self._vecs(messages) @ self._vecs([inst.secret])[0]
        return Judgement(tuple(float(p) for p in softmax(sims.astype(np.float64), self.t_ally)))

    async def chameleon(self, inst: Instance) -> Judgement:
        return await asyncio.to_thread(self.chameleon_now, inst)

    async def ally(self, inst: Instance, messages: Sequence[str]) -> Judgement:
        return await asyncio.to_thread(self.ally_now, inst, messages)


# --------------------------------------------------------------------------- specs

ClientFor = Callable[[str], Awaitable[Inference]]
EmbedderFor = Callable[[str], Embedder]


def _int_param(params: dict[str, str], name: str, default: int) -> int:
    try:
        return int(params.get(name, default))
    except ValueError:
        raise ValueError(f"evaluator parameter {name} must be a whole number, not {params[name]!r}") from None


def fingerprint(spec: str) -> dict[str, Any]:
    """Everything a judgement depends on, from the spec alone (no model is loaded): what a validation
    verdict is about. ValueError with the reason for a spec that is not an evaluator."""
    kind, arg, params = parse_spec(spec)
    if kind == "llm":
        unknown = sorted(set(params) - {"p", "seed", "calibrate"})
        if unknown:
            raise ValueError(f"unknown llm evaluator parameter(s) {', '.join(unknown)}; known: p, seed, calibrate")
        p = _int_param(params, "p", 2)
        if p < 1:
            raise ValueError("p (orderings averaged) must be at least 1")
        return {"kind": "llm", "model": arg or "default", "permutations": p, "seed": _int_param(params, "seed", 0),
                "calibrate": params.get("calibrate", "1") in ("1", "true", "yes"), "prompts": PROMPT_VERSION}
    if kind == "embed":
        unknown = sorted(set(params) - {"t_cham", "t_ally"})
        if unknown:
            raise ValueError(f"unknown embed evaluator parameter(s) {', '.join(unknown)}; known: t_cham, t_ally")
        cal = calibration()
        try:
            t_cham = float(params.get("t_cham", cal["t_cham"]))
            t_ally = float(params.get("t_ally", cal["t_ally"]))
        except ValueError:
            raise ValueError("t_cham and t_ally must be numbers") from None
        if t_cham <= 0 or t_ally <= 0:
            raise ValueError("temperatures must be positive")
        return {"kind": "embed", "model": arg or "minilm", "t_cham": round(t_cham, 6), "t_ally": round(t_ally, 6)}
    raise ValueError(f"unknown evaluator kind {kind!r} in {spec!r}; use llm:... or embed:...")


async def resolve(spec: str, *, client_for: ClientFor, embedder_for: EmbedderFor) -> Evaluator:
    """An evaluator for a spec (``llm:...`` or ``embed:...``); ValueError with the reason otherwise."""
    fp = fingerprint(spec)
    if fp["kind"] == "llm":
        client = await client_for(fp["model"])
        return LLMEvaluator(client, spec, permutations=fp["permutations"], seed=fp["seed"], calibrate=fp["calibrate"])
    return EmbeddingEvaluator(embedder_for(fp["model"]), spec, t_cham=fp["t_cham"], t_ally=fp["t_ally"])


async def warm_up(evaluator: Evaluator) -> str | None:
    """One judgement on a tiny instance, so the evaluator's model is loaded now, alone (two models loading at
    once raced); the reason it failed, or None."""
    probe = Instance(game="probe", category="Colours", candidates=("red", "green"), secret="red", message="tomato")
    try:
        results = await asyncio.gather(evaluator.chameleon(probe), evaluator.ally(probe, ("tomato", "grass")))
    except Exception as exc:  # noqa: BLE001 - any failure is the evaluator's, reported with its type
        return f"{type(exc).__name__}: {exc}"
    return next((j.error for j in results if j.error), None)


async def load_evaluators(specs: Sequence[str], *, client_for: ClientFor, embedder_for: EmbedderFor) -> list[Evaluator]:
    """Each evaluator resolved and warmed up, one model at a time; the first that does not run stops the
    load with a ValueError naming it."""
    evaluators: list[Evaluator] = []
    for spec in specs:
        ev = await resolve(spec, client_for=client_for, embedder_for=embedder_for)
        failure = await warm_up(ev)
        if failure is not None:
            raise ValueError(f"evaluator {spec} does not run: {failure[:200]}")
        evaluators.append(ev)
    return evaluators


def secret_index(inst: Instance) -> int:
    key = normalize(inst.secret)
    return next(i for i, c in enumerate(inst.candidates) if normalize(c) == key)

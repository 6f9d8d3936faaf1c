"""Fitting the embedding evaluator's two softmax temperatures (temperature scaling).

There is no human-labelled SNEAK data to fit against, so the temperatures are
fitted to messages of a speaker who knows the secret: for every word of the
calibration cards (every other bundled card, the ``sneak`` setting's 12 words)
the message is what the embedding agents say as a clue (a seeded draw among
the 16 vocabulary words nearest the secret, off the card). Then

- ``t_cham`` minimises the negative log-likelihood of the secret under
  softmax(cos(message, w) / t) over the candidates, and
- ``t_ally`` minimises the negative log-likelihood of the real message under
  softmax(cos(m_j, secret) / t) over it and its five decoys,

each by a bounded scalar search over log t. A temperature fitted this way makes
the evaluator's confidence match how often its first choice is right for such
messages (Guo et al., 2017): neither the sharp 0/100 of an argmax nor the flat
near-chance of raw cosines. ``hushtable sneak calibrate`` refits and rewrites
``data/embed_calibration.json``; the fitted values, the data they came from and
the NLL at the optimum are written with them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import minimize_scalar

from games import decks
from models.embeddings import Embedder, VocabIndex
from models.eval.decoys import EmbeddingDecoys, pick
from models.eval.generators import EmbedGenerator
from models.eval.instances import bench_instances

CARD_SIZE = 12
T_BOUNDS = (1e-3, 1.0)


def nll(sims: Sequence[np.ndarray], gold: Sequence[int], t: float) -> float:
    """Mean negative log-likelihood of the gold options under softmax(sims / t), row by row."""
    total = 0.0
    for s, g in zip(sims, gold, strict=True):
        z = s / t
        m = float(z.max())
        total -= float(z[g]) - (m + math.log(float(np.exp(z - m).sum())))
    return total / len(sims)


def fit_temperature(sims: Sequence[np.ndarray], gold: Sequence[int]) -> tuple[float, float]:
    """The temperature minimising ``nll`` (searched over log t within ``T_BOUNDS``) and the NLL there."""
    lo, hi = (math.log(b) for b in T_BOUNDS)
    res = minimize_scalar(lambda x: nll(sims, gold, math.exp(x)), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-4})
    t = math.exp(float(res.x))
    return t, nll(sims, gold, t)


def calibration_data(embedder: Embedder, index: VocabIndex, cards: Sequence[tuple[str, Sequence[str]]]) -> dict[str, Any]:
    """Similarity rows and gold indices for both tasks over ``cards``."""
    gen = EmbedGenerator(index, "embed:minilm")
    decoys = EmbeddingDecoys(embedder)
    cham_rows: list[np.ndarray] = []
    cham_gold: list[int] = []
    ally_rows: list[np.ndarray] = []
    for inst in bench_instances(cards, CARD_SIZE):
        msg = gen.now(inst).message
        assert msg is not None
        cand = np.asarray(embedder.embed(list(inst.candidates)), dtype=np.float64)
        m = np.asarray(embedder.embed([msg]), dtype=np.float64)[0]
        cham_rows.append(cand @ m)
        cham_gold.append(list(inst.candidates).index(inst.secret))
        msgs = [msg, *pick(decoys.pool_now(inst.category, inst.candidates), msg)]
        mv = np.asarray(embedder.embed(msgs), dtype=np.float64)
        ally_rows.append(mv @ np.asarray(embedder.embed([inst.secret]), dtype=np.float64)[0])
    return {"cham": (cham_rows, cham_gold), "ally": (ally_rows, [0] * len(ally_rows))}


def calibrate(embedder: Embedder) -> dict[str, Any]:
    """Fit both temperatures on every other bundled card; returns the JSON to ship."""
    cards = list(decks.cards())[::2]
    data = calibration_data(embedder, VocabIndex(embedder), cards)
    t_cham, nll_cham = fit_temperature(*data["cham"])
    t_ally, nll_ally = fit_temperature(*data["ally"])
    return {
        "t_cham": round(t_cham, 5),
        "t_ally": round(t_ally, 5),
        "nll_cham": round(nll_cham, 4),
        "nll_ally": round(nll_ally, 4),
        "instances": len(data["cham"][0]),
        "how": (
            "temperature scaling: each t minimises the mean NLL of the right answer over messages made by the "
            f"embedding agents' clue rule (top-16 words nearest the secret, off the card) for every word of "
            f"{len(cards)} cards (every other bundled card, first {CARD_SIZE} words); ally options are the "
            "message and its 5 embedding decoys. Refit with `hushtable sneak calibrate`."
        ),
    }

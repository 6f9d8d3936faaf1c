"""Scoring SNEAK instances: decoys, both judgements per evaluator, the four metrics.

``evaluate`` runs every (instance, evaluator) pair concurrently (bounded), so
an LLM evaluator's requests reach the inference worker together and are
batched there, prefixes shared. Each result keeps everything needed to store
and audit it: the decoy set, the orderings' seed, both distributions, the
metrics, or the reason it failed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from models.eval.decoys import DEFAULT_DECOYS, DecoyStrategy, pick
from models.eval.evaluators import Evaluator, secret_index
from models.eval.instances import Instance
from models.eval.metrics import Scores, score

DEFAULT_CONCURRENCY = 32


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One instance judged by one evaluator. ``scores`` is None when either judgement failed."""

    instance: Instance
    evaluator: str
    settings: dict[str, Any]
    settings_key: str
    decoys: tuple[str, ...]
    ally_probs: tuple[float, ...] | None
    cham_probs: tuple[float, ...] | None
    scores: Scores | None
    error: str | None = None

    @property
    def perm_seed(self) -> int:
        return int(self.settings.get("seed", 0))


def settings_of(evaluator: Evaluator, decoys: DecoyStrategy, n_decoys: int) -> dict[str, Any]:
    return {**evaluator.settings, "decoys": decoys.name, "n_decoys": n_decoys}


def settings_key(evaluator: str, settings: dict[str, Any]) -> str:
    """A short stable digest: same evaluator and settings, same key (the idempotency key with the move)."""
    raw = json.dumps({"evaluator": evaluator, **settings}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


async def evaluate_one(inst: Instance, evaluator: Evaluator, decoys: DecoyStrategy, *,
                       n_decoys: int = DEFAULT_DECOYS) -> Evaluation:
    settings = settings_of(evaluator, decoys, n_decoys)
    key = settings_key(evaluator.spec, settings)
    chosen: tuple[str, ...] = ()
    try:
        chosen = pick(await decoys.pool(inst.category, inst.candidates), inst.message, n_decoys)
    except ValueError as exc:
        return Evaluation(inst, evaluator.spec, settings, key, chosen, None, None, None, f"decoys: {exc}")
    messages = (inst.message, *chosen)  # the real message is option 0; evaluators shuffle
    ally, cham = await asyncio.gather(evaluator.ally(inst, messages), evaluator.chameleon(inst))
    error = "; ".join(f"{who}: {j.error}" for who, j in (("ally", ally), ("chameleon", cham)) if j.error) or None
    scores = None if error else score(ally.probs, 0, cham.probs, secret_index(inst))
    return Evaluation(inst, evaluator.spec, settings, key, chosen, ally.probs or None, cham.probs or None, scores, error)


async def evaluate(
    instances: Sequence[Instance],
    evaluators: Sequence[Evaluator],
    decoys: DecoyStrategy,
    *,
    n_decoys: int = DEFAULT_DECOYS,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: Callable[[int], None] | None = None,
    skip: Callable[[Instance, str, str], bool] | None = None,
) -> list[Evaluation]:
    """Every instance under every evaluator (results in instance-major order).

    ``skip(instance, evaluator spec, settings key)`` leaves out pairs already
    scored; ``progress(n)`` is called as pairs finish.
    """
    gate = asyncio.Semaphore(concurrency)
    jobs: list[tuple[Instance, Evaluator]] = []
    for inst in instances:
        for ev in evaluators:
            if skip is not None and skip(inst, ev.spec, settings_key(ev.spec, settings_of(ev, decoys, n_decoys))):
                continue
            jobs.append((inst, ev))

    async def run(inst: Instance, ev: Evaluator) -> Evaluation:
        async with gate:
            res = await evaluate_one(inst, ev, decoys, n_decoys=n_decoys)
        if progress is not None:
            progress(1)
        return res

    return list(await asyncio.gather(*(run(i, e) for i, e in jobs)))

"""Debiased choice scoring: which of several options a model prefers, with position and label bias removed.

A model asked "A) x  B) y  C) z — answer with a letter" reads its preference off
the first-token logits of the labels (``Inference.score_labels``). Small models
add a strong preference for a position or a label token ("A") that has nothing
to do with the options: the bundled 135M model put 0.36-0.64 on "A" whatever
stood there. ``score_choices`` removes it, as a setting (``Debias``):

- ``NONE``: one ordering, the options as given. The plain label scoring.
- ``CYCLIC``: the options are shown in several cyclic shifts of their order
  (all of them by default, so every option takes every position and label
  once); each option's probability is the mean of its probabilities over the
  shifts. A fixed bias for position k then adds the same amount to every
  option. ``max_orderings`` caps the number of shifts for long lists (evenly
  spaced shifts: every option still moves through the list).
- ``CALIBRATED``: contextual calibration (Zhao et al., 2021, "Calibrate Before
  Use"): the same prompt with every option replaced by a content-free text
  ("N/A") gives the model's prior for each label; each option's probability is
  divided by the prior of the label it was shown under, then renormalised. A
  bias that multiplies a label's probability (an additive logit bias) cancels
  exactly.
- ``CYCLIC_CALIBRATED``: both (calibrated per shift, then averaged).

All orderings (and the content-free prompt) are sent at once through the
client, so the batcher runs them as one batch, and, because they differ only
in the last message, over the one cached prefix KV of the system prompt.

Options that cannot be told apart by single-letter labels (more than 26) are
scored by whole-option log-likelihood (``mode="loglik"``): the option text is
its own label, so only the listing order is shifted.

Messages: the options are rendered into the chat by ``render(labels, texts)``;
without one, the placeholders ``{options}`` (the "A) text" lines) and
``{labels}`` ("A, B, C") are filled in every message that has them, or else the
lines are appended to the last message.
"""

from __future__ import annotations

import asyncio
import math
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from models.types import Inference, Message, ScoreRequest, ScoreResult, ScoringMode

LETTERS = string.ascii_uppercase
CONTENT_FREE = "N/A"
"""The content-free option text of calibration (the paper's choice; any text without meaning works)."""

Render = Callable[[Sequence[str], Sequence[str]], Sequence[Message]]
"""(labels in shown order, option texts in shown order) -> the chat to score."""


class Debias(StrEnum):
    NONE = "none"
    CYCLIC = "cyclic"
    CALIBRATED = "calibrated"
    CYCLIC_CALIBRATED = "cyclic+calibrated"

    @property
    def cyclic(self) -> bool:
        return self in (Debias.CYCLIC, Debias.CYCLIC_CALIBRATED)

    @property
    def calibrated(self) -> bool:
        return self in (Debias.CALIBRATED, Debias.CYCLIC_CALIBRATED)


@dataclass(frozen=True, slots=True)
class ChoiceScores:
    """The debiased probability of each option, in the caller's order, and how it was reached."""

    probs: tuple[float, ...]
    debias: Debias
    mode: ScoringMode
    orderings: tuple[tuple[int, ...], ...]  # per ordering: the option index shown at each position
    raw: tuple[tuple[float, ...], ...]  # per ordering: the model's probability of each position's label
    prior: tuple[float, ...] | None  # per position: the content-free prior (calibration), else None
    model: str
    latency_ms: float

    @property
    def best(self) -> int:
        """Index of the most probable option (the first of equals)."""
        return max(range(len(self.probs)), key=lambda i: self.probs[i])

    def to_json(self) -> dict[str, object]:
        return {
            "debias": self.debias.value,
            "mode": self.mode,
            "orderings": [list(o) for o in self.orderings],
            "raw": [list(r) for r in self.raw],
            "prior": list(self.prior) if self.prior is not None else None,
        }


def shifts(n: int, max_orderings: int | None = None) -> list[tuple[int, ...]]:
    """Cyclic shifts of ``range(n)``: all ``n``, or ``max_orderings`` of them evenly spaced."""
    if n <= 0:
        return []
    k = n if max_orderings is None else max(1, min(n, max_orderings))
    starts = sorted({round(j * n / k) % n for j in range(k)})
    return [tuple((s + i) % n for i in range(n)) for s in starts]


def labels_for(n: int) -> tuple[tuple[str, ...], ScoringMode]:
    """Label per position and the scoring mode: letters up to 26 options, else the options themselves."""
    if n <= len(LETTERS):
        return tuple(LETTERS[:n]), ScoringMode.FIRST_TOKEN
    return (), ScoringMode.LOGLIK


def default_render(messages: Sequence[Message]) -> Render:
    """Fill ``{options}``/``{labels}`` where the messages have them, else append the options to the last one."""
    base = tuple(messages)
    if not base:
        raise ValueError("at least one message is needed")
    has_slot = any("{options}" in m.content for m in base)

    def render(labels: Sequence[str], texts: Sequence[str]) -> Sequence[Message]:
        lines = "\n".join(f"{lab}) {t}" if lab != t else t for lab, t in zip(labels, texts, strict=True))
        joined = ", ".join(labels)
        if has_slot:
            return tuple(Message(m.role, m.content.replace("{options}", lines).replace("{labels}", joined)) for m in base)
        last = base[-1]
        tail = f"{last.content}\n\n{lines}\nAnswer with one of: {joined}."
        return (*base[:-1], Message(last.role, tail))

    return render


async def score_choices(
    client: Inference,
    messages: Sequence[Message] | Render,
    options: Sequence[str],
    *,
    debias: Debias = Debias.CYCLIC,
    max_orderings: int | None = None,
    order: Sequence[int] | None = None,
    content_free: str = CONTENT_FREE,
) -> ChoiceScores:
    """The probability of each of ``options`` (in this order), debiased as ``debias`` says.

    ``messages`` is the chat (with ``{options}``/``{labels}`` slots, or the options are
    appended), or a ``Render`` that builds it from the labels and texts in shown order.
    ``order`` is the first ordering shown (default: as given); the cyclic shifts start
    from it, so a caller can shuffle once (seeded) and still cover every position.
    """
    n = len(options)
    if n == 0:
        raise ValueError("at least one option is needed")
    render = messages if callable(messages) else default_render(messages)
    base = list(order) if order is not None else list(range(n))
    if sorted(base) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..{n - 1}")
    letters, mode = labels_for(n)
    rotations = shifts(n, max_orderings) if debias.cyclic else [tuple(range(n))]
    orderings = [tuple(base[i] for i in rot) for rot in rotations]

    def request(shown: Sequence[str]) -> ScoreRequest:
        labels = letters or tuple(shown)
        return ScoreRequest(tuple(render(labels, shown)), labels, mode)

    reqs = [request([options[i] for i in o]) for o in orderings]
    # The content-free prior only makes sense for fixed labels: with loglik the label is the text.
    calibrate = debias.calibrated and mode is ScoringMode.FIRST_TOKEN
    if calibrate:
        reqs.append(request([content_free] * n))
    started = time.perf_counter()
    # All at once: the batcher groups them into one forward over the shared prefix.
    results: list[ScoreResult] = list(await asyncio.gather(*(client.score_labels(r) for r in reqs)))
    latency = (time.perf_counter() - started) * 1000
    for res in results:
        if len(res.probs) != n:
            raise ValueError(f"the model returned {len(res.probs)} probabilities for {n} options")
    prior = tuple(results[-1].probs) if calibrate else None
    per_option = [0.0] * n
    raw: list[tuple[float, ...]] = []
    for o, res in zip(orderings, results, strict=False):
        probs = list(res.probs)
        raw.append(tuple(probs))
        if prior is not None:
            probs = _calibrate(probs, prior)
        for pos, i in enumerate(o):
            per_option[i] += probs[pos] / len(orderings)
    total = sum(per_option)
    final = tuple(p / total for p in per_option) if total > 0 else tuple(1.0 / n for _ in range(n))
    return ChoiceScores(
        probs=final,
        debias=debias,
        mode=mode,
        orderings=tuple(orderings),
        raw=tuple(raw),
        prior=prior,
        model=results[0].model or client.model_id,
        latency_ms=latency,
    )


def _calibrate(probs: Sequence[float], prior: Sequence[float]) -> list[float]:
    """Divide by the content-free prior and renormalise (in log space: tiny priors do not overflow)."""
    logs = [math.log(max(p, 1e-30)) - math.log(max(q, 1e-30)) for p, q in zip(probs, prior, strict=True)]
    m = max(logs)
    exps = [math.exp(x - m) for x in logs]
    z = sum(exps)
    return [e / z for e in exps]


__all__ = ["CONTENT_FREE", "ChoiceScores", "Debias", "Render", "default_render", "labels_for", "score_choices", "shifts"]

"""Inference-time scaling for SNEAK message generation (the SNEAK paper, section 3.2): CoT and SETS.

``llm:SPEC?method=cot`` or ``?method=sets`` as a ``--generator`` (``sneak bench``, the section 4
analyses, ``sneak human --add-bench``); the default is the zero-shot prompt, and ``--refine`` stays
recursive message refinement (RMR). They run with any language model: the bundled one here, meant
for a GPU worker or an OpenAI-compatible endpoint.

- **CoT** (Wei et al., 2022): the message prompt asks for one or two sentences of reasoning about
  what sets the secret apart, then the message; the last ``<message>`` span of the reply is read
  (greedy, then up to ``RETRIES`` seeded samples when there is none, as the zero-shot generator).
- **SETS** (Chen et al., 2025a: sampling, self-verification, self-correction): ``SAMPLES`` messages
  are sampled from the zero-shot prompt (temperature ``SAMPLE_TEMPERATURE``, seeds 0..n-1); the same
  model verifies each (label scoring of "good: A / not good: B", the probability of A is its
  score); each message scoring under one half is corrected once (a prompt naming the weak message)
  and verified again, the better of the two kept; the best-scoring message wins (equal scores: the
  one sampled most often, then the first). The model's own verdicts decide: no evaluator is asked,
  so the method cannot fit the evaluators that score it. ``Generated.raw`` keeps every candidate
  with its score for audit.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from dataclasses import dataclass
from functools import cache
from importlib import resources
from string import Template

from games.base import normalize
from models.eval.generators import EXAMPLE_ANSWER, RETRIES, RETRY_TEMPERATURE, Generated, parse_message
from models.eval.instances import Instance
from models.eval.prompts import prompt, templates
from models.types import GenerateRequest, Inference, InferenceError, Message, ScoreRequest, ScoringMode

METHODS = ("zero-shot", "cot", "sets")
SAMPLES = 4
SAMPLE_TEMPERATURE = 0.8
COT_TOKENS = 96
MESSAGE_TOKENS = 24


@cache
def _methods() -> dict[str, dict[str, str]]:
    raw = resources.files("models.eval").joinpath("data", "methods.toml").read_text(encoding="utf-8")
    return {k: {kk: str(vv) for kk, vv in v.items()} for k, v in tomllib.loads(raw).items()}


def _values(inst: Instance, **more: str) -> dict[str, str]:
    return {"category": inst.category, "candidates": ", ".join(inst.candidates), "secret": inst.secret, **more}


def cot_messages(inst: Instance) -> tuple[Message, ...]:
    """The zero-shot system prompt and worked example, then the reasoning request."""
    base = prompt("message", **_values(inst))
    return (*base[:-1], Message("user", Template(_methods()["cot"]["user"]).substitute(_values(inst))))


def verify_messages(inst: Instance, message: str) -> tuple[Message, ...]:
    t = _methods()["verify"]
    return (Message("system", t["system"]), Message("user", Template(t["user"]).substitute(_values(inst, message=message))))


def correct_messages(inst: Instance, message: str) -> tuple[Message, ...]:
    system = Template(templates()["message"]["system"]).substitute(_values(inst))
    return (Message("system", system),
            Message("user", Template(_methods()["correct"]["user"]).substitute(_values(inst, message=message))))


def _usable(message: str | None) -> bool:
    return message is not None and normalize(message) != normalize(EXAMPLE_ANSWER)


@dataclass(frozen=True, slots=True)
class Candidate:
    message: str
    score: float
    corrected_from: str | None = None


class MethodGenerator:
    """CoT or SETS around one language model (``spec`` names it in the tables, ``+cot`` / ``+sets`` added)."""

    def __init__(self, client: Inference, spec: str, method: str, *, samples: int = SAMPLES) -> None:
        if method not in ("cot", "sets"):
            raise ValueError(f"generation method must be one of {', '.join(METHODS)}, not {method!r}")
        self.client = client
        self.spec = spec
        self.method = method
        self.samples = samples

    async def _generate(self, messages: tuple[Message, ...], *, temperature: float, seed: int, max_tokens: int,
                        prefill: bool) -> tuple[str | None, str]:
        req = GenerateRequest(messages, max_tokens=max_tokens, temperature=temperature, seed=seed,
                              stop=("</message>",) if not prefill else ("</message>", "\n"),
                              prefill="<message>" if prefill else "")
        res = await self.client.generate(req)
        raw = res.text
        text = ("<message>" + raw) if prefill and not raw.lstrip().lower().startswith("<message>") else raw
        message = parse_message(text)
        return (message if _usable(message) else None), raw

    async def cot(self, inst: Instance) -> Generated:
        raw = ""
        for attempt in range(1 + RETRIES):
            try:
                message, raw = await self._generate(cot_messages(inst), temperature=0.0 if attempt == 0 else
                                                    RETRY_TEMPERATURE, seed=attempt, max_tokens=COT_TOKENS,
                                                    prefill=False)
            except (InferenceError, ValueError) as exc:
                return Generated(None, f"{type(exc).__name__}: {exc}")
            if message is not None:
                return Generated(message, raw)
        return Generated(None, raw)

    async def _verify(self, inst: Instance, message: str) -> float:
        res = await self.client.score_labels(ScoreRequest(verify_messages(inst, message), ("A", "B"),
                                                          ScoringMode.FIRST_TOKEN))
        total = sum(res.probs)
        return float(res.probs[0] / total) if total > 0 else 0.0

    async def sets(self, inst: Instance) -> Generated:
        try:
            sampled: list[str] = []
            for seed in range(self.samples):
                message, _ = await self._generate(prompt("message", **_values(inst)), temperature=SAMPLE_TEMPERATURE,
                                                  seed=seed, max_tokens=MESSAGE_TOKENS, prefill=True)
                if message is not None:
                    sampled.append(message)
            if not sampled:
                return Generated(None, json.dumps({"method": "sets", "candidates": []}))
            kept: list[Candidate] = []
            for message in dict.fromkeys(sampled):  # each distinct message verified once
                score = await self._verify(inst, message)
                best = Candidate(message, score)
                if score < 0.5:
                    fixed, _ = await self._generate(correct_messages(inst, message), temperature=0.0, seed=0,
                                                    max_tokens=MESSAGE_TOKENS, prefill=True)
                    if fixed is not None and normalize(fixed) != normalize(message):
                        again = await self._verify(inst, fixed)
                        if again > score:
                            best = Candidate(fixed, again, corrected_from=message)
                kept.append(best)
        except (InferenceError, ValueError) as exc:
            return Generated(None, f"{type(exc).__name__}: {exc}")
        counts = Counter(normalize(m) for m in sampled)
        order = {c.message: i for i, c in enumerate(kept)}
        win = max(kept, key=lambda c: (c.score, counts[normalize(c.corrected_from or c.message)], -order[c.message]))
        audit = {"method": "sets", "sampled": sampled,
                 "candidates": [{"message": c.message, "score": round(c.score, 4), "corrected_from": c.corrected_from}
                                for c in kept], "chosen": win.message}
        return Generated(win.message, json.dumps(audit, ensure_ascii=False))

    async def __call__(self, inst: Instance) -> Generated:
        return await (self.cot(inst) if self.method == "cot" else self.sets(inst))


__all__ = ["METHODS", "MethodGenerator", "cot_messages", "correct_messages", "verify_messages"]

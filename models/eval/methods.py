"""Inference-time scaling for SNEAK message generation (the SNEAK paper, section 3.2): CoT and SETS.

``llm:SPEC?method=cot`` or ``?method=sets`` as a ``--generator`` (``sneak bench``, the section 4
analyses, ``sneak human --add-bench``); the default is the zero-shot prompt, and ``--refine`` stays
recursive message refinement (RMR). They run with any language model: the bundled one here, meant
for a GPU worker or an OpenAI-compatible endpoint.

- **CoT** (Wei et al., 2022): the message prompt asks for one or two sentences of reasoning about
  what sets the secret apart, then the message; the last ``<message>`` span of the reply is read
  (greedy, then up to ``RETRIES`` seeded samples when there is none, as the zero-shot generator).
- **SETS** (Chen et al., 2025a: sampling, self-verification, self-correction, then a majority vote):
  ``SAMPLES`` messages are sampled from the message prompt (temperature ``SAMPLE_TEMPERATURE``, seeds
  0..n-1); the same model verifies each (label scoring of "good: A / not good: B"; verified when A
  has at least half the probability); a sample that fails is corrected (a prompt naming the weak
  message) and the correction verified, up to ``CORRECTION_ROUNDS`` times, the last correction being
  the sample's final message. The final message is the majority vote over the verified finals
  (messages compared after ``normalize``), over all finals when none is verified; a tied vote goes to
  the message sampled first. The verifier's probability only decides verified or not: it never picks
  the winner. The model's own verdicts decide: no evaluator is asked, so the method cannot fit the
  evaluators that score it. ``Generated.raw`` keeps every sample, its verdicts and corrections and the
  votes (``sneak bench`` writes it to ``generations.jsonl``).

Both take the message prompt as the generator's ``?shots`` says: zero-shot by default (the paper's),
one worked example with ``?shots=1``.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
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
CORRECTION_ROUNDS = 1  # Chen et al. let a failed sample be corrected over several rounds; one keeps the cost at most 3 calls a sample
VERIFIED = 0.5  # the verifier's probability of "good" at which a message counts as verified
SAMPLE_TEMPERATURE = 0.8
COT_TOKENS = 96
MESSAGE_TOKENS = 24


@cache
def _methods() -> dict[str, dict[str, str]]:
    raw = resources.files("models.eval").joinpath("data", "methods.toml").read_text(encoding="utf-8")
    return {k: {kk: str(vv) for kk, vv in v.items()} for k, v in tomllib.loads(raw).items()}


def _values(inst: Instance, **more: str) -> dict[str, str]:
    return {"category": inst.category, "candidates": ", ".join(inst.candidates), "secret": inst.secret, **more}


def cot_messages(inst: Instance, *, example: bool = False) -> tuple[Message, ...]:
    """The message prompt's system message (and its worked example with ``example``), then the reasoning request."""
    base = prompt("message", example=example, **_values(inst))
    return (*base[:-1], Message("user", Template(_methods()["cot"]["user"]).substitute(_values(inst))))


def verify_messages(inst: Instance, message: str) -> tuple[Message, ...]:
    t = _methods()["verify"]
    return (Message("system", t["system"]), Message("user", Template(t["user"]).substitute(_values(inst, message=message))))


def correct_messages(inst: Instance, message: str, *, example: bool = False) -> tuple[Message, ...]:
    t = templates()["message"]
    system = Template(t["system"]).substitute(_values(inst))
    shot = (Message("user", t["example_user"]), Message("assistant", t["example_assistant"])) if example else ()
    return (Message("system", system), *shot,
            Message("user", Template(_methods()["correct"]["user"]).substitute(_values(inst, message=message))))


def _usable(message: str | None) -> bool:
    return message is not None and normalize(message) != normalize(EXAMPLE_ANSWER)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One sample's way through SETS: its message, each verdict and correction, and where it ended."""

    sample: int
    sampled: str
    steps: tuple[tuple[str, float], ...]  # (message, the verifier's probability of "good") in order
    final: str
    verified: bool

    def to_json(self) -> dict[str, object]:
        return {"sample": self.sample, "sampled": self.sampled,
                "steps": [{"message": m, "score": round(p, 4), "verified": p >= VERIFIED} for m, p in self.steps],
                "final": self.final, "verified": self.verified}


def majority(finals: Sequence[Candidate]) -> tuple[str, dict[str, int], bool]:
    """SETS's vote: the most frequent final message among the verified ones (all, when none is); a tie goes to
    the message sampled first. Returns (message, votes by message, whether the vote was over verified ones)."""
    verified = [c for c in finals if c.verified]
    pool = verified or list(finals)
    votes: dict[str, int] = {}
    first: dict[str, str] = {}
    for c in pool:  # in sampling order
        key = normalize(c.final)
        votes[key] = votes.get(key, 0) + 1
        first.setdefault(key, c.final)
    top = max(votes.values())
    winner = next(k for k in votes if votes[k] == top)  # dicts keep insertion order: the first sampled
    return first[winner], {first[k]: n for k, n in votes.items()}, bool(verified)


class MethodGenerator:
    """CoT or SETS around one language model (``spec`` names it in the tables, ``+cot`` / ``+sets`` added)."""

    def __init__(self, client: Inference, spec: str, method: str, *, samples: int = SAMPLES, shots: int = 0) -> None:
        if method not in ("cot", "sets"):
            raise ValueError(f"generation method must be one of {', '.join(METHODS)}, not {method!r}")
        self.client = client
        self.spec = spec
        self.method = method
        self.samples = samples
        self.shots = shots

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
                message, raw = await self._generate(cot_messages(inst, example=self.shots > 0), temperature=0.0 if attempt == 0 else
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
        verdicts: dict[str, float] = {}  # scoring is deterministic: each distinct message is verified once
        corrections: dict[str, str | None] = {}  # and corrected once (greedy)

        async def verify(message: str) -> float:
            key = normalize(message)
            if key not in verdicts:
                verdicts[key] = await self._verify(inst, message)
            return verdicts[key]

        async def correct(message: str) -> str | None:
            key = normalize(message)
            if key not in corrections:
                fixed, _ = await self._generate(correct_messages(inst, message, example=self.shots > 0), temperature=0.0,
                                                seed=0, max_tokens=MESSAGE_TOKENS, prefill=True)
                corrections[key] = fixed if fixed is not None and normalize(fixed) != key else None
            return corrections[key]

        sampled: list[str | None] = []
        finals: list[Candidate] = []
        try:
            for seed in range(self.samples):
                message, _ = await self._generate(prompt("message", example=self.shots > 0, **_values(inst)),
                                                  temperature=SAMPLE_TEMPERATURE, seed=seed, max_tokens=MESSAGE_TOKENS,
                                                  prefill=True)
                sampled.append(message)
                if message is None:
                    continue
                steps = [(message, await verify(message))]
                for _ in range(CORRECTION_ROUNDS):
                    if steps[-1][1] >= VERIFIED:
                        break
                    fixed = await correct(steps[-1][0])
                    if fixed is None:
                        break
                    steps.append((fixed, await verify(fixed)))
                finals.append(Candidate(seed, message, tuple(steps), steps[-1][0], steps[-1][1] >= VERIFIED))
        except (InferenceError, ValueError) as exc:
            return Generated(None, f"{type(exc).__name__}: {exc}")
        audit: dict[str, object] = {"method": "sets", "sampled": sampled, "candidates": [c.to_json() for c in finals]}
        if not finals:
            return Generated(None, json.dumps(audit, ensure_ascii=False))
        win, votes, over_verified = majority(finals)
        audit.update(votes=votes, vote_over="verified" if over_verified else "all (none verified)", chosen=win)
        return Generated(win, json.dumps(audit, ensure_ascii=False))

    async def __call__(self, inst: Instance) -> Generated:
        return await (self.cot(inst) if self.method == "cot" else self.sets(inst))


__all__ = ["METHODS", "Candidate", "MethodGenerator", "majority", "cot_messages", "correct_messages", "verify_messages"]

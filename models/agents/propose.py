"""The strategic LLM agent's moves: debiased choices weighed with evidence, free text by propose-then-choose.

Choices: the options are scored by ``models.scoring.score_choices`` (debiased as
``Strategy.debias`` says, from a seeded first order) and the model's probabilities
are multiplied by the seat's evidence (``strategy.choice_evidence``) raised to
``Strategy.evidence``. If the model does not answer within the move's budget, the
evidence alone decides.

Free text: candidates come from the model (``samples`` answers in one batched call:
one greedy, the rest sampled) and from the embedding model (neighbours of the
secret, of each Decrypto keyword, of what the table said). Every candidate is
parsed strictly and checked against the rules (``check``: the pure engine on the
current state) before anything is sent, so a move is legal on the first try
whenever any candidate is. The legal ones are ranked by the SNEAK-style strategy
(``strategy.text_score``) and the best few are put to the model as a debiased
label-scored choice; the product of the two decides. Whatever happens, the move
leaves within ``budget_s`` with the best legal candidate found so far.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from games.base import Action, Choice, Observation, Option, Text, normalize
from models.agents.answers import parse_text_answer, refuse_copied_instructions
from models.agents.base import AnswerRefused, CallLog, Check, Decision
from models.agents.judge import TAU, EmbeddingJudge, Judge, JudgeCache, softmax
from models.agents.prompts import build_messages
from models.agents.strategy import (
    choice_evidence,
    evidence_probs,
    field_candidates,
    field_score,
    has_field_score,
    text_score,
)
from models.embeddings import VocabIndex
from models.scoring import ChoiceScores, Debias, score_choices
from models.types import GenerateRequest, InferenceError, Message

if TYPE_CHECKING:
    from models.agents.llm import LLMAgent

log = logging.getLogger(__name__)

SHORTLIST = 4  # candidates put to the model's choice
PROPOSE_SHARE = 0.6  # of the budget, for the model's proposals; the rest for choosing
MODEL_FLOOR_S = 0.5  # the model is always asked, for at least this long: a dead worker shows (and is logged)
DECISIVE = 0.9  # evidence this sure of one option needs no model call (a decoder reading its own team's hints)


@dataclass(frozen=True, slots=True)
class Strategy:
    """Options of the strategic mode (the spec's parameters of the same names)."""

    debias: Debias = Debias.CYCLIC_CALIBRATED
    orderings: int = 2  # cyclic shifts at most (plus the content-free prompt when calibrated)
    samples: int = 3  # proposals per free-text move, in one batched call
    budget_s: float = 2.0  # the whole move
    evidence: float = 1.0  # weight of the seat's evidence against the model's probabilities
    embed: str = "minilm"  # the strategy's embedding model; "none": the model alone
    judge_kind: str = "sneak"  # clues ranked by models/eval's embedding evaluator ("sneak") or our own estimate ("own")
    index: VocabIndex | None = field(default=None, compare=False, repr=False)
    judges: JudgeCache | None = field(default=None, compare=False, repr=False)

    PARAMS: ClassVar[tuple[str, ...]] = ("debias", "orderings", "samples", "budget_s", "evidence", "embed", "judge")

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Strategy:
        d = cls()
        s = cls(
            debias=Debias(params.get("debias", d.debias.value)),
            orderings=int(params.get("orderings", d.orderings)),
            samples=int(params.get("samples", d.samples)),
            budget_s=float(params.get("budget_s", d.budget_s)),
            evidence=float(params.get("evidence", d.evidence)),
            embed=params.get("embed", d.embed),
            judge_kind=params.get("judge", d.judge_kind),
        )
        if s.judge_kind not in ("sneak", "own"):
            raise ValueError(f"judge is 'sneak' or 'own', not {s.judge_kind!r}")
        if s.orderings < 1 or s.samples < 0 or not s.budget_s > 0 or s.evidence < 0:
            raise ValueError("orderings >= 1, samples >= 0, budget_s > 0 and evidence >= 0, please")
        return s

    def judge(self) -> Judge | None:
        if self.index is None:
            return None
        if self.judge_kind == "sneak" and self.judges is not None:
            try:
                return self.judges(self.index.embedder)
            except ImportError:  # a tree without models/eval: our own estimate
                pass
        return EmbeddingJudge(self.index)


def _left(started: float, budget: float) -> float:
    """Time left of ``budget``, but never under MODEL_FLOOR_S: a slow first move (the vocabulary still
    being embedded) must not skip the model, or an unreachable model would go unnoticed."""
    return max(MODEL_FLOOR_S, budget - (time.perf_counter() - started))


def _normalise(weights: Sequence[float]) -> list[float]:
    z = sum(weights)
    return [w / z for w in weights] if z > 0 else [1.0 / len(weights)] * len(weights)


def _unavailable(agent: LLMAgent, exc: Exception) -> str:
    # The exception type only: a worker's message can quote the prompt, and the prompt holds secrets.
    log.warning("agent %s failed to reach its model (%s); its move comes from the other candidates", agent.spec,
                type(exc).__name__)
    return f"model unavailable: {type(exc).__name__}: {exc}"


async def _scored(agent: LLMAgent, render: Any, texts: Sequence[str], order: Sequence[int],
                  timeout: float) -> tuple[ChoiceScores | None, str | None]:
    """The model's debiased choice among ``texts``; None when it does not answer in time (or at all, with why)."""
    if timeout <= 0.05:
        return None, None
    s = agent.strategy
    try:
        client = await agent.client()
        return await asyncio.wait_for(
            score_choices(client, render, texts, debias=s.debias, max_orderings=s.orderings, order=order), timeout), None
    except TimeoutError:
        return None, None
    except InferenceError as exc:
        return None, _unavailable(agent, exc)


def _labels_of(scores: ChoiceScores | None, n: int) -> list[str]:
    from models.scoring import labels_for

    letters, _ = labels_for(n)
    return list(letters) if letters else []


# --------------------------------------------------------------------------- choices


async def choose(agent: LLMAgent, obs: Observation, spec: Choice, *, feedback: str | None, attempt: int) -> Decision:
    started = time.perf_counter()
    s = agent.strategy
    options = list(spec.options)
    ids = [o.id for o in options]
    order = list(range(len(options)))
    agent.rng(obs, "llm-options", attempt).shuffle(order)
    evidence = await asyncio.to_thread(choice_evidence, s.index, obs, spec) if s.index is not None else None
    p_ev = evidence_probs(evidence, ids) if evidence else None

    def render(labels: Sequence[str], texts: Sequence[str]) -> Sequence[Message]:
        labelled = {lab: Option("", t) for lab, t in zip(labels, texts, strict=True)}
        return build_messages(agent.prompts, obs, spec, labelled, feedback=feedback, examples=agent.examples)[0]

    texts = [o.label for o in options]
    if len(set(texts)) != len(texts):  # two options read the same: tell them apart for the model
        texts = [f"{o.label} ({o.id})" for o in options]
    decisive = p_ev is not None and max(p_ev) >= DECISIVE
    scores, error = (None, None) if decisive else await _scored(agent, render, texts, order, _left(started, s.budget_s))
    p_llm = list(scores.probs) if scores is not None else [1.0 / len(ids)] * len(ids)
    final = _normalise([p * ((p_ev[i] ** s.evidence) if p_ev else 1.0) for i, p in enumerate(p_llm)])
    if agent.temperature > 0:
        weights = [p ** (1.0 / agent.temperature) for p in final]
        best = agent.rng(obs, "llm-sample", attempt).choices(range(len(ids)), weights=weights)[0]
    else:
        best = max(range(len(ids)), key=lambda i: (final[i], -order.index(i)))
    first = list(scores.orderings[0]) if scores is not None else order
    labels = _labels_of(scores, len(ids)) or [texts[i] for i in first]
    shown = {labels[pos]: ids[i] for pos, i in enumerate(first)}
    log = CallLog(
        agent.spec,
        model_id=scores.model if scores is not None else "",
        operation="score" if scores is not None else "embed",
        prompt={
            "messages": [m.to_json() for m in render(labels, [texts[i] for i in first])],
            "labels": shown,
            "scoring": scores.to_json() if scores is not None else ("evidence decisive" if decisive else "out of time: evidence alone"),
            "model_probs": {ids[i]: p for i, p in enumerate(p_llm)},
            "evidence": {ids[i]: p for i, p in enumerate(p_ev)} if p_ev else None,
        },
        raw_output=labels[first.index(best)],
        label_probs={ids[i]: p for i, p in enumerate(final)},
        latency_ms=(time.perf_counter() - started) * 1000,
        retries=attempt,
        error=error,
    )
    return Decision(Action.choose(spec.kind, ids[best]), (log,))


# --------------------------------------------------------------------------- free text


async def propose_then_choose(
    agent: LLMAgent, obs: Observation, spec: Text, *, feedback: str | None, attempt: int, check: Check | None
) -> Decision:
    started = time.perf_counter()
    s = agent.strategy
    calls: list[CallLog] = []
    messages, prompt = build_messages(agent.prompts, obs, spec, {}, feedback=feedback, examples=agent.examples)
    n_fields = len(spec.fields)
    pools: list[list[str]] = [[] for _ in range(n_fields)]
    whole: list[Action] = []

    def add(field_no: int, text: str) -> None:
        if text and all(normalize(text) != normalize(t) for t in pools[field_no]):
            pools[field_no].append(text)

    # 1. Embedding neighbours: cheap, and legal more often than not.
    if s.index is not None:
        t0 = time.perf_counter()
        fields = await asyncio.to_thread(field_candidates, s.index, obs, spec)
        for i, words in enumerate(fields[:n_fields]):
            for w in words:
                add(i, w)
        calls.append(CallLog(agent.spec, model_id=s.index.embedder.model_id, operation="embed",
                             prompt={"kind": spec.kind, "neighbours": fields}, raw_output="",
                             latency_ms=(time.perf_counter() - t0) * 1000, retries=attempt))
    # 2. The model's proposals, all in one batch, within its share of the budget.
    if s.samples > 0:
        proposals, log = await _propose(agent, obs, spec, messages, attempt, _left(started, s.budget_s * PROPOSE_SHARE))
        calls.append(log)
        for text in proposals:
            try:
                parts = parse_text_answer(text, spec, prompt.forbidden)
                refuse_copied_instructions(parts, messages)
            except ValueError:
                continue  # an unusable proposal is a candidate less, not a refused move
            whole.append(Action.say(spec.kind, *parts))
            for i, p in enumerate(parts):
                add(i, p)
    # 3. Only what the rules accept goes on.
    judge = s.judge()
    legal = _legal_candidates(agent, obs, spec, pools, whole, check)
    if not legal:
        raise AnswerRefused("no candidate answer passes the rules", calls)
    # 4. Rank by the strategy, then let the model choose among the best few.
    if s.index is not None and judge is not None:
        ranked = sorted(((a, text_score(s.index, judge, obs, a)) for a in legal), key=lambda x: -x[1])
    else:
        ranked = [(a, 0.0) for a in legal]
    short = ranked[:SHORTLIST]
    chosen, probs, scores, error = short[0][0], {" | ".join(short[0][0].value): 1.0}, None, None
    if len(short) > 1 and s.samples > 0:
        texts = [" | ".join(a.value) for a, _ in short]
        ask = (*messages[:-1], Message("user", messages[-1].content + "\n\nCandidate answers:\n{options}\n"
                                       "Which candidate is the best answer for you? Answer with one letter: {labels}."))
        order = list(range(len(short)))
        agent.rng(obs, "llm-candidates", attempt).shuffle(order)
        scores, error = await _scored(agent, ask, texts, order, _left(started, s.budget_s))
        p_strat = _softmax_scores([sc for _, sc in short]) if s.index is not None else [1 / len(short)] * len(short)
        p_llm = list(scores.probs) if scores is not None else [1 / len(short)] * len(short)
        final = _normalise([p_llm[i] * p_strat[i] ** s.evidence for i in range(len(short))])
        best = max(range(len(short)), key=lambda i: (final[i], -i))
        chosen, probs = short[best][0], {texts[i]: final[i] for i in range(len(short))}
    calls.append(CallLog(
        agent.spec,
        model_id=scores.model if scores is not None else "",
        operation="score" if scores is not None else "none",
        prompt={"candidates": {" | ".join(a.value): sc for a, sc in ranked[:12]},
                "scoring": scores.to_json() if scores is not None else None},
        raw_output=" | ".join(chosen.value),
        label_probs=probs,
        latency_ms=scores.latency_ms if scores is not None else 0.0,
        retries=attempt,
        error=error,
    ))
    return Decision(chosen, tuple(calls))


def _softmax_scores(xs: Sequence[float]) -> list[float]:
    return softmax(xs, TAU)


async def _propose(
    agent: LLMAgent, obs: Observation, spec: Text, messages: tuple[Message, ...], attempt: int, timeout: float
) -> tuple[list[str], CallLog]:
    started = time.perf_counter()
    s = agent.strategy
    budget = min(agent.max_tokens, 6 + 2 * min(spec.max_words, 4) * len(spec.fields))
    base = agent.rng(obs, "llm-propose", attempt).randrange(1 << 30)
    reqs = [GenerateRequest(messages, max_tokens=budget, temperature=0.0 if j == 0 else 0.9, seed=base + j,
                            prefill="ANSWER:", stop=("\n",)) for j in range(s.samples)]
    texts: list[str] = []
    error: str | None = None
    model = ""
    if timeout > 0.05:
        try:
            client = await agent.client()
            results = await asyncio.wait_for(asyncio.gather(*(client.generate(r) for r in reqs)), timeout)
            texts = [r.text for r in results]
            model = results[0].model if results else ""
        except TimeoutError:
            error = None  # out of time is not a refusal: the other candidates play
        except InferenceError as exc:
            error = _unavailable(agent, exc)
    log = CallLog(agent.spec, model_id=model, operation="generate", prompt=[m.to_json() for m in messages],
                  raw_output="\n".join(texts), latency_ms=(time.perf_counter() - started) * 1000, retries=attempt,
                  error=error, label_probs={"samples": s.samples, "answered": len(texts)})
    return texts, log


def _legal_candidates(agent: LLMAgent, obs: Observation, spec: Text, pools: list[list[str]], whole: list[Action],
                      check: Check | None, limit: int = 48) -> list[Action]:
    """Whole answers and, per field, the best-scoring words assembled into answers; only the ones the rules accept."""
    s = agent.strategy
    out: list[Action] = []
    seen: set[tuple[str, ...]] = set()

    def consider(action: Action) -> None:
        key = tuple(normalize(t) for t in action.value)
        if key in seen or len(out) >= limit or len(set(key)) < len(key):
            return
        seen.add(key)
        try:
            from games.base import check_text

            check_text(spec, action)
        except Exception:
            return
        if check is None or check(action) is None:
            out.append(action)

    if len(pools) == 1:
        for a in whole:
            consider(a)
        for w in pools[0]:
            consider(Action.say(spec.kind, w))
        return out
    # Several fields: each field's words by their own score, then combinations from the top down.
    if s.index is not None and has_field_score(obs):
        index = s.index

        def by_score(words: list[str], f: int) -> list[str]:
            return sorted(words, key=lambda t: -field_score(index, obs, spec.kind, f, t))

        pools = [by_score(p, i) for i, p in enumerate(pools)]
    for a in whole:
        consider(a)
    if any(not p for p in pools):
        return out
    depth = max(len(p) for p in pools)
    for rank in range(depth):
        for f in range(len(pools)):
            pick = [p[0] for p in pools]
            pick[f] = pools[f][min(rank, len(pools[f]) - 1)]
            consider(Action.say(spec.kind, *pick))
        consider(Action.say(spec.kind, *(p[min(rank, len(p) - 1)] for p in pools)))
    return out


__all__ = ["SHORTLIST", "Strategy", "choose", "propose_then_choose"]

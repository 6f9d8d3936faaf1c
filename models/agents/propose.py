"""The strategic mode of the LLM agent: the specialist decides, the model joins where configured.

An ``LLMAgent`` in ``mode=strategic`` owns one ``StrategicMode`` and hands it every move with
more than one answer. The mode gets what it needs of the agent once, when it is made (its
options, seed, prompts, sampling settings and a way to its model client), so it never reads the
agent back. Every move is bounded by compute, never by the clock, so the same seed, state and
settings give the same move at any machine load:

- Choices: the seat's evidence (``strategy.choice_evidence``: the game module's
  specialist) gives a distribution over the options. When ``model`` includes
  ``choices`` the options are also label-scored by the model (``models.scoring``:
  ``orderings`` passes, debiased as ``debias`` says, fixed in number) and the two are
  multiplied, the evidence raised to ``evidence``.
- Free text: candidates come from the embedding model (neighbours of the secret, of
  each Decrypto keyword, of what the table said) and, with ``proposals``, from the
  model (``samples`` answers of a fixed token count in one batch: one greedy, the rest
  sampled with seeds from the turn). Every candidate is parsed strictly and checked
  against the rules (``check``) before anything is sent. The legal ones are ranked by
  the game's strategy (``strategy.text_score``); with ``shortlist`` the best few are
  put to the model as one label-scored choice and the product decides.

``deadline_s`` is only a deadline: the model's answers are awaited in full unless the
move reaches it; then the specialist's answer plays, and the move says so
(``Decision.deadline_hit``, logged as a timeout). Each ``Decision`` says where the move
came from (``Source``) and the model's share of it.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, TypeVar

from games.base import Action, Choice, Observation, Option, Text, check_text, normalize
from models.agents.answers import parse_text_answer, refuse_copied_instructions
from models.agents.base import AnswerRefused, CallLog, Check, Decision, Source, turn_rng
from models.agents.judge import TAU, EmbeddingJudge, Judge, JudgeCache, softmax
from models.agents.prompts import PromptBook, build_messages
from models.agents.strategy import (
    choice_evidence,
    choice_spreads,
    evidence_probs,
    field_candidates,
    field_score,
    has_field_score,
    parse_ablations,
    text_score,
)
from models.embeddings import VocabIndex
from models.scoring import ChoiceScores, Debias, Render, labels_for, score_choices
from models.types import GenerateRequest, Inference, InferenceError, Message

T = TypeVar("T")

log = logging.getLogger(__name__)

SHORTLIST = 4  # candidates put to the model's choice
DECISIVE = 0.9  # evidence this sure of one option needs no model call (a decoder reading its own team's hints)


class ModelUse(StrEnum):
    """Where the strategic agent asks its language model."""

    CHOICES = "choices"  # label-score the options of a choice (votes, codes, guesses)
    PROPOSALS = "proposals"  # generate free-text candidates
    SHORTLIST = "shortlist"  # label-score the best free-text candidates


class JudgeKind(StrEnum):
    """How the strategic agent ranks its clue candidates."""

    SNEAK = "sneak"  # models/eval's embedding evaluator
    OWN = "own"  # the agent's own estimate


def parse_uses(text: str) -> frozenset[ModelUse]:
    """``none``, ``all``, or uses joined by ``+`` or ``,`` (``choices+shortlist``)."""
    text = text.strip().lower()
    if text in ("", "none", "off", "0"):
        return frozenset()
    if text == "all":
        return frozenset(ModelUse)
    out = set()
    for part in text.replace(",", "+").split("+"):
        try:
            out.add(ModelUse(part.strip()))
        except ValueError:
            raise ValueError(f"model uses are none, all or {', '.join(u.value for u in ModelUse)} joined by '+', "
                             f"not {part.strip()[:30]!r}") from None
    return frozenset(out)


DEFAULT_USES: frozenset[ModelUse] = frozenset()
"""The bundled model on 2 CPU cores: measured with and without it on the same deals (README, "AI players")."""


@dataclass(frozen=True, slots=True)
class Strategy:
    """Options of the strategic mode (the spec's parameters of the same names)."""

    model: frozenset[ModelUse] = DEFAULT_USES
    debias: Debias = Debias.CYCLIC
    orderings: int = 2  # label-scoring passes per choice (cyclic shifts; plus the content-free prompt when calibrated)
    samples: int = 3  # proposals per free-text move, in one batched call
    deadline_s: float = 30.0  # wall-clock deadline of the whole move (only a deadline: the work is fixed)
    evidence: float = 1.0  # weight of the seat's evidence against the model's probabilities
    embed: str = "assoc"  # the strategy's embedding model (models/association.py); "minilm"; "none": the model alone
    judge_kind: JudgeKind = JudgeKind.SNEAK
    ablate: frozenset[str] = frozenset()  # steps of the game's strategy left out (research ablations)
    index: VocabIndex | None = field(default=None, compare=False, repr=False)
    judges: JudgeCache | None = field(default=None, compare=False, repr=False)

    PARAMS: ClassVar[tuple[str, ...]] = ("model", "debias", "orderings", "samples", "deadline_s", "evidence", "embed",
                                         "judge", "ablate")

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> Strategy:
        d = cls()
        deadline = params.get("deadline_s", d.deadline_s)
        uses = parse_uses(params["model"]) if "model" in params else d.model
        judge = params.get("judge", d.judge_kind.value)
        if judge not in tuple(JudgeKind):
            raise ValueError(f"judge is 'sneak' or 'own', not {judge!r}")
        s = cls(
            model=uses,
            debias=Debias(params.get("debias", d.debias.value)),
            orderings=int(params.get("orderings", d.orderings)),
            samples=int(params.get("samples", d.samples)),
            deadline_s=float(deadline),
            evidence=float(params.get("evidence", d.evidence)),
            embed=params.get("embed", d.embed),
            judge_kind=JudgeKind(judge),
            ablate=parse_ablations(params.get("ablate", "")),
        )
        if s.orderings < 1 or s.samples < 0 or not s.deadline_s > 0 or s.evidence < 0:
            raise ValueError("orderings >= 1, samples >= 0, deadline_s > 0 and evidence >= 0, please")
        return s

    def uses(self, use: ModelUse) -> bool:
        """True when the model is asked for ``use`` (always, for a set-up without an embedding model)."""
        return use in self.model or self.index is None

    def judge(self) -> Judge | None:
        if self.index is None:
            return None
        if self.judge_kind is JudgeKind.SNEAK and self.judges is not None:
            try:
                return self.judges(self.index.embedder)
            except ImportError:  # a tree without models/eval: our own estimate
                pass
        return EmbeddingJudge(self.index)


class Clock:
    """The move's deadline. Only ever consulted to stop waiting, never to decide how much work to do."""

    def __init__(self, deadline_s: float) -> None:
        self.started = time.perf_counter()
        self.deadline_s = deadline_s
        self.hit = False

    def left(self) -> float:
        return self.deadline_s - (time.perf_counter() - self.started)

    def ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000


def _normalise(weights: Sequence[float]) -> list[float]:
    z = sum(weights)
    return [w / z for w in weights] if z > 0 else [1.0 / len(weights)] * len(weights)


def model_share(p_model: Sequence[float], p_other: Sequence[float], weight: float, best: int) -> float:
    """The model's part in picking ``best`` over the runner-up of the combined score:
    |model log-margin| / (|model log-margin| + |weighted other log-margin|); 0 when neither separates them."""
    if len(p_model) < 2:
        return 0.0
    combined = [math.log(max(p, 1e-30)) + weight * math.log(max(q, 1e-30)) for p, q in zip(p_model, p_other, strict=True)]
    runner = max((i for i in range(len(combined)) if i != best), key=lambda i: combined[i])
    m = abs(math.log(max(p_model[best], 1e-30)) - math.log(max(p_model[runner], 1e-30)))
    o = abs(weight * (math.log(max(p_other[best], 1e-30)) - math.log(max(p_other[runner], 1e-30))))
    return m / (m + o) if m + o > 1e-12 else 0.0


async def _until_deadline(clock: Clock, work: Awaitable[T]) -> tuple[T | None, bool]:
    """``work``'s result, or (None, True) when the move's deadline comes first."""
    left = clock.left()
    if left <= 0:
        if isinstance(work, asyncio.Future):
            work.cancel()
        elif asyncio.iscoroutine(work):
            work.close()
        clock.hit = True
        return None, True
    try:
        return await asyncio.wait_for(work, left), False
    except TimeoutError:
        clock.hit = True
        return None, True


def _labels_of(n: int) -> list[str]:
    letters, _ = labels_for(n)
    return list(letters) if letters else []


# --------------------------------------------------------------------------- the mode


class StrategicMode:
    """The strategic mode of one LLMAgent, which owns it and asks it for every move worth deciding.

    ``agent_spec``, the agent's name in its call log, is given with each move rather than here:
    the registry names an agent after building it. ``client`` is the agent's own (one
    connection per agent, opened on its first use).
    """

    def __init__(self, strategy: Strategy, *, seed: int, temperature: float, max_tokens: int, prompts: PromptBook,
                 examples: bool, client: Callable[[], Awaitable[Inference]]) -> None:
        self.strategy = strategy
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.prompts = prompts
        self.examples = examples
        self._client = client

    def _unavailable(self, agent_spec: str, exc: Exception) -> str:
        # The exception type only: a worker's message can quote the prompt, and the prompt holds secrets.
        log.warning("agent %s failed to reach its model (%s); its move comes from the other candidates", agent_spec,
                    type(exc).__name__)
        return f"model unavailable: {type(exc).__name__}: {exc}"

    async def _scored(self, agent_spec: str, render: Sequence[Message] | Render, texts: Sequence[str],
                      order: Sequence[int], clock: Clock) -> tuple[ChoiceScores | None, str | None]:
        """The model's debiased choice among ``texts``; None past the deadline (or when the model fails, with why)."""
        s = self.strategy
        try:
            client = await self._client()
            scores, _ = await _until_deadline(
                clock, score_choices(client, render, texts, debias=s.debias, max_orderings=s.orderings, order=order))
            return scores, None
        except InferenceError as exc:
            return None, self._unavailable(agent_spec, exc)

    # ---------------------------------------------------------------- choices

    async def choose(self, agent_spec: str, obs: Observation, spec: Choice, *, feedback: str | None,
                     attempt: int) -> Decision:
        """Evidence over the options, label-scored by the model where configured; the product decides."""
        s = self.strategy
        clock = Clock(s.deadline_s)
        options = list(spec.options)
        ids = [o.id for o in options]
        order = list(range(len(options)))
        turn_rng(self.seed, obs, "llm-options", attempt).shuffle(order)
        evidence = await asyncio.to_thread(choice_evidence, s.index, obs, spec, s.ablate) if s.index is not None else None
        p_ev = evidence_probs(evidence, ids) if evidence else None
        uniform = [1.0 / len(ids)] * len(ids)

        def render(labels: Sequence[str], texts: Sequence[str]) -> Sequence[Message]:
            labelled = {lab: Option("", t) for lab, t in zip(labels, texts, strict=True)}
            return build_messages(self.prompts, obs, spec, labelled, feedback=feedback, examples=self.examples)[0]

        texts = [o.label for o in options]
        if len(set(texts)) != len(texts):  # two options read the same: tell them apart for the model
            texts = [f"{o.label} ({o.id})" for o in options]
        decisive = p_ev is not None and max(p_ev) >= DECISIVE
        ask = s.uses(ModelUse.CHOICES) and not decisive
        scores, error = await self._scored(agent_spec, render, texts, order, clock) if ask else (None, None)
        p_llm = list(scores.probs) if scores is not None else uniform
        p_spec = p_ev or uniform
        weight = s.evidence if p_ev else 0.0
        final = _normalise([p * (q ** weight) for p, q in zip(p_llm, p_spec, strict=True)])

        # A vote the seat is unsure of is drawn from its posterior (one draw, so the evidence alone and the
        # combined distribution are read at the same point).
        spread = p_ev is not None and choice_spreads(obs, spec)
        u = turn_rng(self.seed, obs, "llm-spread", attempt).random() if spread else 0.0

        def pick(dist: Sequence[float]) -> int:
            if spread:
                acc = 0.0
                for i in order:
                    acc += dist[i]
                    if u < acc:
                        return i
                return order[-1]
            if self.temperature > 0:
                weights = [p ** (1.0 / self.temperature) for p in dist]
                return turn_rng(self.seed, obs, "llm-sample", attempt).choices(range(len(ids)), weights=weights)[0]
            return max(range(len(ids)), key=lambda i: (dist[i], -order.index(i)))

        best, alone = pick(final), pick(p_spec)
        share = model_share(p_llm, p_spec, weight, best) if scores is not None else 0.0
        source = Source.MODEL if scores is not None and (best != alone or p_ev is None) else Source.SPECIALIST
        first = list(scores.orderings[0]) if scores is not None else order
        labels = _labels_of(len(ids)) or [texts[i] for i in first]
        shown = {labels[pos]: ids[i] for pos, i in enumerate(first)}
        why = ("evidence decisive" if decisive else "deadline: evidence alone" if clock.hit
               else "model not asked: evidence alone" if not ask else "model failed: evidence alone")
        call = CallLog(
            agent_spec,
            model_id=scores.model if scores is not None else "",
            operation="score" if scores is not None else "embed",
            prompt={
                "messages": [m.to_json() for m in render(labels, [texts[i] for i in first])] if ask else None,
                "labels": shown,
                "scoring": scores.to_json() if scores is not None else why,
                "model_probs": {ids[i]: p for i, p in enumerate(p_llm)} if scores is not None else None,
                "evidence": {ids[i]: p for i, p in enumerate(p_ev)} if p_ev else None,
                # The suspicion the seat's reading gave every option (higher: more suspect), so a vote can be audited.
                "suspicion": {o: round(float(x), 4) for o, x in evidence.items()} if evidence else None,
            },
            raw_output=labels[first.index(best)],
            label_probs={ids[i]: p for i, p in enumerate(final)},
            latency_ms=clock.ms(),
            retries=attempt,
            error=error,
        )
        return Decision(Action.choose(spec.kind, ids[best]), (call,), source, share, clock.hit)

    # ---------------------------------------------------------------- free text

    async def propose_then_choose(
        self, agent_spec: str, obs: Observation, spec: Text, *, feedback: str | None, attempt: int, check: Check | None
    ) -> Decision:
        """Candidates from the embeddings and the model's proposals, the legal ones ranked by the strategy."""
        s = self.strategy
        clock = Clock(s.deadline_s)
        calls: list[CallLog] = []
        messages, prompt = build_messages(self.prompts, obs, spec, {}, feedback=feedback, examples=self.examples)
        n_fields = len(spec.fields)
        pools: list[list[str]] = [[] for _ in range(n_fields)]
        whole: list[Action] = []
        from_model: set[tuple[str, ...]] = set()  # answers only the model proposed

        def add(field_no: int, text: str) -> bool:
            if text and all(normalize(text) != normalize(t) for t in pools[field_no]):
                pools[field_no].append(text)
                return True
            return False

        # 1. Embedding neighbours: cheap, and legal more often than not.
        if s.index is not None:
            t0 = time.perf_counter()
            fields = await asyncio.to_thread(field_candidates, s.index, obs, spec)
            for i, words in enumerate(fields[:n_fields]):
                for w in words:
                    add(i, w)
            calls.append(CallLog(agent_spec, model_id=s.index.embedder.model_id, operation="embed",
                                 prompt={"kind": spec.kind, "neighbours": fields}, raw_output="",
                                 latency_ms=(time.perf_counter() - t0) * 1000, retries=attempt))
        specialist_words = [{normalize(t) for t in p} for p in pools]
        # 2. The model's proposals, all in one batch, a fixed number of a fixed length.
        if s.samples > 0 and s.uses(ModelUse.PROPOSALS):
            proposals, call = await self._propose(agent_spec, obs, spec, messages, attempt, clock)
            calls.append(call)
            for text in proposals:
                try:
                    parts = parse_text_answer(text, spec, prompt.forbidden)
                    refuse_copied_instructions(parts, messages)
                except ValueError:
                    continue  # an unusable proposal is a candidate less, not a refused move
                whole.append(Action.say(spec.kind, *parts))
                for i, p in enumerate(parts):
                    add(i, p)
                if any(normalize(p) not in specialist_words[i] for i, p in enumerate(parts)):
                    from_model.add(tuple(normalize(p) for p in parts))
        # 3. Only what the rules accept goes on.
        judge = s.judge()
        legal = self._legal_candidates(obs, spec, pools, whole, check)
        if not legal:
            raise AnswerRefused("no candidate answer passes the rules", calls)
        # 4. Rank by the strategy, then (if configured) let the model choose among the best few.
        if s.index is not None and judge is not None:
            index = s.index
            ranked = await asyncio.to_thread(lambda: sorted(((a, text_score(index, judge, obs, a, s.ablate)) for a in legal),
                                                            key=lambda x: -x[1]))
        else:
            ranked = [(a, 0.0) for a in legal]
        short = ranked[:SHORTLIST]
        chosen, probs, scores, error, share = short[0][0], {" | ".join(short[0][0].value): 1.0}, None, None, 0.0
        changed = False
        if len(short) > 1 and s.uses(ModelUse.SHORTLIST):
            texts = [" | ".join(a.value) for a, _ in short]
            ask = (*messages[:-1], Message("user", messages[-1].content + "\n\nCandidate answers:\n{options}\n"
                                           "Which candidate is the best answer for you? Answer with one letter: {labels}."))
            order = list(range(len(short)))
            turn_rng(self.seed, obs, "llm-candidates", attempt).shuffle(order)
            scores, error = await self._scored(agent_spec, ask, texts, order, clock)
            weight = s.evidence if s.index is not None else 0.0
            p_strat = softmax([sc for _, sc in short], TAU) if s.index is not None else [1 / len(short)] * len(short)
            p_llm = list(scores.probs) if scores is not None else [1 / len(short)] * len(short)
            final = _normalise([p_llm[i] * p_strat[i] ** weight for i in range(len(short))])
            best = max(range(len(short)), key=lambda i: (final[i], -i))
            changed = scores is not None and best != 0
            share = model_share(p_llm, p_strat, weight, best) if scores is not None else 0.0
            chosen, probs = short[best][0], {texts[i]: final[i] for i in range(len(short))}
        key = tuple(normalize(t) for t in chosen.value)
        proposed = key in from_model
        if proposed:
            share = 1.0 if s.index is None or not changed else max(share, 0.5)
        source = Source.MODEL if (changed or proposed) else Source.SPECIALIST
        calls.append(CallLog(
            agent_spec,
            model_id=scores.model if scores is not None else "",
            operation="score" if scores is not None else "none",
            prompt={"candidates": {" | ".join(a.value): sc for a, sc in ranked[:12]},
                    "scoring": scores.to_json() if scores is not None else ("deadline" if clock.hit else None)},
            raw_output=" | ".join(chosen.value),
            label_probs=probs,
            latency_ms=scores.latency_ms if scores is not None else 0.0,
            retries=attempt,
            error=error,
        ))
        return Decision(chosen, tuple(calls), source, share, clock.hit)

    async def _propose(
        self, agent_spec: str, obs: Observation, spec: Text, messages: tuple[Message, ...], attempt: int, clock: Clock
    ) -> tuple[list[str], CallLog]:
        """``samples`` answers in one batch: the first greedy, the others sampled with seeds from the turn."""
        started = time.perf_counter()
        s = self.strategy
        budget = min(self.max_tokens, 6 + 2 * min(spec.max_words, 4) * len(spec.fields))
        base = turn_rng(self.seed, obs, "llm-propose", attempt).randrange(1 << 30)
        reqs = [GenerateRequest(messages, max_tokens=budget, temperature=0.0 if j == 0 else 0.9, seed=base + j,
                                prefill="ANSWER:", stop=("\n",)) for j in range(s.samples)]
        texts: list[str] = []
        error: str | None = None
        model = ""
        try:
            client = await self._client()
            results, late = await _until_deadline(clock, asyncio.gather(*(client.generate(r) for r in reqs)))
            if not late and results is not None:
                texts = [r.text for r in results]
                model = results[0].model if results else ""
        except InferenceError as exc:
            error = self._unavailable(agent_spec, exc)
        call = CallLog(agent_spec, model_id=model, operation="generate", prompt=[m.to_json() for m in messages],
                       raw_output="\n".join(texts), latency_ms=(time.perf_counter() - started) * 1000, retries=attempt,
                       error=error, label_probs={"samples": s.samples, "answered": len(texts), "max_tokens": budget})
        return texts, call

    def _legal_candidates(self, obs: Observation, spec: Text, pools: list[list[str]], whole: list[Action],
                          check: Check | None, limit: int = 160) -> list[Action]:
        """Whole answers and, per field, the best-scoring words assembled into answers; only the ones the rules accept."""
        s = self.strategy
        out: list[Action] = []
        seen: set[tuple[str, ...]] = set()

        def consider(action: Action) -> None:
            key = tuple(normalize(t) for t in action.value)
            if key in seen or len(out) >= limit or len(set(key)) < len(key):
                return
            seen.add(key)
            try:
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


__all__ = ["DEFAULT_USES", "SHORTLIST", "JudgeKind", "ModelUse", "StrategicMode", "Strategy", "model_share", "parse_uses"]

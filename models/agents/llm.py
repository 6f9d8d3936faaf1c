"""LLM players for every role (``llm:default``, ``llm:plain`` and the operator's named entries).

Prompts come from ``models.agents.prompts`` (filled from the seat's Observation only),
answers are parsed strictly by ``models.agents.answers``. Two modes:

``mode=strategic`` (the default of ``agent_from_params``, hence of ``llm:default``):
the game's specialist decides (evidence for choices, ranked candidates for free text,
clues for utility against leakage) and the model joins where ``model`` says, with a
fixed amount of work per move (``models.agents.propose.StrategicMode``, which the agent owns).

``mode=plain``: the papers' protocol, for research fidelity:

- Free text (hints, clues, descriptions, Mr. White's guess, tie-break
  keywords) is generated with a strict format, ``ANSWER: text``. A refused
  answer is sent back with the reason, up to ``retries`` times; then
  ``AnswerRefused`` is raised and the table's runner falls back.
- Choices (codes, votes, the chameleon's guess) are scored, not generated:
  the legal options are shuffled (seeded from the agent's seed and the turn,
  SpyGame's remedy for position bias), labelled A, B, C..., and the model's
  probability of each label is read in one forward pass (``first_token``;
  more than 26 options are scored by whole-option log-likelihood). The argmax
  wins, or a draw at ``temperature`` > 0. The probability of every option is
  logged. ``choices=generate`` asks for the letter as text instead, for
  servers that cannot score.
"""

from __future__ import annotations

import random
import string
import time
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace
from enum import StrEnum

from games.base import Action, ActionSpec, Choice, Observation, Option, Text
from models.agents import wordsense
from models.agents.answers import answer_format, parse_choice_answer, parse_text_answer, refuse_copied_instructions
from models.agents.base import AnswerRefused, CallLog, Check, Decision, Source, turn_rng
from models.agents.judge import JudgeCache
from models.agents.prompts import Prompt, PromptBook, build_messages, player_name
from models.agents.propose import StrategicMode, Strategy
from models.embeddings import VocabIndex
from models.types import GenerateRequest, Inference, Message, ScoreRequest, ScoringMode

InferenceFor = Callable[[str], Awaitable[Inference]]
LETTERS = string.ascii_uppercase
RETRY_TEMPERATURE = 0.8


class Mode(StrEnum):
    STRATEGIC = "strategic"
    PLAIN = "plain"


class LLMAgent:
    """A Player backed by a language model reached through ``inference_for(model_spec)``."""

    def __init__(
        self,
        inference_for: InferenceFor,
        model_spec: str = "default",
        *,
        seed: int = 0,
        temperature: float = 0.0,
        retries: int = 3,
        max_tokens: int = 32,
        choices: str = "score",
        prompts: PromptBook | None = None,
        spec: str = "llm:default",
        examples: bool = True,
        mode: Mode = Mode.PLAIN,
        strategy: Strategy | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        if choices not in ("score", "generate"):
            raise ValueError("choices must be 'score' or 'generate'")
        if temperature < 0:
            raise ValueError("temperature must be 0 or more")
        self.spec = spec
        self.model_spec = model_spec
        self.seed = seed
        self.temperature = temperature
        self.retries = retries
        self.max_tokens = max_tokens
        self.choices = choices
        self.prompts = prompts or PromptBook()
        self.examples = examples
        self.mode = Mode(mode)
        self.strategy = strategy or Strategy()
        self._inference_for = inference_for
        self._client: Inference | None = None
        self._strategic = None if self.mode is Mode.PLAIN else StrategicMode(
            self.strategy, seed=seed, temperature=temperature, max_tokens=max_tokens, prompts=self.prompts,
            examples=examples, client=self.client)

    def warm(self) -> None:
        """Embed the strategy's vocabulary now, so that no move's time includes it (the model loads on first use)."""
        if self.strategy.index is not None:
            self.strategy.index.warm()
            wordsense.warm()

    async def client(self) -> Inference:
        if self._client is None:
            self._client = await self._inference_for(self.model_spec)
        return self._client

    def messages(
        self, obs: Observation, spec: ActionSpec, feedback: str | None = None, attempt: int = 0
    ) -> tuple[tuple[Message, ...], Prompt, dict[str, Option]]:
        """The chat for this turn, what it was filled from, and the label of each shown option."""
        labelled = self.labelled_options(obs, spec, attempt) if isinstance(spec, Choice) else {}
        messages, prompt = build_messages(self.prompts, obs, spec, labelled, feedback=feedback, examples=self.examples)
        return messages, prompt, labelled

    def rng(self, obs: Observation, purpose: str, attempt: int) -> random.Random:
        """Every draw from the agent's seed, the turn and the attempt: a re-ask draws anew, a replay the same."""
        return turn_rng(self.seed, obs, purpose, attempt)

    def labelled_options(self, obs: Observation, spec: Choice, attempt: int = 0) -> dict[str, Option]:
        """Options in a seeded random order, labelled A, B, C... (or by their own text past 26)."""
        options = list(spec.options)
        self.rng(obs, "llm-options", attempt).shuffle(options)
        if len(options) <= len(LETTERS):
            return {LETTERS[i]: o for i, o in enumerate(options)}
        texts = [o.label for o in options]
        keys = texts if len(set(texts)) == len(texts) else [o.id for o in options]
        return dict(zip(keys, options, strict=False))

    async def act(
        self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0, check: Check | None = None
    ) -> Decision:
        if isinstance(spec, Choice) and len(spec.options) == 1:
            # Nothing to decide ("ready"): no model call.
            only = spec.options[0]
            return Decision(Action.choose(spec.kind, only.id), (CallLog(self.spec, operation="none", raw_output=only.id, retries=attempt),),
                            Source.RULES)
        if self._strategic is not None:
            if isinstance(spec, Choice):
                return await self._strategic.choose(self.spec, obs, spec, feedback=feedback, attempt=attempt)
            return await self._strategic.propose_then_choose(self.spec, obs, spec, feedback=feedback, attempt=attempt,
                                                             check=check)
        messages, prompt, labelled = self.messages(obs, spec, feedback, attempt)
        if isinstance(spec, Choice) and self.choices == "score":
            return await self._score(obs, spec, messages, labelled, attempt)
        return await self._generate(obs, spec, messages, prompt, labelled, feedback, attempt, check)

    async def _score(
        self, obs: Observation, spec: Choice, messages: tuple[Message, ...], labelled: dict[str, Option], attempt: int
    ) -> Decision:
        client = await self.client()
        labels = tuple(labelled)
        mode = ScoringMode.FIRST_TOKEN if all(len(k) == 1 for k in labels) else ScoringMode.LOGLIK
        started = time.perf_counter()
        result = await client.score_labels(ScoreRequest(messages, labels, mode))
        latency = (time.perf_counter() - started) * 1000
        probs = dict(zip(labels, result.probs, strict=False))
        if self.temperature > 0:
            weights = [p ** (1.0 / self.temperature) for p in probs.values()]
            r = self.rng(obs, "llm-sample", attempt)
            label = r.choices(labels, weights=weights)[0] if sum(weights) > 0 else labels[0]
        else:
            label = max(labels, key=lambda k: probs[k])  # first of equals in the shuffled order
        log = CallLog(
            self.spec,
            model_id=result.model or client.model_id,
            operation="score",
            prompt={"messages": [m.to_json() for m in messages], "labels": {k: o.id for k, o in labelled.items()}, "mode": mode},
            raw_output=label,
            label_probs={labelled[k].id: p for k, p in probs.items()},
            latency_ms=latency,
            retries=attempt,
        )
        return Decision(Action.choose(spec.kind, labelled[label].id), (log,), Source.MODEL, 1.0)

    async def _generate(
        self,
        obs: Observation,
        spec: ActionSpec,
        messages: tuple[Message, ...],
        prompt: Prompt,
        labelled: dict[str, Option],
        feedback: str | None,
        first_attempt: int,
        check: Check | None,
    ) -> Decision:
        client = await self.client()
        chat = list(messages)
        calls: list[CallLog] = []
        fmt = answer_format(spec) if isinstance(spec, Text) else f"ANSWER: <one letter from {', '.join(labelled)}>"
        # A short answer needs few tokens: a budget near its word limit keeps a rambling
        # model from spending seconds on text that will be refused anyway.
        budget = self.max_tokens
        if isinstance(spec, Text):
            budget = min(self.max_tokens, 6 + 3 * spec.max_words * len(spec.fields))
        refused: dict[str, str] = {}  # answers already refused this move, and why
        for attempt in range(first_attempt, first_attempt + self.retries + 1):
            # The reply is begun for the model: small models then answer instead of chatting.
            # A re-ask samples with a new seed (a greedy model would repeat the refused answer).
            again = attempt > 0 or feedback is not None
            temperature = max(self.temperature, RETRY_TEMPERATURE) if again else self.temperature
            seed = zlib.crc32(repr((self.seed, obs.game, obs.seat, len(obs.events), obs.phase, attempt)).encode())
            req = GenerateRequest(tuple(chat), max_tokens=budget, temperature=temperature, seed=seed, prefill="ANSWER:", stop=("\n",))
            started = time.perf_counter()
            result = await client.generate(req)
            latency = (time.perf_counter() - started) * 1000
            try:
                key = " ".join(result.text.split()).lower()
                if key in refused:
                    # The same answer again is not checked again: it is refused for its old reason.
                    raise ValueError(f"you gave this answer before and it was refused ({refused[key]}); write a different one.")
                if isinstance(spec, Text):
                    action = Action.say(spec.kind, *parse_text_answer(result.text, spec, prompt.forbidden))
                    refuse_copied_instructions(action.value, chat)
                else:
                    action = Action.choose(spec.kind, parse_choice_answer(result.text, labelled))
                verdict = check(action) if check is not None else None
                if verdict is not None:
                    raise ValueError(verdict)
            except ValueError as exc:
                reason = str(exc)
                refused.setdefault(key, reason)
                calls.append(self._gen_log(client, result.model, chat, result.text, latency, attempt, f"refused: {reason}"))
                chat += [Message("assistant", result.text), Message("user", self.prompts.fill("retry", "user", {"reason": reason, "format": fmt}))]
                continue
            calls.append(self._gen_log(client, result.model, chat, result.text, latency, attempt, None))
            return Decision(action, tuple(calls), Source.MODEL, 1.0)
        raise AnswerRefused(f"no acceptable answer after {self.retries + 1} tries", calls)

    def _gen_log(
        self, client: Inference, model: str, chat: Sequence[Message], raw: str, latency: float, attempt: int, error: str | None
    ) -> CallLog:
        return CallLog(
            self.spec,
            model_id=model or client.model_id,
            operation="generate",
            prompt=[m.to_json() for m in chat],
            raw_output=raw,
            latency_ms=latency,
            retries=attempt,
            error=error,
        )


def agent_from_params(
    inference_for: InferenceFor, arg: str, params: Mapping[str, str], seed: int, *, spec: str = "",
    index_for: Callable[[str], VocabIndex | None] | None = None, judges: JudgeCache | None = None,
) -> LLMAgent:
    """Build from a configured entry's options (README, "AI players"):

    ``mode=strategic|plain`` (default strategic), ``temperature``, ``retries``, ``max_tokens``,
    ``choices=score|generate`` (plain), ``prompts=DIR``, ``examples=0`` (plain prompts then have
    exactly the papers' structure), and for the strategic mode ``debias`` (none, cyclic,
    calibrated, cyclic+calibrated), ``orderings`` (label-scoring passes at most), ``samples``
    (proposals per move), ``model`` (where the model is asked: none, all, or choices,
    proposals, shortlist joined by +), ``deadline_s`` (wall-clock deadline of a move),
    ``evidence`` (weight of the seat's evidence against the model's probabilities), ``embed``
    (the embedding model of the strategy: ``assoc``, the default, ``minilm`` or ``none``) and
    ``judge`` (``sneak`` or ``own``)."""
    known = {"temperature", "retries", "max_tokens", "choices", "prompts", "examples", "mode", *Strategy.PARAMS}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"unknown llm agent parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    try:
        mode = Mode(params.get("mode", Mode.STRATEGIC.value))
        strategy = Strategy.from_params(params)
        if mode is Mode.STRATEGIC and strategy.embed != "none" and index_for is not None:
            strategy = replace(strategy, index=index_for(strategy.embed), judges=judges)
        return LLMAgent(
            inference_for,
            arg or "default",
            seed=seed,
            temperature=float(params.get("temperature", 0.0)),
            retries=int(params.get("retries", 3)),
            max_tokens=int(params.get("max_tokens", 32)),
            choices=params.get("choices", "score"),
            prompts=PromptBook(params["prompts"]) if params.get("prompts") else None,
            spec=spec or f"llm:{arg or 'default'}",
            examples=params.get("examples", "1").lower() not in ("0", "false", "no", "off"),
            mode=mode,
            strategy=strategy,
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad llm agent spec: {exc}") from exc


__all__ = [
    "AnswerRefused",
    "InferenceFor",
    "LLMAgent",
    "Mode",
    "agent_from_params",
    "player_name",
]

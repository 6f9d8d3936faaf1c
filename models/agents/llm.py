"""LLM players for every role (``llm:default``, ``llm:/path``, ``llm:http://host:port``, ``llm:openai:URL#model``).

Prompts are the templates in ``models/agents/prompts/`` (one TOML file per game
and role), filled from the seat's Observation only, so a prompt can never hold
what the engine does not show that seat. They follow the papers' order: rules,
role, summary of earlier turns, this turn's information, the request.

- Free text (hints, clues, descriptions, Mr. White's guess, tie-break
  keywords) is generated with a strict format, ``ANSWER: text`` (several
  fields on one line separated by `` | ``). The answer is parsed strictly
  (exactly one ANSWER line, the right number of fields, no alternatives such
  as "x, y" or "x or y", no negations, within the spec's limits, not the
  seat's own secret word). A refused answer is sent back with the reason, up
  to ``retries`` times; then ``AnswerRefused`` is raised and the table's
  runner falls back.
- Choices (codes, votes, the chameleon's guess) are scored, not generated:
  the legal options are shuffled (seeded from the agent's seed and the turn,
  SpyGame's remedy for position bias), labelled A, B, C..., and the model's
  probability of each label is read in one forward pass (``first_token``;
  more than 26 options are scored by whole-option log-likelihood). The argmax
  wins, or a draw at ``temperature`` > 0. The probability of every option is
  logged. ``choices=generate`` asks for the letter as text instead, for
  servers that cannot score.

Seats are called "Player k" (seat k-1), the engines' own neutral names.
"""

from __future__ import annotations

import re
import string
import time
import tomllib
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from games.base import Action, ActionSpec, Choice, Observation, Option, Text, contains_word, normalize, rng, words_of
from models.agents.base import CallLog, Decision
from models.types import GenerateRequest, Inference, Message, ScoreRequest

InferenceFor = Callable[[str], Awaitable[Inference]]
LETTERS = string.ascii_uppercase
ANSWER_RE = re.compile(r"^\W*answer\s*:\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)
FIELD_SEP = "|"


RETRY_TEMPERATURE = 0.8


class AnswerRefused(ValueError):
    """The model gave no acceptable answer within its retries; the runner falls back.

    ``calls`` keeps every attempt (prompt, raw output, reason) for the agent-call log."""

    def __init__(self, message: str, calls: Sequence[CallLog] = ()) -> None:
        super().__init__(message)
        self.calls = tuple(calls)


def _example_overlaps(table: Mapping[str, str], user: str) -> bool:
    """True when this turn names one of the worked example's own words (``example_words``: its
    card, secret, keywords, answer). The example could then hint or mislead, so it is left out."""
    here = set(words_of(user))
    return any(w in here for w in words_of(table.get("example_words", "")))


def player_name(seat: int) -> str:
    return f"Player {seat + 1}"


# --------------------------------------------------------------------------- templates


class PromptBook:
    """The templates, from the bundled folder or a researcher's folder that overrides some of them."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder else None
        self._cache: dict[str, dict[str, str]] = {}

    def table(self, name: str) -> dict[str, str]:
        if name not in self._cache:
            custom = self.folder / f"{name}.toml" if self.folder else None
            if custom is not None and custom.is_file():
                text = custom.read_text(encoding="utf-8")
            else:
                text = resources.files("models.agents").joinpath("prompts", f"{name}.toml").read_text(encoding="utf-8")
            self._cache[name] = {k: v for k, v in tomllib.loads(text).items() if isinstance(v, str)}
        return self._cache[name]

    def fill(self, name: str, key: str, values: Mapping[str, object]) -> str:
        try:
            return string.Template(self.table(name)[key]).substitute({k: str(v) for k, v in values.items()})
        except KeyError as exc:
            raise ValueError(f"prompt template {name}.toml [{key}] needs a value for {exc}") from exc


# --------------------------------------------------------------------------- strict parsing


def answer_format(spec: Text) -> str:
    return "ANSWER: " + f" {FIELD_SEP} ".join(f"<{f.lower()}>" for f in spec.fields)


_STRIP = " \t\"'`*_[](){}<>.!?:"
_ALTERNATIVES = re.compile(r"[,;/]|\bor\b", re.IGNORECASE)


def parse_text_answer(raw: str, spec: Text, forbidden: Sequence[str] = ()) -> tuple[str, ...]:
    """The fields of a free-text answer, or ValueError with a reason the model can act on."""
    found = [m.group(1) for m in ANSWER_RE.finditer(raw)]
    found = [f for f in found if f.strip(_STRIP)]
    if not found:
        raise ValueError('there is no line starting with "ANSWER:".')
    if len(set(found)) > 1:
        raise ValueError('give exactly one "ANSWER:" line.')
    parts = [p.strip().strip(_STRIP).strip() for p in found[0].split(FIELD_SEP)]
    n = len(spec.fields)
    if len(parts) != n:
        raise ValueError(f"give exactly {n} answer{'s' if n > 1 else ''} separated by '{FIELD_SEP}', not {len(parts)}.")
    for name, part in zip(spec.fields, parts, strict=False):
        if not words_of(part):
            raise ValueError(f"{name}: the answer is empty.")
        if normalize(part) == normalize(name) or re.fullmatch(r"\s*<[^>]*>\s*", found[0].split(FIELD_SEP)[0]):
            # Small models copy the format line itself: "ANSWER: <clue>".
            raise ValueError(f"{name}: write your own answer in place of <{name.lower()}>.")
        if spec.max_words <= 3:
            # Word answers must be one answer: "not X, Y" or "X or Y" counts as none.
            if _ALTERNATIVES.search(part) or words_of(part)[0] in ("not", "no"):
                raise ValueError(f"{name}: give one answer, not several or a negation ({part!r}).")
        if len(words_of(part)) > spec.max_words:
            raise ValueError(f"{name}: use at most {spec.max_words} word{'s' if spec.max_words > 1 else ''}.")
        if len(part) > spec.max_chars:
            raise ValueError(f"{name}: keep it under {spec.max_chars} characters.")
        for word in forbidden:
            if word and contains_word(part, word):
                raise ValueError(f"{name}: do not use the secret word {word!r}.")
    return tuple(parts)


def _refuse_copied_instructions(texts: Sequence[str], chat: Sequence[Message]) -> None:
    """Small models echo the instructions ("use at most 12 words") as their description.
    Three words or more found verbatim in what we said to the model are refused."""
    said = " " + " ".join(normalize(m.content) for m in chat if m.role != "assistant") + " "
    for text in texts:
        key = normalize(text)
        if len(key.split()) >= 3 and f" {key} " in said:
            raise ValueError("write your own answer, not words copied from these instructions.")


def parse_choice_answer(raw: str, labelled: Mapping[str, Option]) -> str:
    """The option id of a generated choice: one label letter, or one option's exact text."""
    found = [m.group(1) for m in ANSWER_RE.finditer(raw)] or [raw.strip()]
    if len(set(found)) > 1:
        raise ValueError('give exactly one "ANSWER:" line.')
    value = found[0].strip().strip(_STRIP).strip()
    if value in labelled:
        return labelled[value].id
    key = normalize(value)
    hits = [o.id for o in labelled.values() if key and key in (normalize(o.label), normalize(o.id))]
    if len(hits) == 1:
        return hits[0]
    raise ValueError(f"answer with exactly one of the letters {', '.join(labelled)}, not {value!r}.")


# --------------------------------------------------------------------------- what each seat is told


@dataclass(frozen=True, slots=True)
class Prompt:
    template: str  # file name without .toml
    values: Mapping[str, object]
    forbidden: tuple[str, ...] = ()  # the seat's own secret words, refused in its free text


def _lines(items: Sequence[str], empty: str = "(none yet)") -> str:
    return "\n".join(items) if items else empty


def _decrypto(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    bench = v["variant"] == "benchmark"
    word = "Turn" if bench else "Round"
    summary: list[str] = []
    for t in v["turns"]:
        team = "" if bench else f" (Team {t['team']})"
        summary += [
            f"{word} {t['round']} summary{team}:",
            f"Code: {t['code']}",
            f"Hints: {', '.join(t['hints'])}",
            f"Decoder guess: {t['decoder_guess']}",
            f"Interceptor guess: {t['interceptor_guess'] or 'none'}",
            "",
        ]

    def history(h: Mapping[str, list[str]], title: str) -> list[str]:
        return [title, *(f"Keyword {d}: {', '.join(h.get(str(d), []))}" for d in range(1, 5))]

    if bench:
        summary += history(v["hint_history"], "Hint history:")
        summary.append(f"Code history: {', '.join(v['code_history']) or 'none'}")
        tokens = (
            f"{word} {v['round']}: {v['tokens']['miscommunications']} miscommunications, "
            f"{v['tokens']['interceptions']} interceptions so far."
        )
    else:
        for team in ("A", "B"):
            summary += history(v["hint_history"][team], f"Team {team} hint history:")
            summary.append(f"Team {team} code history: {', '.join(v['code_history'][team]) or 'none'}")
        tokens = f"{word} {v['round']}: " + "; ".join(
            f"Team {t}: {v['tokens'][t]['miscommunications']} miscommunications, {v['tokens'][t]['interceptions']} interceptions"
            for t in ("A", "B")
        ) + "."
    keywords = v["keywords"]
    values: dict[str, object] = {
        "max_rounds": v["max_rounds"],
        "summary": "\n".join(summary) if v["turns"] else f"This is the first {word.lower()}.",
        "tokens": tokens,
        "keywords": ", ".join(f"{d}: {w}" for d, w in sorted(keywords.items())) if keywords else "",
    }
    role = v["role"]
    if not bench:
        values["role"] = f"{role.capitalize()} of Team {v['team']} ({player_name(obs.seat)})"
    else:
        values["role"] = role.capitalize()
    forbidden = tuple(keywords.values()) if keywords else ()
    if spec.kind == "hints":
        code = v["code"].split("-")
        values.update(code=v["code"], code_keywords=", ".join(f"{d}: {keywords[d]}" for d in code))
        return Prompt("decrypto_encoder", values, forbidden)
    if spec.kind == "guess":
        current = v["current_hints"]
        values["hints"] = ", ".join(f"{a}: {h}" for a, h in zip("abc", current["hints"], strict=False))
        own = keywords is not None and current["team"] == v["team"]
        if not own:
            values["role"] = "Interceptor" if bench else f"Decoder of Team {v['team']}, intercepting Team {current['team']}"
        return Prompt("decrypto_decoder" if own else "decrypto_interceptor", values)
    if spec.kind == "keywords":
        values["other"] = "B" if v["team"] == "A" else "A"
        return Prompt("decrypto_tiebreak", values, forbidden)
    raise ValueError(f"no Decrypto prompt for {spec.kind!r}")


def _spy(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    names = [player_name(s) for s in v["living"]]
    said: list[str] = []
    for d in v["descriptions"]:
        said.append(f"Round {d['round']}, {player_name(d['seat'])}: {d['text']}")
    out = [f"{player_name(e['seat'])} was voted out in round {e['round']} and was a {e['role'].replace('_', ' ')}." for e in v["eliminated"]]
    word = v["my_word"]
    white = v["has_mr_white"]
    values: dict[str, object] = {
        "seats": v["seats"],
        "spies": v["spies"],
        "white": " and one Mr. White, who gets no word at all and knows it" if white else "",
        "white_out": " and Mr. White" if white else "",
        "player": player_name(obs.seat),
        "word": f"Your word is {word!r}." if word else "You are Mr. White: you have no word. Blend in and work out the villagers' word.",
        "round": v["round"],
        "living": ", ".join(names),
        "eliminated": " ".join(out),
        "descriptions": _lines(said),
        "max_words": getattr(spec, "max_words", 0),
    }
    forbidden = (word,) if word else ()
    name = {"describe": "spy_describe", "vote": "spy_vote", "guess": "spy_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Who-is-Spy prompt for {spec.kind!r}")
    return Prompt(name, values, forbidden)


def _chameleon(obs: Observation, spec: ActionSpec) -> Prompt:
    v = obs.view
    clues = [f"{player_name(c['seat'])}: {c['clue']}" for c in v["clues"]]
    secret = v["secret"]
    values: dict[str, object] = {
        "players": v["players"],
        "player": player_name(obs.seat),
        "category": v["category"],
        "card": ", ".join(v["card"]),
        "secret_line": (
            "You are the chameleon: you do not know the secret word. Blend in."
            if v["is_chameleon"]
            else f"Secret word: {secret}"
        ),
        "clues": _lines(clues),
    }
    name = {"clue": "chameleon_clue", "vote": "chameleon_vote", "guess": "chameleon_guess"}.get(spec.kind)
    if name is None:
        raise ValueError(f"no Chameleon prompt for {spec.kind!r}")
    forbidden = (secret,) if secret and not v["is_chameleon"] else ()
    return Prompt(name, values, forbidden)


RENDERERS: dict[str, Callable[[Observation, ActionSpec], Prompt]] = {
    "decrypto": _decrypto,
    "spy": _spy,
    "chameleon": _chameleon,
}


def rules_key(obs: Observation) -> str:
    return str(obs.view.get("variant") or "classic")


# --------------------------------------------------------------------------- the agent


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
        self._inference_for = inference_for
        self._client: Inference | None = None

    async def client(self) -> Inference:
        if self._client is None:
            self._client = await self._inference_for(self.model_spec)
        return self._client

    def messages(self, obs: Observation, spec: ActionSpec, feedback: str | None = None) -> tuple[tuple[Message, ...], Prompt, dict[str, Option]]:
        """The chat for this turn, what it was filled from, and the label of each shown option."""
        render = RENDERERS.get(obs.game)
        if render is None:
            raise ValueError(f"the LLM agent has no prompts for the game {obs.game!r}")
        prompt = render(obs, spec)
        values = dict(prompt.values)
        labelled: dict[str, Option] = {}
        if isinstance(spec, Choice):
            labelled = self.labelled_options(obs, spec, feedback)
            values["options"] = "\n".join(f"{k}) {o.label}" for k, o in labelled.items())
            values["labels"] = ", ".join(labelled)
        else:
            values["format"] = answer_format(spec)
        rules_table = f"{obs.game}_rules"
        rules = self.prompts.table(rules_table).get(rules_key(obs)) or next(iter(self.prompts.table(rules_table).values()))
        values["rules"] = string.Template(rules).substitute({k: str(x) for k, x in values.items()})
        system = self.prompts.fill(prompt.template, "system", values)
        user = self.prompts.fill(prompt.template, "user", values)
        if feedback:
            user += "\n" + self.prompts.fill("retry", "refused", {"reason": feedback})
        table = self.prompts.table(prompt.template)
        example: tuple[Message, ...] = ()
        if self.examples and "example_user" in table and "example_assistant" in table \
                and not _example_overlaps(table, user):
            # Fixed text, so it stays inside the cached prompt prefix of every turn.
            example = (Message("user", table["example_user"]), Message("assistant", table["example_assistant"]))
        return (Message("system", system), *example, Message("user", user)), prompt, labelled

    def labelled_options(self, obs: Observation, spec: Choice, feedback: str | None = None) -> dict[str, Option]:
        """Options in a seeded random order, labelled A, B, C... (or by their own text past 26)."""
        options = list(spec.options)
        attempt = 0 if feedback is None else zlib.crc32(feedback.encode())
        rng(self.seed, "llm-options", obs.game, obs.seat, len(obs.events), obs.phase, attempt).shuffle(options)
        if len(options) <= len(LETTERS):
            return {LETTERS[i]: o for i, o in enumerate(options)}
        texts = [o.label for o in options]
        keys = texts if len(set(texts)) == len(texts) else [o.id for o in options]
        return dict(zip(keys, options, strict=False))

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None) -> Decision:
        if isinstance(spec, Choice) and len(spec.options) == 1:
            # Nothing to decide ("ready"): no model call.
            only = spec.options[0]
            return Decision(Action.choose(spec.kind, only.id), (CallLog(self.spec, operation="none", raw_output=only.id),))
        messages, prompt, labelled = self.messages(obs, spec, feedback)
        if isinstance(spec, Choice) and self.choices == "score":
            return await self._score(obs, spec, messages, labelled, feedback)
        return await self._generate(obs, spec, messages, prompt, labelled, feedback)

    async def _score(
        self, obs: Observation, spec: Choice, messages: tuple[Message, ...], labelled: dict[str, Option], feedback: str | None
    ) -> Decision:
        client = await self.client()
        labels = tuple(labelled)
        mode = "first_token" if all(len(k) == 1 for k in labels) else "loglik"
        started = time.perf_counter()
        result = await client.score_labels(ScoreRequest(messages, labels, mode))
        latency = (time.perf_counter() - started) * 1000
        probs = dict(zip(labels, result.probs, strict=False))
        if self.temperature > 0:
            weights = [p ** (1.0 / self.temperature) for p in probs.values()]
            r = rng(self.seed, "llm-sample", obs.game, obs.seat, len(obs.events), obs.phase, feedback or "")
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
        )
        return Decision(Action.choose(spec.kind, labelled[label].id), (log,))

    async def _generate(
        self,
        obs: Observation,
        spec: ActionSpec,
        messages: tuple[Message, ...],
        prompt: Prompt,
        labelled: dict[str, Option],
        feedback: str | None,
    ) -> Decision:
        client = await self.client()
        chat = list(messages)
        calls: list[CallLog] = []
        fmt = answer_format(spec) if isinstance(spec, Text) else f"ANSWER: <one letter from {', '.join(labelled)}>"
        base_seed = zlib.crc32(repr((self.seed, obs.game, obs.seat, len(obs.events), feedback)).encode())
        # A short answer needs few tokens: a budget near its word limit keeps a rambling
        # model from spending seconds on text that will be refused anyway.
        budget = self.max_tokens
        if isinstance(spec, Text):
            budget = min(self.max_tokens, 6 + 3 * spec.max_words * len(spec.fields))
        for attempt in range(self.retries + 1):
            # The reply is begun for the model: small models then answer instead of chatting.
            # A retry samples (a greedy model would repeat the refused answer word for word).
            again = attempt > 0 or feedback is not None  # the table refused our last answer too
            temperature = max(self.temperature, RETRY_TEMPERATURE) if again else self.temperature
            req = GenerateRequest(tuple(chat), max_tokens=budget, temperature=temperature,
                                  seed=base_seed + attempt, prefill="ANSWER:", stop=("\n",))
            started = time.perf_counter()
            result = await client.generate(req)
            latency = (time.perf_counter() - started) * 1000
            try:
                if isinstance(spec, Text):
                    action = Action.say(spec.kind, *parse_text_answer(result.text, spec, prompt.forbidden))
                    _refuse_copied_instructions(action.value, chat)
                else:
                    action = Action.choose(spec.kind, parse_choice_answer(result.text, labelled))
            except ValueError as exc:
                reason = str(exc)
                calls.append(self._gen_log(client, result.model, chat, result.text, latency, attempt, f"refused: {reason}"))
                chat += [Message("assistant", result.text), Message("user", self.prompts.fill("retry", "user", {"reason": reason, "format": fmt}))]
                continue
            calls.append(self._gen_log(client, result.model, chat, result.text, latency, attempt, None))
            return Decision(action, tuple(calls))
        raise AnswerRefused(f"no acceptable answer after {self.retries + 1} tries; last: {calls[-1].error}", calls)

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
    inference_for: InferenceFor, arg: str, params: Mapping[str, str], seed: int, *, spec: str = ""
) -> LLMAgent:
    """Build from a spec's parts: ``llm:<model>?temperature=0.6&retries=3&max_tokens=32&choices=score&prompts=DIR&examples=0``.

    ``examples=0`` leaves out the worked example some templates carry: the prompt then has
    exactly the papers' structure (rules, role, turn summary, request)."""
    known = {"temperature", "retries", "max_tokens", "choices", "prompts", "examples", "mode"}
    if params.get("mode", "plain") not in ("plain", "strategic"):
        raise ValueError(f"bad llm agent spec: mode is 'strategic' or 'plain', not {params.get('mode')!r}")
    unknown = sorted(set(params) - known)
    if unknown:
        raise ValueError(f"unknown llm agent parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    try:
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
        )
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bad llm agent spec: {exc}") from exc


__all__ = [
    "AnswerRefused",
    "LLMAgent",
    "PromptBook",
    "agent_from_params",
    "answer_format",
    "parse_choice_answer",
    "parse_text_answer",
    "player_name",
]

"""Inference through any OpenAI-compatible server (vLLM, llama.cpp server, SGLang...) for scale-out.

Spec: ``llm:openai:http://host:8000/v1#model-name`` (see ``parse_openai_spec``).

Generation goes to ``/chat/completions``. Label scoring ("first_token") asks
the same endpoint for one token at temperature 0 with ``top_logprobs`` and
reads the label tokens' log-probabilities:

- a top-logprob token matches a label when the two are equal after stripping
  surrounding whitespace ("A" and " A" both count for label "A"); several
  spellings of one label have their probabilities added;
- the found labels are renormalised to sum to 1 (softmax over their logprobs);
- a label absent from the top list is known only to be less likely than every
  listed token, so it gets ``min(listed logprobs) - missing_margin`` (one nat
  by default): small but not zero, and never above a listed token. Its name
  is reported in ``extra["missing_labels"]``. If no label is listed at all
  the answer carries no information and ``InferenceError`` is raised;
- when the label token ids are known (``label_token_ids``), vLLM's
  ``allowed_token_ids`` restricts the answer to them, so every label is
  listed (start vLLM with ``--logprobs-mode processed_logprobs`` so the
  logprobs reflect that restriction).

"loglik" scoring renders the conversation as plain text (``transcript``),
appends each option, and asks ``/completions`` with ``echo`` and ``logprobs``
for the log-likelihood of the option's tokens. A server without echo
logprobs raises ``InferenceError``. The plain rendering is not the model's
chat template, so "first_token" is preferred wherever labels are single tokens.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from models.types import (
    GenerateRequest,
    GenerateResult,
    InferenceError,
    Message,
    ScoreRequest,
    ScoreResult,
    ScoringMode,
)

DEFAULT_MAX_TOP_LOGPROBS = 20  # vLLM's default --max-logprobs, and OpenAI's cap
DEFAULT_MISSING_MARGIN = 1.0


@dataclass(frozen=True, slots=True)
class OpenAISpec:
    base_url: str  # ends before /chat/completions, e.g. http://host:8000/v1
    model: str


def parse_openai_spec(spec: str) -> OpenAISpec:
    """Parse ``llm:openai:URL#model`` (the ``llm:`` and ``openai:`` prefixes are optional)."""
    s = spec.strip()
    for prefix in ("llm:", "openai:"):
        if s.startswith(prefix):
            s = s[len(prefix):]
    url, sep, model = s.partition("#")
    if not sep or not model:
        raise ValueError(f"OpenAI spec {spec!r} needs a model name after '#', e.g. llm:openai:http://host:8000/v1#my-model")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"OpenAI spec {spec!r} needs an http(s) URL, e.g. llm:openai:http://host:8000/v1#my-model")
    return OpenAISpec(url.rstrip("/"), model)


def transcript(messages: Sequence[Message]) -> str:
    """Plain-text rendering of a conversation for /completions, ending where the answer starts."""
    return "\n\n".join(f"{m.role.capitalize()}: {m.content}" for m in messages) + "\n\nAssistant:"


def _logsumexp(xs: Sequence[float]) -> float:
    m = max(xs)
    if m == -math.inf:
        return m
    return m + math.log(sum(math.exp(x - m) for x in xs))


def _softmax(xs: Sequence[float]) -> tuple[float, ...]:
    m = max(xs)
    exps = [math.exp(x - m) for x in xs]
    z = sum(exps)
    return tuple(e / z for e in exps)


def label_logprobs(
    labels: Sequence[str], top: Sequence[tuple[str, float]], missing_margin: float = DEFAULT_MISSING_MARGIN
) -> tuple[list[float], list[str]]:
    """Log-probability of each label from a top-logprob list; also the labels that were missing.

    Pure: the policy described in the module docstring, testable without a server.
    """
    index: dict[str, int] = {}
    for i, lab in enumerate(labels):
        key = lab.strip()
        if not key or key in index:
            raise ValueError(f"labels must be distinct and non-blank after stripping spaces, got {list(labels)}")
        index[key] = i
    found: dict[int, list[float]] = {}
    for tok, lp in top:
        hit = index.get(tok.strip())
        if hit is not None:
            found.setdefault(hit, []).append(lp)
    if not found:
        listed = ", ".join(repr(t) for t, _ in top[:10])
        raise InferenceError(f"none of the labels {list(labels)} is among the server's top tokens ({listed})")
    floor = min(lp for _, lp in top) - missing_margin
    out = [_logsumexp(found[i]) if i in found else floor for i in range(len(labels))]
    missing = [lab for i, lab in enumerate(labels) if i not in found]
    return out, missing


class OpenAIInference:
    """``Inference`` over an OpenAI-compatible HTTP server; the server does the batching."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        max_top_logprobs: int = DEFAULT_MAX_TOP_LOGPROBS,
        missing_margin: float = DEFAULT_MISSING_MARGIN,
        label_token_ids: Mapping[str, int] | None = None,
        render: Callable[[Sequence[Message]], str] = transcript,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        if max_top_logprobs < 1:
            raise ValueError("max_top_logprobs must be at least 1")
        self.base_url = base_url.rstrip("/")
        self.model_id = model
        self.timeout_s = timeout_s
        self.max_top_logprobs = max_top_logprobs
        self.missing_margin = missing_margin
        self.label_token_ids = dict(label_token_ids or {})
        self.render = render
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._session = session
        self._owns_session = session is None

    @classmethod
    def from_spec(cls, spec: str, **kwargs: Any) -> OpenAIInference:
        s = parse_openai_spec(spec)
        return cls(s.base_url, s.model, **kwargs)

    async def aclose(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None

    # -- HTTP -------------------------------------------------------------

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(headers=self._headers)
            self._owns_session = True
        return self._session

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        try:
            async with self._http().post(url, json=body, timeout=aiohttp.ClientTimeout(total=self.timeout_s)) as resp:
                text = await resp.text()
                if resp.status != 200:
                    raise InferenceError(f"{url} answered {resp.status}: {text[:300]}")
                try:
                    data = await resp.json(content_type=None)
                except ValueError:
                    raise InferenceError(f"{url} answered with non-JSON: {text[:200]}") from None
        except TimeoutError:
            raise InferenceError(f"{url} did not answer within {self.timeout_s:g} s") from None
        except aiohttp.ClientError as exc:
            raise InferenceError(f"{url} unreachable: {type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict):
            raise InferenceError(f"{url} answered with a JSON {type(data).__name__}, expected an object")
        return data

    # -- Inference --------------------------------------------------------

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [m.to_json() for m in req.messages],
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
        }
        if req.stop:
            body["stop"] = list(req.stop)
        if req.seed is not None:
            body["seed"] = req.seed
        t0 = time.perf_counter()
        data = await self._post("/chat/completions", body)
        try:
            text = data["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise InferenceError(f"unexpected chat completion shape: {str(data)[:300]}") from None
        usage = data.get("usage") or {}
        return GenerateResult(
            text=text,
            model=str(data.get("model") or self.model_id),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            cached_tokens=_cached(usage),
        )

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        if req.mode == ScoringMode.FIRST_TOKEN:
            return await self._score_first_token(req)
        if req.mode == ScoringMode.LOGLIK:
            return await self._score_loglik(req)
        raise ValueError(f"unknown scoring mode {req.mode!r}; use 'first_token' or 'loglik'")

    async def _score_first_token(self, req: ScoreRequest) -> ScoreResult:
        if not req.labels:
            raise ValueError("at least one label is needed")
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [m.to_json() for m in req.messages],
            "max_tokens": 1,
            "temperature": 0,
            "logprobs": True,
            # Ask for as many as allowed: more listed tokens means fewer labels
            # that need the missing-label estimate.
            "top_logprobs": self.max_top_logprobs,
        }
        ids = [self.label_token_ids.get(lab) for lab in req.labels]
        if all(i is not None for i in ids):
            body["allowed_token_ids"] = ids
        t0 = time.perf_counter()
        data = await self._post("/chat/completions", body)
        try:
            first = data["choices"][0]["logprobs"]["content"][0]
            top = [(str(t["token"]), float(t["logprob"])) for t in first.get("top_logprobs") or ()]
            top.append((str(first["token"]), float(first["logprob"])))
        except (KeyError, IndexError, TypeError, ValueError):
            raise InferenceError(f"the server returned no logprobs for label scoring: {str(data)[:300]}") from None
        # The sampled token is usually in the top list too; count it once.
        top = list(dict.fromkeys(top))
        lps, missing = label_logprobs(req.labels, top, self.missing_margin)
        usage = data.get("usage") or {}
        return ScoreResult(
            probs=_softmax(lps),
            model=str(data.get("model") or self.model_id),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            cached_tokens=_cached(usage),
            extra={
                "missing_labels": missing,
                # How much of the model's next-token mass fell on the labels:
                # low values mean the model wanted to answer something else.
                "label_mass": sum(math.exp(lp) for lp, lab in zip(lps, req.labels, strict=False) if lab not in missing),
            },
        )

    async def _score_loglik(self, req: ScoreRequest) -> ScoreResult:
        if not req.labels:
            raise ValueError("at least one label is needed")
        context = self.render(req.messages)
        sep = "" if context[-1:].isspace() else " "
        prompts = [context + (lab if lab[:1].isspace() else sep + lab) for lab in req.labels]
        body = {
            "model": self.model_id,
            "prompt": prompts,
            "max_tokens": 1,
            "temperature": 0,
            "echo": True,
            "logprobs": 1,
        }
        t0 = time.perf_counter()
        try:
            data = await self._post("/completions", body)
        except InferenceError as exc:
            raise InferenceError(f"loglik scoring needs /completions with echo and logprobs: {exc}") from None
        choices = data.get("choices")
        if not isinstance(choices, list) or len(choices) != len(prompts):
            raise InferenceError(f"/completions returned {len(choices) if isinstance(choices, list) else 'no'} choices for {len(prompts)} prompts")
        # Choices carry their prompt's index; order by it rather than trusting list order.
        by_index = sorted(choices, key=lambda c: int(c.get("index", 0)) if isinstance(c, dict) else 0)
        scores = [
            _option_loglik(c, len(context), len(p)) for c, p in zip(by_index, prompts, strict=False)
        ]
        usage = data.get("usage") or {}
        return ScoreResult(
            probs=_softmax(scores),
            model=str(data.get("model") or self.model_id),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            cached_tokens=_cached(usage),
            extra={"loglik": scores},
        )


def _option_loglik(choice: Any, context_len: int, prompt_len: int) -> float:
    """Sum the echoed logprobs of the tokens that overlap the option text.

    A token that straddles the context/option boundary is counted with the
    option: dropping it would score the option from its second token on.
    Tokens at or past ``prompt_len`` are the generated one and are skipped.
    """
    try:
        lp = choice["logprobs"]
        tokens, logprobs, offsets = lp["tokens"], lp["token_logprobs"], lp["text_offset"]
    except (KeyError, TypeError):
        raise InferenceError("the server does not return echoed logprobs with text offsets; loglik scoring is unavailable") from None
    if not (isinstance(tokens, list) and len(tokens) == len(logprobs) == len(offsets)):
        raise InferenceError("echoed logprobs have inconsistent lengths; loglik scoring is unavailable")
    total = 0.0
    counted = 0
    for tok, lp_, off in zip(tokens, logprobs, offsets, strict=False):
        if off >= prompt_len:
            break
        if off + len(tok) > context_len:
            if lp_ is None:
                raise InferenceError("the server returned no logprob for an option token")
            total += float(lp_)
            counted += 1
    if counted == 0:
        raise InferenceError("no option tokens found in the echoed prompt")
    return total


def _cached(usage: Mapping[str, Any]) -> int:
    details = usage.get("prompt_tokens_details") or {}
    return int(details.get("cached_tokens") or 0) if isinstance(details, Mapping) else 0

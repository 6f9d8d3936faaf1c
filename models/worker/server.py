"""The inference worker's HTTP face: JSON endpoints over any ``Inference``, plus health and metrics.

Routes (all JSON except /metrics):

- ``POST /v1/generate`` ``{messages, max_tokens?, temperature?, stop?, seed?, prefill?}``
  -> ``{text, model, prompt_tokens, completion_tokens, latency_s, cached_tokens}``
- ``POST /v1/score`` ``{messages, labels, mode?}``
  -> ``{probs, model, prompt_tokens, latency_s, cached_tokens, extra}``
- ``GET /healthz`` -> ``{status: "ok", model}``
- ``GET /metrics`` -> Prometheus text exposition (format 0.0.4)

Errors are ``{"error": message, "kind": ..., "retryable": bool}``: 400 for a
malformed body, 413 for one over the size limit, 422 when the model refuses
the request (e.g. labels that are not single tokens), 500 when the model
fails. ``retryable`` tells ``models.client.HttpClient`` whether another try can
help; a deterministic model failure will not get better by asking again.

A client that hangs up cancels its handler (``handler_cancellation``), and the
cancellation reaches the batcher, which drops the request before running it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import ipaddress
import json
import logging
import math
import socket
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import web

from models.types import (
    GenerateRequest,
    Inference,
    InferenceError,
    ScoreRequest,
    ScoringMode,
    messages_from_json,
)
from models.worker.httpguard import GuardedServer, guarded, json_too_deep

if TYPE_CHECKING:
    from _typeshed import DataclassInstance  # typing-only: every backend result is a dataclass

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY_BYTES = 1 << 20  # a long game transcript is tens of KB; 1 MiB leaves room
MAX_TOKENS_LIMIT = 4096
MAX_LABELS = 64
MAX_STOP = 16
SCORE_MODES = tuple(m.value for m in ScoringMode)
LATENCY_BUCKETS_S: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

_INFERENCE_KEY = web.AppKey("inference", Inference)


class BadRequest(ValueError):
    """The request body is not a valid request; the message says what to fix."""


# -- request parsing (pure) -------------------------------------------------


def _int_field(body: Mapping[str, Any], name: str, default: int | None, lo: int, hi: int) -> int | None:
    v = body.get(name, default)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadRequest(f"'{name}' must be an integer")
    if not lo <= v <= hi:
        raise BadRequest(f"'{name}' must be between {lo} and {hi}, got {v}")
    return v


def _messages(body: Mapping[str, Any]) -> Any:
    raw = body.get("messages")
    if not isinstance(raw, list):
        raise BadRequest("'messages' must be a list of {role, content} objects")
    try:
        return messages_from_json(raw)
    except ValueError as exc:
        raise BadRequest(f"'messages': {exc}") from None


def _check_keys(body: Mapping[str, Any], allowed: set[str]) -> None:
    # Unknown fields are refused rather than ignored: a misspelt "max_token"
    # silently falling back to the default is worse than a 400.
    extra = sorted(set(body) - allowed)
    if extra:
        raise BadRequest(f"unknown field(s) {extra}; allowed: {sorted(allowed)}")


def parse_generate(body: Any) -> GenerateRequest:
    """Validate a /v1/generate body into a ``GenerateRequest``."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    _check_keys(body, {"messages", "max_tokens", "temperature", "stop", "seed", "prefill"})
    messages = _messages(body)
    max_tokens = _int_field(body, "max_tokens", 48, 1, MAX_TOKENS_LIMIT)
    temperature = body.get("temperature", 0.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not math.isfinite(temperature):
        raise BadRequest("'temperature' must be a number")
    if not 0.0 <= temperature <= 5.0:
        raise BadRequest(f"'temperature' must be between 0 and 5, got {temperature}")
    stop = body.get("stop", [])
    if stop is None:
        stop = []
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) and s for s in stop) or len(stop) > MAX_STOP:
        raise BadRequest(f"'stop' must be a list of at most {MAX_STOP} non-empty strings")
    seed = _int_field(body, "seed", None, -(2**63), 2**63 - 1)
    assert max_tokens is not None
    prefill = body.get("prefill", "")
    if not isinstance(prefill, str) or len(prefill) > 200:
        raise BadRequest("'prefill' must be a string of at most 200 characters")
    return GenerateRequest(messages, max_tokens=max_tokens, temperature=float(temperature), stop=tuple(stop), seed=seed,
                           prefill=prefill)


def parse_score(body: Any) -> ScoreRequest:
    """Validate a /v1/score body into a ``ScoreRequest``."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    _check_keys(body, {"messages", "labels", "mode"})
    messages = _messages(body)
    labels = body.get("labels")
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x for x in labels):
        raise BadRequest("'labels' must be a non-empty list of non-empty strings")
    if len(labels) > MAX_LABELS:
        raise BadRequest(f"at most {MAX_LABELS} labels, got {len(labels)}")
    if len(set(labels)) != len(labels):
        raise BadRequest(f"'labels' must be distinct, got {labels}")
    mode = body.get("mode", ScoringMode.FIRST_TOKEN.value)
    if mode not in SCORE_MODES:
        raise BadRequest(f"'mode' must be one of {list(SCORE_MODES)}, got {mode!r}")
    return ScoreRequest(messages, labels=tuple(labels), mode=ScoringMode(mode))


# -- metrics ------------------------------------------------------------------


@dataclass(slots=True)
class _Histogram:
    buckets: tuple[float, ...]
    counts: list[int]
    total: float = 0.0
    n: int = 0

    @classmethod
    def new(cls, buckets: tuple[float, ...]) -> _Histogram:
        return cls(buckets, [0] * len(buckets))

    def observe(self, v: float) -> None:
        self.total += v
        self.n += 1
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1


def _fmt(v: float) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def _label_value(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class ServerMetrics:
    """Counters kept by the HTTP layer; batcher internals come from ``inference.stats``."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.latency: dict[str, _Histogram] = {}
        self.prompt_tokens: dict[str, int] = defaultdict(int)
        self.completion_tokens = 0
        self.cached_tokens: dict[str, int] = defaultdict(int)
        self.in_flight: dict[str, int] = defaultdict(int)
        self.cancelled: dict[str, int] = defaultdict(int)

    def record(self, endpoint: str, status: int, seconds: float) -> None:
        self.requests[(endpoint, status)] += 1
        h = self.latency.get(endpoint)
        if h is None:
            h = self.latency[endpoint] = _Histogram.new(LATENCY_BUCKETS_S)
        h.observe(seconds)

    def render(self, stats: object | None) -> str:
        lines: list[str] = []

        def head(name: str, kind: str, help_: str) -> None:
            lines.append(f"# HELP {name} {help_}")
            lines.append(f"# TYPE {name} {kind}")

        head("hushtable_requests_total", "counter", "HTTP requests by endpoint and status code.")
        for (ep, st), n in sorted(self.requests.items()):
            lines.append(f'hushtable_requests_total{{endpoint="{ep}",status="{st}"}} {n}')
        head("hushtable_requests_in_flight", "gauge", "Requests being handled now, by endpoint.")
        for ep in ("generate", "score"):
            lines.append(f'hushtable_requests_in_flight{{endpoint="{ep}"}} {self.in_flight[ep]}')
        head("hushtable_requests_cancelled_total", "counter", "Requests whose client went away before the answer.")
        for ep in ("generate", "score"):
            lines.append(f'hushtable_requests_cancelled_total{{endpoint="{ep}"}} {self.cancelled[ep]}')
        head("hushtable_request_latency_seconds", "histogram", "Wall time from request to response, by endpoint.")
        for ep, h in sorted(self.latency.items()):
            for b, c in zip(h.buckets, h.counts, strict=False):
                lines.append(f'hushtable_request_latency_seconds_bucket{{endpoint="{ep}",le="{_fmt(b)}"}} {c}')
            lines.append(f'hushtable_request_latency_seconds_bucket{{endpoint="{ep}",le="+Inf"}} {h.n}')
            lines.append(f'hushtable_request_latency_seconds_sum{{endpoint="{ep}"}} {_fmt(h.total)}')
            lines.append(f'hushtable_request_latency_seconds_count{{endpoint="{ep}"}} {h.n}')
        head("hushtable_prompt_tokens_total", "counter", "Prompt tokens of answered requests, by endpoint.")
        for ep in ("generate", "score"):
            lines.append(f'hushtable_prompt_tokens_total{{endpoint="{ep}"}} {self.prompt_tokens[ep]}')
        head("hushtable_completion_tokens_total", "counter", "Generated tokens of answered requests.")
        lines.append(f"hushtable_completion_tokens_total {self.completion_tokens}")
        head("hushtable_cached_tokens_total", "counter", "Prompt tokens served from a prefix cache, by endpoint.")
        for ep in ("generate", "score"):
            lines.append(f'hushtable_cached_tokens_total{{endpoint="{ep}"}} {self.cached_tokens[ep]}')
        lines.extend(render_stats(stats))
        return "\n".join(lines) + "\n"


def _stats_mapping(stats: object) -> Mapping[str, Any] | None:
    if stats is None:
        return None
    if isinstance(stats, Mapping):
        return stats
    for meth in ("snapshot", "as_dict", "to_dict"):
        f = getattr(stats, meth, None)
        if callable(f):
            got = f()
            if isinstance(got, Mapping):
                return got
            stats = got
            break
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        return {f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)}
    return None


# Fields of the batcher's stats that describe "now" rather than "so far".
_GAUGES = frozenset({"queue_depth"})


def _is_histogram(v: object) -> bool:
    return isinstance(v, Mapping) and {"buckets", "counts", "sum", "count"} <= set(v)


def _histogram_lines(name: str, h: Mapping[str, Any], labels: str = "") -> list[str]:
    sep = "," if labels else ""
    out = [
        f'{name}_bucket{{{labels}{sep}le="{_fmt(b)}"}} {int(c)}' for b, c in zip(h["buckets"], h["counts"], strict=False)
    ]
    out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {int(h["count"])}')
    tail = f"{{{labels}}}" if labels else ""
    out.append(f"{name}_sum{tail} {_fmt(h['sum'])}")
    out.append(f"{name}_count{tail} {int(h['count'])}")
    return out


def _metric_name(key: str) -> str:
    base = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    if base.endswith("_s"):
        base = base[:-2] + "_seconds"  # Prometheus names carry the base unit spelt out
    return "hushtable_batcher_" + base


def render_stats(stats: object | None) -> list[str]:
    """Render the batcher's ``stats`` (``BatcherStats.to_dict()``) as ``hushtable_batcher_*`` families.

    Shapes understood: a number (a counter, or a gauge for ``queue_depth``);
    a histogram ``{buckets, counts (cumulative), sum, count}``; a mapping from
    request kind to a number or to a histogram (a ``kind`` label). Anything
    else is skipped, so a new field in the batcher never breaks /metrics.
    """
    m = _stats_mapping(stats)
    if not m:
        return []
    lines: list[str] = []
    for key in sorted(m):
        val = m[key]
        name = _metric_name(str(key))
        if isinstance(val, (int, float)) and not isinstance(val, bool):
            if key in _GAUGES:
                lines += [f"# TYPE {name} gauge", f"{name} {_fmt(val)}"]
            else:
                lines += [f"# TYPE {name}_total counter", f"{name}_total {_fmt(val)}"]
        elif _is_histogram(val):
            lines.append(f"# TYPE {name} histogram")
            lines += _histogram_lines(name, val)
        elif isinstance(val, Mapping) and val and all(_is_histogram(v) for v in val.values()):
            lines.append(f"# TYPE {name} histogram")
            for k in sorted(val, key=str):
                lines += _histogram_lines(name, val[k], f'kind="{_label_value(str(k))}"')
        elif isinstance(val, Mapping) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in val.values()):
            lines.append(f"# TYPE {name}_total counter")
            for k in sorted(val, key=str):
                lines.append(f'{name}_total{{kind="{_label_value(str(k))}"}} {_fmt(val[k])}')
    return lines


# -- handlers -----------------------------------------------------------------

_METRICS_KEY = web.AppKey("metrics", ServerMetrics)
_MAX_BODY_KEY = web.AppKey("max_body_bytes", int)


def _error(status: int, kind: str, message: str, retryable: bool = False) -> web.Response:
    return web.json_response({"error": message, "kind": kind, "retryable": retryable}, status=status)


async def _read_json(request: web.Request) -> Any:
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        limit = request.app[_MAX_BODY_KEY]
        raise _Reply(_error(413, "too_large", f"request body over the {limit}-byte limit")) from None
    if not raw:
        raise BadRequest("empty body; send a JSON object")
    if json_too_deep(raw):
        raise BadRequest("the body is nested too deeply to be a request")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadRequest(f"malformed JSON: {exc}") from None
    except RecursionError:
        raise BadRequest("the body is nested too deeply to be a request") from None


class _Reply(Exception):
    """Carries a ready response out of a helper."""

    def __init__(self, response: web.Response) -> None:
        super().__init__()
        self.response = response


def _result_json(result: DataclassInstance) -> dict[str, Any]:
    d = dataclasses.asdict(result)
    if "probs" in d:
        d["probs"] = list(d["probs"])
    return d


async def _serve_call(
    request: web.Request,
    endpoint: str,
    parse: Callable[[Any], Any],
    call: Callable[[Inference, Any], Any],
) -> web.Response:
    metrics = request.app[_METRICS_KEY]
    inference = request.app[_INFERENCE_KEY]
    t0 = time.perf_counter()
    metrics.in_flight[endpoint] += 1
    status = 500
    try:
        try:
            req = parse(await _read_json(request))
        except BadRequest as exc:
            resp = _error(400, "bad_request", str(exc))
        except _Reply as r:
            resp = r.response
        else:
            try:
                result = await call(inference, req)
            except InferenceError as exc:
                resp = _error(500, "model_error", str(exc) or type(exc).__name__)
            except ValueError as exc:
                resp = _error(422, "refused", str(exc))
            except asyncio.CancelledError:
                metrics.cancelled[endpoint] += 1
                status = 499  # nginx's "client closed request"; nobody reads the reply
                raise
            except Exception as exc:  # a bug in a backend must not kill the server
                log.exception("inference failed on %s", endpoint)
                resp = _error(500, "internal", f"{type(exc).__name__}: {exc}")
            else:
                metrics.prompt_tokens[endpoint] += int(getattr(result, "prompt_tokens", 0))
                metrics.cached_tokens[endpoint] += int(getattr(result, "cached_tokens", 0))
                metrics.completion_tokens += int(getattr(result, "completion_tokens", 0))
                resp = web.Response(
                    text=json.dumps(_result_json(result), default=str),
                    content_type="application/json",
                )
        status = resp.status
        return resp
    finally:
        metrics.in_flight[endpoint] -= 1
        metrics.record(endpoint, status, time.perf_counter() - t0)


async def _generate(request: web.Request) -> web.Response:
    return await _serve_call(request, "generate", parse_generate, lambda inf, r: inf.generate(r))


async def _score(request: web.Request) -> web.Response:
    return await _serve_call(request, "score", parse_score, lambda inf, r: inf.score_labels(r))


async def _healthz(request: web.Request) -> web.Response:
    inference = request.app[_INFERENCE_KEY]
    stats = _stats_mapping(getattr(inference, "stats", None)) or {}
    # queue_depth: what a pool of workers (models/workers.py) weighs when it picks one.
    return web.json_response({"status": "ok", "model": inference.model_id, "queue_depth": int(stats.get("queue_depth", 0) or 0)})


async def _metrics(request: web.Request) -> web.Response:
    inference = request.app[_INFERENCE_KEY]
    body = request.app[_METRICS_KEY].render(getattr(inference, "stats", None))
    return web.Response(text=body, content_type="text/plain", charset="utf-8", headers={"X-Format": "prometheus-0.0.4"})


def _bearer_check(token: str) -> Any:
    """A middleware that answers 401 to any request but /healthz without ``Authorization: Bearer <token>``."""
    expected = f"Bearer {token}".encode()

    @web.middleware
    async def check(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path != "/healthz":
            given = request.headers.get("Authorization", "").encode()
            if not hmac.compare_digest(given, expected):
                return _error(401, "unauthorized", "this worker needs its token: set HUSHTABLE_WORKER_TOKEN on the bot")
        response: web.StreamResponse = await handler(request)
        return response

    return check


def make_app(inference: Inference, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, token: str | None = None) -> web.Application:
    """Build the worker's aiohttp application around an ``Inference`` (usually a ``Batcher``).

    The app does not own ``inference``: starting and closing it is the caller's job. With a
    ``token``, every call but /healthz must carry it as a bearer token.
    """
    app = web.Application(client_max_size=max_body_bytes, middlewares=[_bearer_check(token)] if token else [])
    app[_INFERENCE_KEY] = inference
    app[_METRICS_KEY] = ServerMetrics()
    app[_MAX_BODY_KEY] = max_body_bytes
    app.router.add_post("/v1/generate", _generate)
    app.router.add_post("/v1/score", _score)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/metrics", _metrics)
    return app


@dataclass(frozen=True, slots=True)
class ServerHandle:
    """A running server: where it listens and how to stop it."""

    server: GuardedServer
    host: str
    port: int

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def close(self) -> None:
        await self.server.close()


class UnsafeBind(ValueError):
    """A worker asked to listen beyond this machine without a token."""


def is_loopback(host: str) -> bool:
    """True for localhost and the loopback addresses: the only places a worker may listen without a token."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def start_server(
    inference: Inference,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    token: str | None = None,
    sock: socket.socket | None = None,
    **limits: float,
) -> ServerHandle:
    """Listen on ``host:port`` (port 0 picks a free one), or on ``sock`` already bound there, and return at once.

    Anything but a loopback address needs a ``token``: the worker runs prompts for whoever reaches it.
    """
    if not token and not is_loopback(host):
        raise UnsafeBind(f"the worker listens on {host} without a token: set HUSHTABLE_WORKER_TOKEN (the same on the bot)")
    if sock is None:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
    # handler_cancellation: without it aiohttp lets a handler run on after its
    # client has gone, and the model would compute answers nobody reads.
    server = guarded(make_app(inference, max_body_bytes=max_body_bytes, token=token), "worker",
                     handler_cancellation=True, **limits)
    await server.start(sock)
    return ServerHandle(server, host, server.port)


async def serve(inference: Inference, host: str = "127.0.0.1", port: int = 8000, **kwargs: Any) -> None:
    """Serve until cancelled, then stop listening (the caller closes ``inference``)."""
    handle = await start_server(inference, host, port, **kwargs)
    log.info("inference worker for %s listening on %s", inference.model_id, handle.url)
    try:
        await asyncio.Event().wait()
    finally:
        await handle.close()

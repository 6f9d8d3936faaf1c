"""Several inference workers behind one ``Inference``: ``HUSHTABLE_WORKER_URL=http://a:8100,http://b:8100``.

Which worker answers a request:

- **Locality.** Requests are keyed by the table they are made for (``route``: the game's id,
  set by the bot while an AI seat decides), or, for a request made outside a game, by the start
  of its conversation. Rendezvous hashing ranks the workers per key, so a game's turns keep going
  to the same worker, whose batcher reuses the cached prefix, and different games spread over
  the pool even when they play the same rules (their conversations start alike); when a worker
  leaves, only its own keys move.
- **Load.** Each worker's own batcher reports its queue depth on /healthz; a background poll
  keeps it fresh, and requests in flight from here are counted as they go. The first-ranked
  worker is passed over only when it is ``overload`` requests busier than the least busy one.
- **Health.** A worker that cannot be reached, times out or answers 5xx is skipped with doubling
  backoff (``backoff_s`` up to ``max_backoff_s``); after its pause it is tried again, and a success
  restores it. A request whose worker dies under it is retried once on the next worker, so a
  lost worker costs at most one retry, never a stalled table.

The answer does not depend on the worker: every worker serves the same model and requests carry
their seed, so routing changes no move.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import SplitResult, urlsplit

from models.types import (
    GenerateRequest,
    GenerateResult,
    Inference,
    InferenceError,
    Message,
    ScoreRequest,
    ScoreResult,
    WorkerUnavailable,
)

log = logging.getLogger(__name__)

T = TypeVar("T")
# How much of the first user message names the table (rules and deal come first in our prompts).
_KEY_CHARS = 512


def split_urls(value: str | None) -> list[str]:
    """The worker URLs of ``HUSHTABLE_WORKER_URL`` (comma-separated; blanks and repeats dropped)."""
    return list(dict.fromkeys(u.strip().rstrip("/") for u in (value or "").split(",") if u.strip()))


def refuse_credentials(url: str) -> None:
    """Refuse a worker URL that carries a user or password (``http://u:pw@host``): the worker's token goes in
    HUSHTABLE_WORKER_TOKEN. Such a URL fails every call, and would carry its password into model ids and logs;
    the message names the host alone."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or "?"
        where = f"{parts.scheme}://{host}" + (f":{parts.port}" if _port_or_none(parts) is not None else "")
        raise ValueError(f"the worker URL for {where} carries credentials: give the worker's token in "
                         "HUSHTABLE_WORKER_TOKEN, never in the URL")


def _port_or_none(parts: SplitResult) -> int | None:
    try:
        return parts.port
    except ValueError:
        return None


def affinity_key(messages: Sequence[Message]) -> bytes:
    """The part of a conversation that a worker's prefix cache can reuse across one game's requests."""
    head = [m.content for m in messages[:1]]
    users = [m.content for m in messages if m.role == "user"]
    if users:
        head.append(users[0][:_KEY_CHARS])
    return hashlib.sha256("\x1f".join(head).encode()).digest()


def route_key(req: GenerateRequest | ScoreRequest) -> bytes:
    """The key a request is routed by: its table when it names one, else its conversation's start."""
    if req.route:
        return hashlib.sha256(b"route\x1f" + req.route.encode()).digest()
    return affinity_key(req.messages)


def rank(key: bytes, urls: Sequence[str]) -> list[str]:
    """Rendezvous (highest random weight) order of ``urls`` for ``key``: stable while the set is."""
    return sorted(urls, key=lambda u: hashlib.sha256(key + u.encode()).digest(), reverse=True)


class WorkerClient(Inference, Protocol):
    """What the pool needs of a worker's client (``models.client.HttpClient``): inference and its health."""

    async def health(self) -> dict[str, Any]: ...


@dataclass
class _Member:
    url: str
    client: WorkerClient
    failures: int = 0
    down_until: float = 0.0
    queued: int = 0  # the worker's own batcher queue, from its last /healthz
    in_flight: int = 0  # requests this pool has sent it and not yet heard back

    def load(self) -> int:
        return self.queued + self.in_flight


class WorkerPool:
    """One ``Inference`` over several workers of the same model (see the module docstring)."""

    def __init__(
        self,
        clients: Sequence[tuple[str, WorkerClient]],
        *,
        overload: int = 8,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        poll_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not clients:
            raise ValueError("a worker pool needs at least one worker URL")
        for url, _client in clients:
            refuse_credentials(url)
        self._members = {url: _Member(url, client) for url, client in clients}
        self.model_id = f"pool:{','.join(self._members)}"
        self.overload = overload
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.poll_s = poll_s
        self._clock = clock
        self._poller: asyncio.Task[None] | None = None
        self.routed: dict[str, int] = dict.fromkeys(self._members, 0)  # answers per worker (bench, tests)
        self.retried = 0

    # -- the Inference protocol -------------------------------------------------------------------

    async def start(self) -> None:
        """Begin polling the workers' queue depths (idempotent)."""
        if self._poller is None and self.poll_s > 0:
            self._poller = asyncio.get_running_loop().create_task(self._poll(), name="worker-pool-poll")

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        result: GenerateResult = await self._route(route_key(req), lambda c: c.generate(req))
        return result

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        result: ScoreResult = await self._route(route_key(req), lambda c: c.score_labels(req))
        return result

    async def aclose(self) -> None:
        poller, self._poller = self._poller, None
        if poller is not None:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        for m in self._members.values():
            await m.client.aclose()

    # -- routing ----------------------------------------------------------------------------------

    def healthy(self) -> list[str]:
        """The workers not paused now, in the order they were configured."""
        now = self._clock()
        return [u for u, m in self._members.items() if m.down_until <= now]

    def choose(self, key: bytes, exclude: frozenset[str] = frozenset()) -> str:
        """The worker for ``key``: the first healthy one in rendezvous order unless it is overloaded.
        With none healthy the request fails at once (`WorkerUnavailable`): sending it to a paused worker
        made every request wait out the HTTP timeout while every worker hung. A pause ends on its own, or
        sooner when the health poll hears the worker again."""
        candidates = [u for u in rank(key, list(self._members)) if u not in exclude]
        if not candidates:
            raise WorkerUnavailable("no worker left to try")
        healthy = set(self.healthy())
        up = [u for u in candidates if u in healthy]
        if not up:
            wait = max(0.0, min(self._members[u].down_until for u in candidates) - self._clock())
            raise WorkerUnavailable(f"no inference worker is healthy ({len(candidates)} paused after failures; "
                                    f"the first is tried again in {wait:.0f} s)")
        first = up[0]
        least = min(up, key=lambda u: self._members[u].load())
        if self._members[first].load() - self._members[least].load() > self.overload:
            return least
        return first

    async def _route(self, key: bytes, call: Callable[[WorkerClient], Awaitable[T]]) -> T:
        tried: set[str] = set()
        last: InferenceError | None = None
        for _attempt in range(min(2, len(self._members))):  # the chosen worker, then at most one retry
            url = self.choose(key, frozenset(tried))
            member = self._members[url]
            member.in_flight += 1
            try:
                result = await call(member.client)
            except WorkerUnavailable as exc:
                self._mark_down(member)
                tried.add(url)
                last = exc
                self.retried += 1
                continue
            finally:
                member.in_flight -= 1
            member.failures, member.down_until = 0, 0.0
            self.routed[url] += 1
            return result
        assert last is not None
        raise last

    def _mark_down(self, member: _Member) -> None:
        pause = min(self.max_backoff_s, self.backoff_s * 2**member.failures)
        member.failures += 1
        member.down_until = self._clock() + pause
        log.warning("inference worker %s unavailable; skipped for %.0f s", member.url, pause)

    async def _poll(self) -> None:
        while True:
            await asyncio.gather(*(self._probe(m) for m in self._members.values()))
            await asyncio.sleep(self.poll_s)

    async def _probe(self, member: _Member) -> None:
        try:
            data = await member.client.health()
            queued = int(data.get("queue_depth", 0) or 0)
        except Exception as exc:  # noqa: BLE001 - any failure is the worker's, and must not end the poll for all
            if not isinstance(exc, InferenceError):
                log.debug("health of inference worker %s: %s", member.url, type(exc).__name__)
            if member.down_until <= self._clock():
                self._mark_down(member)
            return
        member.queued = queued
        if member.down_until > self._clock():  # it answers again: back in rotation now
            member.failures, member.down_until = 0, 0.0
            log.info("inference worker %s is back", member.url)

"""An aiohttp application served with the limits a public port needs (the worker, Slack's HTTP mode).

aiohttp serves as many connections as the process has file descriptors and gives a client as long as
it likes for its request head: 1,100 idle connections under systemd's 1,024 open files once made every
real call time out while asyncio logged a "Too many open files" traceback per refused accept. Here:

- at most ``max_connections`` are open; a new one beyond that closes the oldest connection that is
  not serving a request (an idle keep-alive or a head still arriving), so the descriptors never run
  out and a health check or a real call always gets in; when every connection is busy the new one is
  closed at once;
- a request head must arrive within ``header_timeout_s`` (aiohttp's keep-alive timer, which also runs
  from the first byte of a connection), a body within ``body_timeout_s``;
- a JSON body nested deeper than ``MAX_JSON_DEPTH`` is refused before any parser recurses into it;
- connections closed for the cap are logged once per ``log_interval_s`` with their count, never one
  line (or traceback) per connection.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger(__name__)

MAX_JSON_DEPTH = 64
LOG_INTERVAL_S = 60.0


def json_too_deep(raw: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether the JSON text ``raw`` nests arrays and objects deeper than ``limit`` (strings are skipped)."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


class _Refuse(asyncio.Protocol):
    """A connection over the cap with every other one busy: closed at once, nothing read."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.abort() if isinstance(transport, asyncio.Transport) else transport.close()


@dataclass
class Limits:
    max_connections: int = 512
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    log_interval_s: float = LOG_INTERVAL_S


@dataclass
class GuardedServer:
    """``app`` served on a bound socket within `Limits`; ``port`` is where it listens."""

    app: web.Application
    name: str
    limits: Limits = field(default_factory=Limits)
    handler_cancellation: bool = False
    closed_for_cap: int = 0  # connections closed because the cap was reached (all time)
    port: int = 0
    _runner: web.AppRunner | None = None
    _server: asyncio.Server | None = None
    _born: dict[RequestHandler, float] = field(default_factory=dict)  # when each connection came (pruned)
    _unlogged: int = 0
    _last_log: float = float("-inf")

    async def start(self, sock: socket.socket) -> None:
        self.app.middlewares.append(_body_deadline(self.limits.body_timeout_s))
        self._runner = web.AppRunner(self.app, handler_cancellation=self.handler_cancellation, access_log=None,
                                     keepalive_timeout=self.limits.header_timeout_s)
        await self._runner.setup()
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._connection, sock=sock, backlog=128)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def cleanup(self) -> None:
        """`close` under the name aiohttp's runners use."""
        await self.close()

    @property
    def addresses(self) -> list[Any]:
        """Where it listens, as aiohttp's ``AppRunner.addresses`` says it."""
        return [s.getsockname() for s in self._server.sockets] if self._server is not None else []

    def _connection(self) -> asyncio.BaseProtocol:
        assert self._runner is not None and self._runner.server is not None
        server = self._runner.server
        # A connection closed a moment ago stays listed until its task ends: only open ones count.
        handlers = [h for h in server.connections if h.transport is not None]
        refuse = False
        if len(handlers) >= self.limits.max_connections:
            idle = [h for h in handlers if not getattr(h, "_request_in_progress", False)]
            if idle:
                oldest = min(idle, key=lambda h: self._born.get(h, 0.0))
                oldest.force_close()
            else:
                refuse = True
            self._note_cap()
        if refuse:
            return _Refuse()
        handler = server()
        now = asyncio.get_running_loop().time()
        if len(self._born) > 2 * self.limits.max_connections:  # forget the connections that have gone
            alive = set(handlers)  # (one accepted a moment ago is not listed yet: kept by its age)
            self._born = {h: t for h, t in self._born.items() if h in alive or now - t < 1.0}
        self._born[handler] = now
        return handler

    def _note_cap(self) -> None:
        self.closed_for_cap += 1
        self._unlogged += 1
        now = asyncio.get_running_loop().time()
        if now - self._last_log >= self.limits.log_interval_s:
            log.warning("%s: %d connection(s) closed in the last %.0f s: more than %d were open (a client holding "
                        "idle connections?)", self.name, self._unlogged, min(now - self._last_log, self.limits.log_interval_s),
                        self.limits.max_connections)
            self._last_log = now
            self._unlogged = 0


def _body_deadline(timeout_s: float) -> Middleware:
    """Reads a request's body within ``timeout_s`` (it is kept for the handler), and refuses one that is
    JSON nested too deeply; a slow body gets 408, a body over the app's size limit 413, no traceback."""

    @web.middleware
    async def deadline(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                       ) -> web.StreamResponse:
        if request.can_read_body:
            try:
                async with asyncio.timeout(timeout_s):
                    raw = await request.read()
            except TimeoutError:
                return _plain(408, "request body not received in time")
            except web.HTTPRequestEntityTooLarge:
                limit = getattr(request, "_client_max_size", 0)
                return _plain(413, f"request body over the {limit}-byte limit", "too_large")
            if _nested_too_deeply(request, raw):
                return _plain(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
        return await handler(request)

    return deadline


def _nested_too_deeply(request: web.Request, raw: bytes) -> bool:
    if request.content_type == "application/x-www-form-urlencoded":
        from urllib.parse import parse_qsl

        try:
            pairs = parse_qsl(raw.decode("utf-8", "replace"), max_num_fields=1000)
        except ValueError:
            return False  # the application refuses it as it would any malformed form
        return any(json_too_deep(v) for _, v in pairs)
    return json_too_deep(raw)


def _plain(status: int, text: str, kind: str = "bad_request") -> web.Response:
    return web.json_response({"error": text, "kind": kind, "retryable": False}, status=status)


def guarded(app: web.Application, name: str, **limits: Any) -> GuardedServer:
    """A `GuardedServer` for ``app``; ``limits`` override `Limits`' fields."""
    handler_cancellation = bool(limits.pop("handler_cancellation", False))
    return GuardedServer(app, name, Limits(**limits), handler_cancellation=handler_cancellation)

"""An aiohttp application served with the limits a public port needs (the worker, Slack's HTTP mode).

aiohttp serves as many connections as the process has file descriptors and gives a client as long as
it likes for its request head: 1,100 idle connections under systemd's 1,024 open files once made every
real call time out while asyncio logged a "Too many open files" traceback per refused accept. Here:

- at most ``max_connections`` are open; a new one beyond that closes the connection that has waited
  longest without a request being served: an idle keep-alive, a head still arriving, or a body still
  arriving (a head that announces a body it never sends would otherwise hold its slot as "busy" for the
  whole body deadline, and 520 such heads once shut out every authenticated call); only when every
  connection is running its handler is the new one closed at once;
- a request head must arrive within ``header_timeout_s`` (aiohttp's keep-alive timer, which also runs
  from the first byte of a connection), its body within ``body_timeout_s`` of the head (short: the
  bodies served here are at most a MiB, and the signature or token can only be checked once one is in);
- a body on a method that takes none (GET, HEAD, OPTIONS, DELETE) is a 400 at once, never read;
- a request answered before its body was read (401, 404, 408, 413) closes its connection at once
  rather than reading the rest of the body for aiohttp's 10 s "lingering" time;
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

from aiohttp import ClientPayloadError, web
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
    body_timeout_s: float = 5.0
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
    _since: dict[RequestHandler, float] = field(default_factory=dict)  # when each came or last answered (pruned)
    _reading: dict[RequestHandler, float] = field(default_factory=dict)  # those awaiting a body, since when
    _unlogged: int = 0
    _last_log: float = float("-inf")

    async def start(self, sock: socket.socket) -> None:
        self.app.middlewares.append(self._body_deadline())
        # lingering_time=0: a request answered with its body unread (a 401 before the body, a 408) closes the
        # connection rather than reading on for 10 s while it counts as idle.
        self._runner = web.AppRunner(self.app, handler_cancellation=self.handler_cancellation, access_log=None,
                                     keepalive_timeout=self.limits.header_timeout_s, lingering_time=0)
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
            # Evictable: idle (no request in progress: a keep-alive or a head still arriving) or awaiting its body;
            # the one waiting longest goes. A handler already running (a model call) is never cut.
            waiting = [(self._reading[h], h) for h in handlers if h in self._reading]
            waiting += [(self._since.get(h, 0.0), h) for h in handlers if not getattr(h, "_request_in_progress", False)]
            if waiting:
                min(waiting, key=lambda pair: pair[0])[1].force_close()
            else:
                refuse = True
            self._note_cap()
        if refuse:
            return _Refuse()
        handler = server()
        now = asyncio.get_running_loop().time()
        if len(self._since) > 2 * self.limits.max_connections:  # forget the connections that have gone
            alive = set(handlers)  # (one accepted a moment ago is not listed yet: kept by its age)
            self._since = {h: t for h, t in self._since.items() if h in alive or now - t < 1.0}
        self._since[handler] = now
        return handler

    def _body_deadline(self) -> Middleware:
        """Reads a request's body within ``body_timeout_s`` of its head (it is kept for the handler), refuses a body
        on a method that takes none and one that is JSON nested too deeply; a slow body gets 408, a body over the
        app's size limit 413, no traceback. While the body is awaited the connection may be evicted for a new one."""
        timeout_s = self.limits.body_timeout_s

        @web.middleware
        async def deadline(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                           ) -> web.StreamResponse:
            protocol = request.protocol
            try:
                if request.body_exists and request.method in _NO_BODY:
                    return _plain(400, f"{request.method} takes no request body")
                if request.can_read_body and request.match_info.http_exception is None:
                    loop = asyncio.get_running_loop()
                    self._reading[protocol] = loop.time()
                    try:
                        async with asyncio.timeout(timeout_s):
                            raw = await request.read()
                    except TimeoutError:
                        return _plain(408, "request body not received in time")
                    except web.HTTPRequestEntityTooLarge:
                        limit = getattr(request, "_client_max_size", 0)
                        return _plain(413, f"request body over the {limit}-byte limit", "too_large")
                    except (ConnectionError, ClientPayloadError):
                        # evicted for a newer connection, or the client went away: nobody reads an answer
                        return _plain(400, "connection closed before the body arrived")
                    finally:
                        self._reading.pop(protocol, None)
                    if _nested_too_deeply(request, raw):
                        return _plain(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
                return await handler(request)
            finally:
                self._since[protocol] = asyncio.get_running_loop().time()

        return deadline

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


# Methods whose requests carry no body here: one that announces a body is refused before it is read.
_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})


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

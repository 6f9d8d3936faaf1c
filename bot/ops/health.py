"""The bot's local HTTP endpoints: ``GET /healthz`` and ``GET /metrics``.

A Discord or Slack Socket Mode bot has no inbound port of its own; this one listens on
``HUSHTABLE_OPS_HOST:HUSHTABLE_OPS_PORT`` (127.0.0.1 unless configured, off unless a port is
set) for a container HEALTHCHECK, systemd watchdogs and a Prometheus scraper.

``/healthz`` answers 200 ``ok`` when the database answers ``SELECT 1`` within two seconds
(and, for a SQLite file, the file is still there: a deleted file keeps working through open
handles until the bot restarts and finds an empty log), else 503 with a reason that names no
URL, password or path.

The server is a few lines of HTTP/1.1 over asyncio streams rather than a framework, because
what it must refuse matters more than what it serves: the request head must arrive within
``header_timeout_s`` and fit ``MAX_HEAD_BYTES``, a body (none is expected) within
``body_timeout_s`` and ``MAX_BODY_BYTES``; at most ``max_connections`` are served at once and
any beyond are closed on accept, so a local process holding half-open connections cannot
take the bot's file descriptors. Every answer closes its connection. A malformed or slow
request is logged at DEBUG by its kind, without a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from dataclasses import dataclass

import sqlalchemy as sa

from bot.ops.metrics import CONTENT_TYPE, PrometheusObserver
from storage.ports import Reachable

log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 2.0
HEADER_TIMEOUT_S = 5.0
BODY_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 32
MAX_HEAD_BYTES = 8 * 1024
MAX_BODY_BYTES = 16 * 1024
LOG_INTERVAL_S = 60.0
_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
            413: "Content Too Large", 503: "Service Unavailable"}


@dataclass(frozen=True)
class Health:
    ok: bool
    reason: str = "ok"


async def check_database(store: Reachable) -> Health:
    """Can the log be read right now?"""
    plan = store.plan
    if plan.sqlite_file is not None:
        if not plan.sqlite_file.is_file():
            return Health(False, "database file is missing")
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_S):
            async with store.engine.connect() as conn:
                await conn.execute(sa.text("SELECT 1"))
    except TimeoutError:
        return Health(False, "database did not answer in time")
    except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"; the type says enough
        log.warning("health check: database unreachable (%s)", type(exc).__name__)
        return Health(False, f"database unreachable ({type(exc).__name__})")
    return Health(True)


class BadRequest(Exception):
    """A request the server will not serve; ``status`` is its answer."""

    def __init__(self, status: int, kind: str) -> None:
        super().__init__(kind)
        self.status = status
        self.kind = kind


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


class OpsServer:
    """The running endpoints; ``port`` is the bound port (useful with port 0 in tests)."""

    def __init__(self, store: Reachable, observer: PrometheusObserver, *, header_timeout_s: float = HEADER_TIMEOUT_S,
                 body_timeout_s: float = BODY_TIMEOUT_S, max_connections: int = MAX_CONNECTIONS) -> None:
        self.store = store
        self.observer = observer
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.max_connections = max_connections
        self.active = 0  # connections being served now
        self.refused = 0  # connections closed on accept because of the cap
        self.host = ""
        self.port = 0
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.Task[None]] = set()
        self._heads: dict[asyncio.StreamWriter, float] = {}  # connections still sending their head, since when
        self._unlogged = 0
        self._last_log = float("-inf")

    def _note_refusal(self) -> None:
        """Connections closed for the cap: one WARNING per interval with their count, not one per connection."""
        self._unlogged += 1
        now = asyncio.get_running_loop().time()
        if now - self._last_log >= LOG_INTERVAL_S:
            log.warning("ops endpoints: %d connection(s) closed: more than %d were open", self._unlogged,
                        self.max_connections)
            self._unlogged, self._last_log = 0, now

    @classmethod
    async def start(cls, store: Reachable, observer: PrometheusObserver, *, host: str = "127.0.0.1", port: int = 0,
                    sock: socket.socket | None = None, **limits: float) -> OpsServer:
        """Listen on ``host:port``, or on ``sock`` when the start-up has bound it already."""
        server = cls(store, observer, **limits)  # type: ignore[arg-type]
        if sock is not None:
            server._server = await asyncio.start_server(server._accept, sock=sock, limit=MAX_HEAD_BYTES)
        else:
            server._server = await asyncio.start_server(server._accept, host, port, limit=MAX_HEAD_BYTES)
        bound = server._server.sockets[0].getsockname()
        server.host, server.port = str(bound[0]), int(bound[1])
        log.info("ops endpoints on http://%s:%s (/healthz, /metrics)", host, server.port)
        return server

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._conns):
            task.cancel()
        await asyncio.gather(*self._conns, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    # ------------------------------------------------------------------ one connection

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.active >= self.max_connections:
            # A connection whose request head has not arrived makes room, the oldest first: local
            # clients holding connections open cannot keep a watchdog's /healthz out.
            victim = min(self._heads, key=self._heads.__getitem__, default=None)
            self.refused += 1
            self._note_refusal()
            if victim is None:
                writer.transport.abort()
                return
            del self._heads[victim]
            victim.transport.abort()
        self._heads[writer] = asyncio.get_running_loop().time()
        self.active += 1
        task = asyncio.current_task()
        if task is not None:
            self._conns.add(task)
        try:
            await self._serve(reader, writer)
        finally:
            self._heads.pop(writer, None)
            self.active -= 1
            if task is not None:
                self._conns.discard(task)
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        method = ""
        try:
            method, path = await self._read_request(reader)
            self._heads.pop(writer, None)
            answer = await self._answer(method, path)
        except BadRequest as exc:
            log.debug("ops request refused: %s", exc.kind)
            answer = _Answer(exc.status, f"{_REASONS.get(exc.status, 'Error').lower()}\n".encode())
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("ops connection dropped: %s", type(exc).__name__)
            return
        head = (f"HTTP/1.1 {answer.status} {_REASONS.get(answer.status, 'Error')}\r\n"
                f"Content-Type: {answer.content_type}\r\nContent-Length: {len(answer.body)}\r\n"
                "Connection: close\r\n\r\n").encode()
        try:
            writer.write(head + (b"" if method == "HEAD" else answer.body))
            async with asyncio.timeout(self.body_timeout_s):
                await writer.drain()
        except (ConnectionError, TimeoutError) as exc:
            log.debug("ops answer not delivered: %s", type(exc).__name__)

    async def _read_request(self, reader: asyncio.StreamReader) -> tuple[str, str]:
        try:
            async with asyncio.timeout(self.header_timeout_s):
                head = await reader.readuntil(b"\r\n\r\n")
        except TimeoutError:
            raise BadRequest(408, "request head not received in time") from None
        except asyncio.LimitOverrunError:
            raise BadRequest(400, "request head too large") from None
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                raise ConnectionResetError("closed before a request") from None
            raise BadRequest(400, "request head cut short") from None
        try:
            text = head.decode("ascii")
        except UnicodeDecodeError:
            raise BadRequest(400, "request head not ASCII") from None
        line, *header_lines = text.split("\r\n")
        parts = line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1].startswith("/"):
            raise BadRequest(400, "malformed request line")
        method, target = parts[0], parts[1]
        length = 0
        for h in header_lines:
            if not h:
                continue
            name, sep, value = h.partition(":")
            if not sep or not name or name != name.strip():
                raise BadRequest(400, "malformed header")
            if name.lower() == "content-length":
                value = value.strip()
                if not (value.isascii() and value.isdigit()) or len(value) > 12:
                    raise BadRequest(400, "malformed content length")
                length = int(value)
            elif name.lower() == "transfer-encoding":
                raise BadRequest(400, "chunked request body")
        if length > MAX_BODY_BYTES:
            raise BadRequest(413, "request body too large")
        if length:
            try:
                async with asyncio.timeout(self.body_timeout_s):
                    await reader.readexactly(length)
            except TimeoutError:
                raise BadRequest(408, "request body not received in time") from None
        return method, target.split("?", 1)[0]

    async def _answer(self, method: str, path: str) -> _Answer:
        if path not in ("/healthz", "/metrics"):
            return _Answer(404, b"not found\n")
        if method not in ("GET", "HEAD"):
            raise BadRequest(405, f"method {method[:10]!r} not allowed")
        if path == "/healthz":
            health = await check_database(self.store)
            self.observer.database_up.set(1 if health.ok else 0)
            return _Answer(200 if health.ok else 503, (health.reason + "\n").encode())
        return _Answer(200, self.observer.render(), CONTENT_TYPE)

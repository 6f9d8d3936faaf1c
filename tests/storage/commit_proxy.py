"""A TCP proxy between the bot and a real PostgreSQL that loses the answers to COMMITs.

It listens on 127.0.0.1 and forwards every byte both ways, reading the client's side of the
PostgreSQL wire protocol as it goes. When it is armed and a transaction that wrote a turn
(an ``INSERT INTO actions``, or whichever statements ``Drops.writes`` names: ``UPDATE games``
for lobby edits and starts) sends ``COMMIT``, it either forwards the COMMIT, waits for the
server's answer, swallows it and drops both connections (``after``: the turn is committed but
the writer cannot know), or drops both connections before the COMMIT reaches the server
(``before``: nothing is committed). Either way the client sees a connection lost in the middle
of its COMMIT: an unknown outcome.

The proxy runs its own event loop in a thread, so a test can point a child process at it.
"""

from __future__ import annotations

import asyncio
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy.engine import URL, make_url

_SSL_REQUEST = 80877103
_GSSENC_REQUEST = 80877104
_CANCEL_REQUEST = 80877102


@dataclass
class Drops:
    """What the proxy was asked to do and what it did."""

    every: int = 1  # drop every n-th turn COMMIT seen
    limit: int = 0  # at most this many drops (0: none)
    before_every: int = 0  # of the drops, every n-th loses the COMMIT itself instead of its answer
    writes: tuple[bytes, ...] = (b"INSERT INTO actions",)  # the statements whose transactions are watched
    seen: int = 0  # turn COMMITs seen
    after: int = 0  # answers dropped after the server committed
    before: int = 0  # COMMITs dropped before the server saw them
    lock: threading.Lock = field(default_factory=threading.Lock)

    script: list[str | None] = field(default_factory=list)  # what the next watched COMMITs meet, before the rest

    def decide(self) -> str | None:
        """None (forward), "after" or "before" for the next watched COMMIT."""
        with self.lock:
            self.seen += 1
            if self.script:
                what = self.script.pop(0)
                if what == "after":
                    self.after += 1
                elif what == "before":
                    self.before += 1
                return what
            if self.after + self.before >= self.limit or self.seen % self.every:
                return None
            n = self.after + self.before + 1
            if self.before_every and n % self.before_every == 0:
                self.before += 1
                return "before"
            self.after += 1
            return "after"


def _upstream_of(url: URL) -> Callable[[], asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]:
    host = url.query.get("host")
    port = url.port or 5432
    if isinstance(host, str) and host.startswith("/"):
        path = f"{host}/.s.PGSQL.{port}"
        return lambda: asyncio.ensure_future(asyncio.open_unix_connection(path))
    address = url.host or "localhost"
    return lambda: asyncio.ensure_future(asyncio.open_connection(address, port))


class CommitDropProxy:
    """``with CommitDropProxy(url) as proxy``: ``proxy.url`` reaches the same database through it."""

    def __init__(self, url: str, drops: Drops | None = None) -> None:
        self.target = make_url(url)
        self.drops = drops or Drops()
        self._connect = _upstream_of(self.target)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="commit-proxy")
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    @property
    def url(self) -> str:
        query = {k: v for k, v in self.target.query.items() if k != "host"}
        url: str = self.target.set(host="127.0.0.1", port=self.port, query=query).render_as_string(hide_password=False)
        return url

    def __enter__(self) -> CommitDropProxy:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop).result(10)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    def __exit__(self, *exc: object) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        try:
            server_r, server_w = await self._connect()
        except OSError:
            client_w.close()
            return
        dropping = asyncio.Event()  # set once a COMMIT's answer is to be swallowed
        up = asyncio.ensure_future(self._client_to_server(client_r, server_w, client_w, dropping))
        down = asyncio.ensure_future(self._server_to_client(server_r, client_w, dropping))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            for w in (client_w, server_w):
                w.transport.abort()

    async def _client_to_server(self, reader: asyncio.StreamReader, server: asyncio.StreamWriter,
                                client: asyncio.StreamWriter, dropping: asyncio.Event) -> None:
        # The startup phase has untyped messages (length, then a code); then every message is a type
        # byte and a length.
        while True:
            head = await reader.readexactly(8)
            length, code = struct.unpack("!ii", head)
            body = await reader.readexactly(length - 8)
            server.write(head + body)
            await server.drain()
            if code not in (_SSL_REQUEST, _GSSENC_REQUEST, _CANCEL_REQUEST):
                break
        wrote_turn = False
        inserts: set[bytes] = set()  # prepared statements that write what is watched (asyncpg reuses them by name)
        while True:
            kind = await reader.readexactly(1)
            length = struct.unpack("!i", await reader.readexactly(4))[0]
            body = await reader.readexactly(length - 4)
            message = kind + struct.pack("!i", length) + body
            if kind == b"P":  # Parse: statement name, query
                name, _, rest = body.partition(b"\0")
                if rest.startswith(self.drops.writes):
                    inserts.add(name)
                    wrote_turn = True
            elif kind == b"B":  # Bind: portal name, statement name
                statement = body.split(b"\0", 2)[1]
                wrote_turn |= statement in inserts
            elif kind == b"Q" and any(w in body for w in self.drops.writes):
                wrote_turn = True
            if kind == b"Q" and body.lstrip().upper().startswith(b"COMMIT"):
                if wrote_turn:
                    what = self.drops.decide()
                    if what == "before":
                        return  # the server never sees the COMMIT: the transaction rolls back
                    if what == "after":
                        dropping.set()
                wrote_turn = False
            elif kind == b"Q" and body.lstrip().upper().startswith(b"ROLLBACK"):
                wrote_turn = False
            server.write(message)
            await server.drain()
            if dropping.is_set():
                await asyncio.Event().wait()  # the answer is swallowed below; this side waits to be closed

    async def _server_to_client(self, reader: asyncio.StreamReader, client: asyncio.StreamWriter,
                                dropping: asyncio.Event) -> None:
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            if not dropping.is_set():
                client.write(chunk)
                await client.drain()
                continue
            # The COMMIT was forwarded: wait for its ReadyForQuery (the server has committed), tell
            # the client nothing, and end both connections.
            buffer += chunk
            if b"Z\x00\x00\x00\x05" in buffer:
                return

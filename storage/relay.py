"""Commands for a table that another bot process drives, carried through PostgreSQL.

When several bot processes share one database, a member's command (a move, SHOW, a reply in
direct messages) may reach a process that does not hold the table: the platform routes a
tenant's events to one process (a Discord shard, a Slack app connection), while the table may
be held by another (it took the table over while the first was down). The receiving process
asks the holder through ``LISTEN``/``NOTIFY``: each process listens on a channel named after
it, a request goes to the holder's channel, and the answer comes back on the asker's channel
(in parts: a notification carries at most 8000 bytes).

Nothing here is durable, and nothing needs to be: a request nobody answers in time (the holder
died with it, or the connection dropped) is answered by the asker with a sentence saying the
table is moving, and a move that was not logged may simply be sent again (its inbound key
stays unclaimed; one that was logged is recognised as a duplicate). A process whose listening
connection broke listens again on its next supervisor round (``ensure``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.database import Database

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one request's body (on the holder)."""

_PART_CHARS = 1500  # 4 bytes a character at most, and the envelope: well inside NOTIFY's 8000 bytes


def channel_of(owner: str) -> str:
    """The channel a bot process listens on (an identifier PostgreSQL accepts, whatever the name)."""
    return "hushtable_" + hashlib.sha256(owner.encode()).hexdigest()[:40]


class CommandRelay:
    """This process's end of the relay: asks holders, and answers what others ask of it."""

    def __init__(self, db: Database, owner: str) -> None:
        self._db = db
        self.owner = owner
        self.channel = channel_of(owner)
        self._handler: Handler | None = None
        self._conn: AsyncConnection | None = None
        self._raw: Any = None  # the asyncpg connection that listens
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._parts: dict[str, dict[int, str]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.asked = 0  # requests sent to other processes
        self.answered = 0  # requests of other processes answered here

    async def start(self, handler: Handler) -> None:
        """Listen for requests addressed to this process (idempotent)."""
        self._handler = handler
        await self.ensure()

    async def ensure(self) -> None:
        """Listen again when the listening connection was lost (a database restart)."""
        if self._handler is None:
            return
        if self._raw is not None and not self._raw.is_closed():
            return
        await self._drop_connection()
        conn = await self._db.engine.connect()
        try:
            raw: Any = (await conn.get_raw_connection()).driver_connection
            await raw.add_listener(self.channel, self._heard)
        except BaseException:
            await conn.close()
            raise
        self._conn, self._raw = conn, raw

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for fut in self._waiting.values():
            fut.cancel()
        await self._drop_connection()
        self._handler = None

    async def ask(self, holder: str, body: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Send ``body`` to the process ``holder`` and wait for its answer; None when none came in time."""
        rid = secrets.token_hex(8)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        try:
            message = json.dumps({"t": "ask", "id": rid, "from": self.owner, "body": body}, ensure_ascii=False)
            if len(message.encode()) > 7900:
                return None  # too long to carry (no command is: text answers are capped far below)
            await self._notify(channel_of(holder), [message])
            self.asked += 1
            return await asyncio.wait_for(fut, timeout)
        except (TimeoutError, sa.exc.SQLAlchemyError, OSError):
            return None
        finally:
            self._waiting.pop(rid, None)
            self._parts.pop(rid, None)

    # ------------------------------------------------------------------ inside

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            message = json.loads(payload)
            kind, rid = message["t"], str(message["id"])
        except (ValueError, KeyError, TypeError):
            log.warning("a malformed relay message was ignored")
            return
        if kind == "ask" and self._handler is not None:
            task = asyncio.get_running_loop().create_task(self._answer(rid, str(message["from"]), message["body"]))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == "part" and rid in self._waiting:
            parts = self._parts.setdefault(rid, {})
            parts[int(message["i"])] = str(message["part"])
            if len(parts) == int(message["n"]):
                text = "".join(parts[i] for i in range(len(parts)))
                fut = self._waiting[rid]
                if not fut.done():
                    fut.set_result(json.loads(text))

    async def _answer(self, rid: str, asker: str, body: dict[str, Any]) -> None:
        assert self._handler is not None
        try:
            answer = await self._handler(body)
        except Exception as exc:  # the asker times out and answers its member itself
            log.error("a relayed command failed here: %s", type(exc).__name__)
            return
        text = json.dumps(answer, ensure_ascii=False)
        chunks = [text[i:i + _PART_CHARS] for i in range(0, len(text), _PART_CHARS)] or [""]
        messages = [json.dumps({"t": "part", "id": rid, "i": i, "n": len(chunks), "part": c}, ensure_ascii=False)
                    for i, c in enumerate(chunks)]
        try:
            await self._notify(channel_of(asker), messages)
            self.answered += 1
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            log.warning("a relayed answer could not be sent: %s", type(exc).__name__)

    async def _notify(self, channel: str, messages: list[str]) -> None:
        # One transaction: the parts arrive together and in order.
        async with self._db.engine.begin() as conn:
            for m in messages:
                await conn.execute(sa.text("SELECT pg_notify(:channel, :payload)"), {"channel": channel, "payload": m})

    async def _drop_connection(self) -> None:
        conn, raw = self._conn, self._raw
        self._conn = self._raw = None
        if raw is not None and not raw.is_closed():
            with contextlib.suppress(Exception):
                await raw.remove_listener(self.channel, self._heard)
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()

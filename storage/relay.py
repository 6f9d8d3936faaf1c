"""Commands for a table that another bot process drives, carried through PostgreSQL.

When several bot processes share one database, a member's command (a move, SHOW, a reply in
direct messages) may reach a process that does not hold the table: the platform routes a
tenant's events to one process (a Discord shard, a Slack app connection), while the table may
be held by another (it took the table over while the first was down). The receiving process
asks the holder through ``LISTEN``/``NOTIFY``: each process listens on a channel of its own, a
request goes to the holder's channel, and the answer comes back on the asker's channel (in
parts: a notification carries at most 8000 bytes).

Any role that may connect to the database may LISTEN on any channel and NOTIFY any channel
(PostgreSQL asks no privilege for either), so nothing on the channels is trusted or readable
without the deployment's shared key (``HUSHTABLE_RELAY_KEY``): every message is encrypted with
AES-GCM under a key derived from it (a relayed command and its answer may hold a member's secret),
every part carries an HMAC-SHA256 over its channel, kind, id, timestamp and content, a part whose
timestamp is older than ``WINDOW_S`` is refused, and so is a second message under an id already
heard (a replay). The channel names derive from the key too, so a process's application_name
(visible to every role in pg_stat_activity) does not tell where it listens.

Nothing here is durable, and nothing needs to be: a request nobody answers in time (the holder
died with it, or the connection dropped) is answered by the asker with a sentence saying the
table is moving, and a move that was not logged may simply be sent again (its inbound key
stays unclaimed; one that was logged is recognised as a duplicate). A process whose listening
connection broke listens again on its next supervisor round (``ensure``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.database import Database

log = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one request's body (on the holder)."""

MIN_KEY_CHARS = 32
WINDOW_S = 30.0  # a part older than this (or this far in the future: clocks differ a little) is refused
_PART_CHARS = 6000  # base64 text of the sealed message: with the envelope well inside NOTIFY's 8000 bytes
_ASK, _ANSWER = "ask", "answer"


class RelayKeyMissing(ValueError):
    """Several processes on PostgreSQL and no usable shared key: the relay cannot be trusted."""


def check_key(key: str | None) -> str:
    if key is None or len(key.strip()) < MIN_KEY_CHARS:
        raise RelayKeyMissing(
            f"several bot processes on PostgreSQL need HUSHTABLE_RELAY_KEY, the same on each, of at least {MIN_KEY_CHARS} "
            "random characters (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`), so that no other "
            "database role can forge or read the commands they relay to each other")
    return key.strip()


class Sealer:
    """The keys derived from the shared relay key: channel names, encryption and the parts' HMAC."""

    def __init__(self, key: str) -> None:
        # Imported here: only PostgreSQL deployments relay (``cryptography`` comes with the postgres extra).
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        raw = check_key(key).encode()
        self._names = hmac.new(raw, b"hushtable relay channel", hashlib.sha256).digest()
        self._mac = hmac.new(raw, b"hushtable relay mac", hashlib.sha256).digest()
        self._aead = AESGCM(hmac.new(raw, b"hushtable relay encryption", hashlib.sha256).digest())

    def channel(self, owner: str) -> str:
        """The channel a bot process listens on (an identifier PostgreSQL accepts, whatever the name)."""
        return "hushtable_" + hmac.new(self._names, owner.encode(), hashlib.sha256).hexdigest()[:40]

    def seal(self, channel: str, kind: str, rid: str, body: dict[str, Any], *, now: float | None = None) -> list[str]:
        """``body`` as the notification payloads that carry it to ``channel``."""
        ts = repr(time.time() if now is None else now)
        nonce = secrets.token_bytes(12)
        sealed = nonce + self._aead.encrypt(nonce, json.dumps(body, ensure_ascii=False).encode(),
                                            f"{channel}|{kind}|{rid}|{ts}".encode())
        text = base64.b64encode(sealed).decode()
        chunks = [text[i:i + _PART_CHARS] for i in range(0, len(text), _PART_CHARS)]
        return [json.dumps({"k": kind, "id": rid, "ts": ts, "i": i, "n": len(chunks), "p": chunk,
                            "mac": self._sign(channel, kind, rid, ts, i, len(chunks), chunk)})
                for i, chunk in enumerate(chunks)]

    def check(self, channel: str, payload: str, *, now: float | None = None) -> dict[str, Any] | None:
        """One part heard on ``channel``: None unless signed with the key for this channel and fresh."""
        try:
            part = json.loads(payload)
            kind, rid, ts, i, n, chunk, mac = (part["k"], part["id"], part["ts"], part["i"], part["n"], part["p"],
                                                part["mac"])
            if not all(isinstance(v, str) for v in (kind, rid, ts, chunk, mac)) or not all(
                    isinstance(v, int) for v in (i, n)):
                return None
            if not hmac.compare_digest(mac, self._sign(channel, kind, rid, ts, i, n, chunk)):
                return None
            age = (time.time() if now is None else now) - float(ts)
        except (ValueError, KeyError, TypeError):
            return None
        if kind not in (_ASK, _ANSWER) or not -WINDOW_S / 3 <= age <= WINDOW_S or not 0 <= i < n:
            return None
        return part  # type: ignore[no-any-return]

    def open(self, channel: str, kind: str, rid: str, ts: str, text: str) -> dict[str, Any] | None:
        from cryptography.exceptions import InvalidTag

        try:
            sealed = base64.b64decode(text, validate=True)
            plain = self._aead.decrypt(sealed[:12], sealed[12:], f"{channel}|{kind}|{rid}|{ts}".encode())
            body = json.loads(plain)
        except (ValueError, InvalidTag):
            return None
        return body if isinstance(body, dict) else None

    def _sign(self, channel: str, kind: str, rid: str, ts: str, i: int, n: int, chunk: str) -> str:
        message = "\n".join((channel, kind, rid, ts, str(i), str(n), chunk)).encode()
        return hmac.new(self._mac, message, hashlib.sha256).hexdigest()


REFUSALS_LOGGED_EVERY_S = 60.0  # a kind of refused message is logged at most once in this long, with how many


class RefusalLog:
    """Refused relay messages logged without flooding the log: the first of a kind at once, and the
    ones after it within ``every_s`` seconds counted and told in one line when that interval ends (or at
    ``flush``). Anyone who may connect to the database may NOTIFY a process's channel as fast as it
    likes; each refusal costs a log line otherwise. Every refusal is still counted in a line."""

    def __init__(self, logger: logging.Logger, *, every_s: float = REFUSALS_LOGGED_EVERY_S) -> None:
        self._log = logger
        self.every_s = every_s
        self._logged_at: dict[str, float] = {}  # when each kind last had its line
        self._held: dict[str, int] = {}  # refusals of a kind counted since that line
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def refused(self, message: str) -> None:
        """One refusal, ``message`` saying what was refused (the same text for the same kind)."""
        now = time.monotonic()
        last = self._logged_at.get(message)
        if last is None or now - last >= self.every_s:
            timer = self._timers.pop(message, None)
            if timer is not None:
                timer.cancel()
            self._emit(message, 1 + self._held.pop(message, 0))
            return
        self._held[message] = self._held.get(message, 0) + 1
        if message not in self._timers:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop to wake: the next refusal or ``flush`` tells these
                return
            self._timers[message] = loop.call_later(last + self.every_s - now, self._due, message)

    def flush(self) -> None:
        """Log what is counted and not yet told (the relay is closing)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for message, n in list(self._held.items()):
            self._emit(message, n)
        self._held.clear()

    def _due(self, message: str) -> None:
        self._timers.pop(message, None)
        n = self._held.pop(message, 0)
        if n:
            self._emit(message, n)

    def _emit(self, message: str, n: int) -> None:
        self._logged_at[message] = time.monotonic()
        if n == 1:
            self._log.warning("%s", message)
        else:
            self._log.warning("%s (%d times in the last %g s)", message, n, self.every_s)


class CommandRelay:
    """This process's end of the relay: asks holders, and answers what others ask of it."""

    def __init__(self, db: Database, owner: str, key: str) -> None:
        self._db = db
        self.owner = owner
        self._sealer = Sealer(key)
        self.channel = self._sealer.channel(owner)
        self._handler: Handler | None = None
        self._conn: AsyncConnection | None = None
        self._raw: Any = None  # the asyncpg connection that listens
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._parts: dict[tuple[str, str, str], tuple[float, dict[int, str]]] = {}
        self._heard_ids: dict[tuple[str, str], float] = {}  # messages already taken, for refusing replays
        self._tasks: set[asyncio.Task[None]] = set()
        self.asked = 0  # requests sent to other processes
        self.answered = 0  # requests of other processes answered here
        self.refused = 0  # notifications that failed the key's check, came late or came twice
        self.refusals = RefusalLog(log)

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
        self.refusals.flush()
        self._handler = None

    async def ask(self, holder: str, body: dict[str, Any], timeout: float) -> dict[str, Any] | None:
        """Send ``body`` to the process ``holder`` and wait for its answer; None when none came in time."""
        rid = secrets.token_hex(16)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        try:
            channel = self._sealer.channel(holder)
            await self._notify(channel, self._sealer.seal(channel, _ASK, rid, {"from": self.owner, "body": body}))
            self.asked += 1
            return await asyncio.wait_for(fut, timeout)
        except (TimeoutError, sa.exc.SQLAlchemyError, OSError):
            return None
        finally:
            self._waiting.pop(rid, None)

    # ------------------------------------------------------------------ inside

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        now = time.time()
        part = self._sealer.check(self.channel, payload, now=now)
        if part is None:
            self.refused += 1
            self.refusals.refused("a relay notification without this deployment's key (or too old) was ignored")
            return
        kind, rid, ts = part["k"], part["id"], part["ts"]
        if (kind, rid) in self._heard_ids or (kind == _ANSWER and rid not in self._waiting):
            self.refused += 1
            self.refusals.refused("a relay message heard before, or answering nothing asked, was ignored")
            return
        self._forget_old(now)
        key = (kind, rid, ts)
        parts = self._parts.setdefault(key, (now, {}))[1]
        parts[part["i"]] = part["p"]
        if len(parts) < part["n"]:
            return
        del self._parts[key]
        body = self._sealer.open(self.channel, kind, rid, ts, "".join(parts[i] for i in range(part["n"])))
        if body is None:
            self.refused += 1
            self.refusals.refused("a relay message that does not open with this deployment's key was ignored")
            return
        self._heard_ids[(kind, rid)] = now
        if kind == _ASK and self._handler is not None and isinstance(body.get("from"), str):
            task = asyncio.get_running_loop().create_task(self._answer(rid, body["from"], body.get("body") or {}))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif kind == _ANSWER:
            fut = self._waiting[rid]
            if not fut.done():
                fut.set_result(body)

    def _forget_old(self, now: float) -> None:
        """Past the window a replay is refused by its timestamp: the ids heard before need not be kept."""
        for k, at in list(self._heard_ids.items()):
            if now - at > 2 * WINDOW_S:
                del self._heard_ids[k]
        for pk, (at, _) in list(self._parts.items()):
            if now - at > WINDOW_S:
                del self._parts[pk]

    async def _answer(self, rid: str, asker: str, body: dict[str, Any]) -> None:
        assert self._handler is not None
        try:
            answer = await self._handler(body)
        except Exception as exc:  # the asker times out and answers its member itself
            log.error("a relayed command failed here: %s", type(exc).__name__)
            return
        try:
            channel = self._sealer.channel(asker)
            await self._notify(channel, self._sealer.seal(channel, _ANSWER, rid, answer))
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

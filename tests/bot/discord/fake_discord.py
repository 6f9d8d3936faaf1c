"""A local fake of the Discord REST API (/api/v10) and gateway, for driving the real discord.py client.

It plays both sides a test needs: the server the bot talks to (REST routes, a gateway that
sends READY / GUILD_CREATE and dispatches events), and the members' clients (slash commands,
button clicks, select menus, modal submissions and DM text, sent as INTERACTION_CREATE /
MESSAGE_CREATE just as Discord would). Every REST request the bot makes is recorded, so tests
can check what went to which channel.

What it covers: the routes and payload shapes discord.py 2.7 uses for the features Hushtable
needs. What it does not: rate limits (no 429s), permissions enforcement, attachments beyond
recording their bytes, voice, presence, sharding, resume after a dropped socket.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

from tests.bot.fakeserver import JSON, FakeServer, Fault

EPHEMERAL = 1 << 6
MANAGE_GUILD = 1 << 5
EVERYONE_PERMS = (1 << 10) | (1 << 11) | (1 << 16) | (1 << 31) | (1 << 35) | (1 << 38)  # view, send, history, use commands, threads


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000+00:00", time.gmtime())


@dataclass
class Recorded:
    """One REST request the bot made."""

    method: str
    path: str
    body: Any
    channel_id: int | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    status: int = 0
    at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def texts(self) -> list[str]:
        """Every string anywhere in the body: content, embeds, component labels, modal text."""
        out: list[str] = []

        def walk(x: Any) -> None:
            if isinstance(x, str):
                out.append(x)
            elif isinstance(x, dict):
                for v in x.values():
                    walk(v)
            elif isinstance(x, list):
                for v in x:
                    walk(v)

        walk(self.body)
        out.extend(b.decode("utf-8", "replace") for b in self.files.values())
        return out


@dataclass
class FakeInteraction:
    """An interaction the fake sent, and everything the bot answered to it."""

    id: int
    token: str
    user_id: int
    channel_id: int
    callbacks: list[dict[str, Any]] = field(default_factory=list)
    followups: list[dict[str, Any]] = field(default_factory=list)  # message payloads
    files: dict[str, bytes] = field(default_factory=dict)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def modal(self) -> dict[str, Any] | None:
        for cb in self.callbacks:
            if cb["type"] == 9:
                data: dict[str, Any] = cb["data"]
                return data
        return None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The messages the bot answered with (initial response, edits of it, follow-ups)."""
        return self.followups

    @property
    def text(self) -> str:
        return "\n".join(m.get("content") or "" for m in self.followups)

    @property
    def ephemeral(self) -> bool:
        return bool(self.followups) and all((m.get("flags") or 0) & EPHEMERAL for m in self.followups)


class FakeDiscord(FakeServer):
    """The fake server. Start with ``await fake.start()``; ``fake.api`` and ``fake.gateway`` are the URLs."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1_100_000_000_000_000_000)
        self.app_id = self.snowflake()
        self.bot_user = self._user(self.app_id, "hushtable", bot=True)
        self.guild_id = self.snowflake()
        self.owner_id = self.snowflake()
        self.admin_role_id = self.snowflake()
        self.plain_role_id = self.snowflake()  # a role with no special permission (any name a member likes)
        self.users: dict[int, dict[str, Any]] = {self.app_id: self.bot_user}
        self.members: dict[int, dict[str, Any]] = {}
        self.member_perms: dict[int, int] = {}
        self.closed_dms: set[int] = set()
        self.channels: dict[int, dict[str, Any]] = {}
        self.dm_of_user: dict[int, int] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.nonces: dict[tuple[str, str], int] = {}  # (author id, nonce) -> message id, for enforce_nonce
        self.requests: list[Recorded] = []
        self.interactions: dict[int, FakeInteraction] = {}
        self.by_token: dict[str, FakeInteraction] = {}
        self.commands: list[dict[str, Any]] = []
        self.identifies = 0
        self._ws: web.WebSocketResponse | None = None  # the connection (shard) that carries the guild's events
        self.shards_identified: list[tuple[int, int]] = []  # (shard, count) of every IDENTIFY
        self._ws_ready = asyncio.Event()
        self._seq = 0
        self.channel_id = self.snowflake()
        self.channels[self.channel_id] = {
            "id": str(self.channel_id), "type": 0, "guild_id": str(self.guild_id), "name": "games",
            "position": 0, "permission_overwrites": [], "nsfw": False, "parent_id": None,
            "topic": None, "last_message_id": None, "rate_limit_per_user": 0,
        }
        self.add_member(self.app_id, "hushtable", bot=True)

    # ------------------------------------------------------------------ ids and payloads

    def snowflake(self) -> int:
        return next(self._ids)

    @staticmethod
    def _user(uid: int, name: str, bot: bool = False) -> dict[str, Any]:
        return {"id": str(uid), "username": name, "global_name": name, "discriminator": "0",
                "avatar": None, "bot": bot, "public_flags": 0, "flags": 0}

    def add_member(self, uid: int | None = None, name: str = "member", *, bot: bool = False,
                   admin: bool = False, dms_closed: bool = False, extra_roles: tuple[int, ...] = ()) -> int:
        uid = uid or self.snowflake()
        self.users[uid] = self._user(uid, name, bot)
        roles = [str(self.admin_role_id)] if admin else []
        roles += [str(r) for r in extra_roles]
        self.members[uid] = {"user": self.users[uid], "roles": roles, "joined_at": _now(), "deaf": False,
                             "mute": False, "flags": 0, "nick": None, "avatar": None,
                             "premium_since": None, "pending": False}
        self.member_perms[uid] = EVERYONE_PERMS | (MANAGE_GUILD if admin else 0)
        if dms_closed:
            self.closed_dms.add(uid)
        return uid

    def guild_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.guild_id), "name": "Test Server", "icon": None, "owner_id": str(self.owner_id),
            "roles": [
                {"id": str(self.guild_id), "name": "@everyone", "permissions": str(EVERYONE_PERMS), "position": 0,
                 "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0},
                {"id": str(self.admin_role_id), "name": "Game Admin", "permissions": str(EVERYONE_PERMS | MANAGE_GUILD),
                 "position": 1, "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0},
                {"id": str(self.plain_role_id), "name": "Hushtable Admin", "permissions": str(EVERYONE_PERMS),
                 "position": 2, "color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0},
            ],
            "emojis": [], "stickers": [], "features": [], "member_count": len(self.members),
            "members": list(self.members.values()),
            "channels": [c for c in self.channels.values() if c["type"] == 0],
            "threads": [c for c in self.channels.values() if c["type"] == 11],
            "presences": [], "voice_states": [], "unavailable": False, "large": False, "mfa_level": 0,
            "verification_level": 0, "explicit_content_filter": 0, "default_message_notifications": 0,
            "premium_tier": 0, "system_channel_id": None, "afk_channel_id": None, "preferred_locale": "en-US",
            "nsfw_level": 0, "premium_progress_bar_enabled": False, "joined_at": _now(),
        }

    def _message(self, channel_id: int, content: str, body: dict[str, Any], *, author: dict[str, Any] | None = None,
                 flags: int = 0) -> dict[str, Any]:
        mid = self.snowflake()
        msg = {
            "id": str(mid), "channel_id": str(channel_id), "author": author or self.bot_user, "content": content,
            "timestamp": _now(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
            "mentions": [], "mention_roles": [], "attachments": [], "embeds": body.get("embeds") or [],
            "pinned": False, "type": 0, "components": body.get("components") or [],
            "flags": flags | int(body.get("flags") or 0),
        }
        if body.get("message_reference"):
            msg["message_reference"] = body["message_reference"]
        ch = self.channels.get(channel_id)
        if ch and ch.get("guild_id"):
            msg["guild_id"] = ch["guild_id"]
        self.messages[mid] = msg
        return msg

    # ------------------------------------------------------------------ lifecycle

    def refuse_token(self) -> None:
        """Answer the login check (``GET /users/@me``) as Discord does for a wrong token: 401."""
        self.faults.append(Fault(lambda method, path: path == "/users/@me",
                                 {"message": "401: Unauthorized", "code": 0}, status=401))

    def routes(self, app: web.Application) -> None:
        app.router.add_route("GET", "/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)

    async def before_close(self) -> None:
        if self._ws is not None:
            await self._ws.close()

    @property
    def api(self) -> str:
        return f"{super().base}/api/v10"

    @property
    def gateway(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    # ------------------------------------------------------------------ gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}, "s": None, "t": None}))
        async for msg in ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            op = data.get("op")
            if op == 1:
                await ws.send_str(json.dumps({"op": 11, "d": None, "s": None, "t": None}))
            elif op == 2:
                self.identifies += 1
                shard_id, shard_count = (data.get("d") or {}).get("shard") or [0, 1]
                self.shards_identified.append((shard_id, shard_count))
                ready = {
                    "v": 10, "user": {**self.bot_user, "verified": True, "mfa_enabled": False},
                    "guilds": [], "session_id": f"session{self.identifies}", "resume_gateway_url": self.gateway,
                    "application": {"id": str(self.app_id), "flags": 0}, "private_channels": [],
                    "relationships": [], "shard": [shard_id, shard_count],
                }
                if (self.guild_id >> 22) % shard_count != shard_id:
                    # Another shard's connection: Discord sends it READY and none of this guild's events.
                    await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": 1, "d": ready}))
                    continue
                self._ws = ws
                self._seq = 0
                await self._send("READY", {**ready, "guilds": [{"id": str(self.guild_id), "unavailable": True}]})
                await self._send("GUILD_CREATE", self.guild_payload())
                self._ws_ready.set()
        if self._ws is ws:
            self._ws = None
            self._ws_ready.clear()
        return ws

    async def _send(self, event: str, data: dict[str, Any]) -> None:
        assert self._ws is not None, "no bot connected to the gateway"
        self._seq += 1
        await self._ws.send_str(json.dumps({"op": 0, "t": event, "s": self._seq, "d": data}))

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        await asyncio.wait_for(self._ws_ready.wait(), 10)
        await self._send(event, data)

    # ------------------------------------------------------------------ members' side

    def _who(self, uid: int, channel_id: int) -> dict[str, Any]:
        ch = self.channels[channel_id]
        if ch.get("guild_id"):
            return {"guild_id": str(self.guild_id), "member": {**self.members[uid], "permissions": str(self.member_perms[uid])},
                    "context": 0, "app_permissions": str(EVERYONE_PERMS)}
        return {"user": self.users[uid], "context": 1, "app_permissions": str(EVERYONE_PERMS)}

    async def _interact(self, uid: int, channel_id: int, itype: int, data: dict[str, Any],
                        message: dict[str, Any] | None = None, iid: int | None = None) -> FakeInteraction:
        iid = iid or self.snowflake()
        token = f"tok{iid}"
        # A re-delivered interaction (same id and token) gets a fresh record of the bot's answers.
        ix = FakeInteraction(iid, token, uid, channel_id)
        self.interactions[iid] = ix
        self.by_token[token] = ix
        payload: dict[str, Any] = {
            "id": str(iid), "application_id": str(self.app_id), "type": itype, "data": data, "token": token,
            "version": 1, "channel_id": str(channel_id), "channel": self.channels[channel_id], "locale": "en-US",
            "guild_locale": "en-US", "entitlements": [], "authorizing_integration_owners": {"0": str(self.guild_id)},
            "attachment_size_limit": 10 * 1024 * 1024, **self._who(uid, channel_id),
        }
        if message is not None:
            payload["message"] = message
        await self.dispatch("INTERACTION_CREATE", payload)
        return ix

    async def slash(self, uid: int, name: str, channel_id: int | None = None, iid: int | None = None,
                    **options: Any) -> FakeInteraction:
        """A member runs ``/name option:value ...``; waits until the bot has answered."""
        channel_id = channel_id or self.channel_id
        cmd = next((c for c in self.commands if c["name"] == name), None)
        assert cmd is not None, f"/{name} was not registered: {[c['name'] for c in self.commands]}"
        opts = []
        for key, value in options.items():
            spec = next(o for o in cmd.get("options", []) if o["name"] == key)
            opts.append({"name": key, "type": spec["type"], "value": value})
        data = {"id": cmd["id"], "name": name, "type": 1, "options": opts}
        if cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        ix = await self._interact(uid, channel_id, 2, data, iid=iid)
        await asyncio.wait_for(ix.done.wait(), 15)
        return ix

    async def autocomplete(self, uid: int, name: str, focused: str, value: str, **others: Any) -> list[dict[str, Any]]:
        cmd = next(c for c in self.commands if c["name"] == name)
        opts = []
        for key, v in {**others, focused: value}.items():
            spec = next(o for o in cmd.get("options", []) if o["name"] == key)
            opts.append({"name": key, "type": spec["type"], "value": v, **({"focused": True} if key == focused else {})})
        ix = await self._interact(uid, self.channel_id, 4, {"id": cmd["id"], "name": name, "type": 1, "options": opts})
        await asyncio.wait_for(ix.done.wait(), 10)
        choices: list[dict[str, Any]] = ix.callbacks[-1]["data"]["choices"]
        return choices

    async def click(self, uid: int, message: dict[str, Any], custom_id: str, iid: int | None = None,
                    wait: bool = True) -> FakeInteraction:
        assert custom_id in self.custom_ids(message), f"{custom_id!r} is not on the message"
        ix = await self._interact(uid, int(message["channel_id"]), 3, {"custom_id": custom_id, "component_type": 2},
                                  message=self.messages.get(int(message["id"]), message), iid=iid)
        if wait:
            await asyncio.wait_for(ix.done.wait(), 15)
        return ix

    async def select(self, uid: int, message: dict[str, Any], custom_id: str, values: list[str],
                     iid: int | None = None) -> FakeInteraction:
        comp = self.component(message, custom_id)
        assert comp is not None and comp["type"] == 3, f"no select {custom_id!r} on the message"
        allowed = {o["value"] for o in comp["options"]}
        assert set(values) <= allowed, f"{values} not among the options"
        ix = await self._interact(uid, int(message["channel_id"]), 3,
                                  {"custom_id": custom_id, "component_type": 3, "values": values},
                                  message=self.messages.get(int(message["id"]), message), iid=iid)
        await asyncio.wait_for(ix.done.wait(), 15)
        return ix

    async def submit_modal(self, uid: int, opened_by: FakeInteraction, values: list[str]) -> FakeInteraction:
        """Fill the modal the bot opened (callback type 9) field by field and submit it."""
        modal = opened_by.modal
        assert modal is not None, "the bot did not open a modal"
        rows = []
        inputs = [c for row in modal["components"] for c in (row.get("components") or [row.get("component")])]
        assert len(inputs) == len(values), f"modal has {len(inputs)} fields, got {len(values)} values"
        for comp, value in zip(inputs, values, strict=False):
            rows.append({"type": 1, "components": [{"type": 4, "custom_id": comp["custom_id"], "value": value}]})
        ix = await self._interact(uid, opened_by.channel_id, 5, {"custom_id": modal["custom_id"], "components": rows})
        await asyncio.wait_for(ix.done.wait(), 15)
        return ix

    async def dm_text(self, uid: int, text: str) -> dict[str, Any]:
        """A member writes ``text`` in their DM with the bot."""
        ch = self.dm_channel(uid)
        msg = self._message(ch, text, {}, author=self.users[uid])
        await self.dispatch("MESSAGE_CREATE", msg)
        return msg

    # ------------------------------------------------------------------ queries for tests

    def dm_channel(self, uid: int) -> int:
        if uid not in self.dm_of_user:
            cid = self.snowflake()
            self.channels[cid] = {"id": str(cid), "type": 1, "recipients": [self.users[uid]], "last_message_id": None}
            self.dm_of_user[uid] = cid
        return self.dm_of_user[uid]

    def in_channel(self, channel_id: int, ephemeral: bool = False) -> list[dict[str, Any]]:
        """Messages in a channel that everyone there sees (``ephemeral=True``: include the private ones)."""
        return [m for m in self.messages.values() if int(m["channel_id"]) == channel_id
                and (ephemeral or not int(m.get("flags") or 0) & EPHEMERAL)]

    def dms(self, uid: int) -> list[dict[str, Any]]:
        return self.in_channel(self.dm_of_user[uid]) if uid in self.dm_of_user else []

    def threads(self) -> list[dict[str, Any]]:
        return [c for c in self.channels.values() if c["type"] == 11]

    @staticmethod
    def components(message: dict[str, Any]) -> list[dict[str, Any]]:
        return [c for row in message.get("components") or [] for c in row.get("components") or []]

    def component(self, message: dict[str, Any], custom_id: str) -> dict[str, Any] | None:
        return next((c for c in self.components(message) if c.get("custom_id") == custom_id), None)

    def custom_ids(self, message: dict[str, Any]) -> list[str]:
        return [c["custom_id"] for c in self.components(message) if "custom_id" in c]

    def public_requests(self) -> list[Recorded]:
        """Requests whose text lands where others can read it: guild channels and threads, not DMs,
        not ephemeral interaction answers."""
        out = []
        for r in self.requests:
            if r.channel_id is not None and self.channels.get(r.channel_id, {}).get("type") in (0, 11):
                if not (isinstance(r.body, dict) and int(r.body.get("flags") or 0) & EPHEMERAL):
                    data = r.body.get("data") if isinstance(r.body, dict) and "type" in r.body else None
                    if isinstance(data, dict) and int(data.get("flags") or 0) & EPHEMERAL:
                        continue
                    if isinstance(r.body, dict) and r.body.get("type") in (5, 9) and "/callback" in r.path:
                        continue  # a defer or modal carries nothing readable by the channel
                    out.append(r)
        return out

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"]
        body: Any = None
        files: dict[str, bytes] = {}
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            while (part := await reader.next()) is not None:
                raw = await part.read()  # type: ignore[union-attr]
                if part.name == "payload_json":  # type: ignore[union-attr]
                    body = json.loads(raw)
                else:
                    files[part.filename or part.name or "file"] = bytes(raw)  # type: ignore[union-attr]
        elif request.can_read_body:
            text = await request.text()
            body = json.loads(text) if text else None
        parts = path.strip("/").split("/")
        rec = Recorded(request.method, path, body, files=files)
        if parts[0] == "channels":
            rec.channel_id = int(parts[1])
        elif parts[0] in ("interactions", "webhooks"):
            ix = self.by_token.get(parts[2])
            rec.channel_id = ix.channel_id if ix else None
        self.requests.append(rec)
        faulty = self.fault_for(request.method, path)
        if faulty is not None:
            rec.status = faulty.status
            await self.touch()
            return faulty
        try:
            status, payload = await self._route(request.method, parts, body or {}, files, request.query)
            rec.status = status
        finally:
            await self.touch()
        if payload is None:
            return web.Response(status=status)
        return web.Response(status=status, body=json.dumps(payload), headers={"Content-Type": JSON})

    async def _route(self, method: str, p: list[str], body: Any, files: dict[str, bytes],
                     query: Any) -> tuple[int, Any]:
        if p == ["users", "@me"] and method == "GET":
            return 200, {**self.bot_user, "verified": True, "mfa_enabled": False}
        if p == ["oauth2", "applications", "@me"]:
            return 200, {"id": str(self.app_id), "name": "hushtable", "icon": None, "description": "",
                         "rpc_origins": [], "bot_public": True, "bot_require_code_grant": False,
                         "owner": self._user(self.owner_id, "owner"), "verify_key": "00", "flags": 0,
                         "summary": "", "team": None}
        if p[0] == "applications" and p[-1] == "commands" and method == "PUT":
            guild = p[3] if len(p) == 5 else None
            self.commands = [{**c, "id": str(self.snowflake()), "application_id": str(self.app_id),
                              "version": "1", "default_member_permissions": c.get("default_member_permissions"),
                              **({"guild_id": guild} if guild else {})} for c in body]
            return 200, self.commands
        if p[0] == "applications" and p[-1] == "commands" and method == "GET":
            return 200, self.commands
        if p == ["users", "@me", "channels"] and method == "POST":
            cid = self.dm_channel(int(body["recipient_id"]))
            return 200, self.channels[cid]
        if p[0] == "users" and len(p) == 2 and method == "GET":
            u = self.users.get(int(p[1]))
            return (200, u) if u else (404, {"code": 10013, "message": "Unknown User"})
        if p[0] == "channels":
            return await self._channels(method, p, body, files)
        if p[0] == "interactions" and p[-1] == "callback":
            return await self._callback(int(p[1]), p[2], body, files)
        if p[0] == "webhooks":
            return await self._webhook(method, p, body, files)
        return 404, {"code": 0, "message": f"fake Discord has no route {method} /{'/'.join(p)}"}

    async def _channels(self, method: str, p: list[str], body: dict[str, Any], files: dict[str, bytes]) -> tuple[int, Any]:
        cid = int(p[1])
        ch = self.channels.get(cid)
        if ch is None:
            return 404, {"code": 10003, "message": "Unknown Channel"}
        if len(p) == 2 and method == "GET":
            return 200, ch
        if len(p) == 3 and p[2] == "messages" and method == "POST":
            if ch["type"] == 1 and int(ch["recipients"][0]["id"]) in self.closed_dms:
                return 403, {"code": 50007, "message": "Cannot send messages to this user"}
            nonce = body.get("nonce")
            if nonce is not None and len(str(nonce)) > 25:  # as Discord: a nonce is at most 25 characters
                return 400, {"code": 50035, "message": "Invalid Form Body",
                             "errors": {"nonce": {"_errors": [{"code": "BASE_TYPE_BAD_LENGTH",
                                                               "message": "Must be 25 or fewer in length."}]}}}
            # enforce_nonce: a message by the same author with the same nonce is answered with the
            # first copy, and nothing new is created (Discord keeps nonces for a few minutes).
            seen = (self.bot_user["id"], str(nonce))
            if nonce is not None and body.get("enforce_nonce") and self.nonces.get(seen) in self.messages:
                return 200, self.messages[self.nonces[seen]]
            msg = self._message(cid, body.get("content") or "", body)
            if nonce is not None:
                msg["nonce"] = str(nonce)
                if body.get("enforce_nonce"):
                    self.nonces[seen] = int(msg["id"])
            return 200, msg
        if len(p) == 4 and p[2] == "messages" and method == "PATCH":
            edited = self.messages.get(int(p[3]))
            if edited is None:
                return 404, {"code": 10008, "message": "Unknown Message"}
            for key in ("content", "components", "embeds"):
                if key in body:
                    edited[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
            edited["edited_timestamp"] = _now()
            return 200, edited
        if p[2:] == ["threads"] or (len(p) == 5 and p[2] == "messages" and p[4] == "threads"):
            tid = int(p[3]) if len(p) == 5 else self.snowflake()
            thread = {
                "id": str(tid), "type": 11, "guild_id": str(self.guild_id), "parent_id": str(cid),
                "owner_id": str(self.app_id), "name": body.get("name", "thread"), "last_message_id": None,
                "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
                "thread_metadata": {"archived": False, "auto_archive_duration": body.get("auto_archive_duration", 1440),
                                    "archive_timestamp": _now(), "locked": False},
            }
            self.channels[tid] = thread
            return 201, thread
        return 404, {"code": 0, "message": f"fake Discord has no channel route {method} {p}"}

    async def _callback(self, iid: int, token: str, body: dict[str, Any], files: dict[str, bytes]) -> tuple[int, Any]:
        ix = self.by_token[token]
        ix.callbacks.append(body)
        ix.files.update(files)
        rtype = body["type"]
        resource: dict[str, Any] = {"type": rtype}
        if rtype in (4, 7):
            data = body.get("data") or {}
            if rtype == 4:
                msg = self._message(ix.channel_id, data.get("content") or "", data)
            else:
                msg = self.messages[int(self._origin_message(ix))]
                msg.update({k: v for k, v in data.items() if k in ("content", "components", "embeds")})
            ix.followups.append(msg)
            resource["message"] = msg
            ix.done.set()
        elif rtype in (8, 9):
            ix.done.set()
        return 200, {"interaction": {"id": str(iid), "type": 2, "response_message_loading": rtype == 5,
                                     "response_message_ephemeral": bool(int((body.get("data") or {}).get("flags") or 0) & EPHEMERAL)},
                     "resource": resource}

    def _origin_message(self, ix: FakeInteraction) -> str:
        raise AssertionError("update-message responses are not used by Hushtable")

    async def _webhook(self, method: str, p: list[str], body: dict[str, Any], files: dict[str, bytes]) -> tuple[int, Any]:
        token = p[2]
        ix = self.by_token.get(token)
        if ix is None:
            return 404, {"code": 10015, "message": "Unknown Webhook"}
        ix.files.update(files)
        if method == "POST" and len(p) == 3:
            msg = self._message(ix.channel_id, body.get("content") or "", body)
            ix.followups.append(msg)
            ix.done.set()
            return 200, msg
        if method == "PATCH" and p[3:] == ["messages", "@original"]:
            msg = self._message(ix.channel_id, body.get("content") or "", body)
            ix.followups.append(msg)
            ix.done.set()
            return 200, msg
        if method == "DELETE":
            return 204, None
        return 404, {"code": 0, "message": f"fake Discord has no webhook route {method} {p}"}

"""A local fake of the Slack platform for end-to-end tests of the real Bolt app.

- `FakeSlack`: an aiohttp server on 127.0.0.1 that answers the Web API methods the
  adapter uses (arguments merged from query, form and JSON body, as the SDK sends
  them differently per method), the ``response_url`` callbacks, the upload URLs of
  files_upload_v2, and Socket Mode (apps.connections.open + a websocket). Every call
  is recorded, so tests can read what the bot sent where.
- `SlackUser`-style request builders and `Signer`: real signed HTTP requests
  (events as JSON, commands and interactions form-encoded) sent to the app's endpoint.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import yaml
from aiohttp import web
from slack_sdk.signature import SignatureVerifier

from tests.bot.fakeserver import FakeServer, Fault

TEAM = "T0HUSH"
MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"
MANIFEST_SCOPES = tuple(yaml.safe_load(MANIFEST.read_text())["oauth_config"]["scopes"]["bot"])
BOT_USER = "UBOT"


@dataclass
class Call:
    method: str
    args: dict[str, Any]


@dataclass
class Message:
    channel: str
    ts: str
    text: str
    blocks: list[dict[str, Any]]
    thread_ts: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None  # chat.postMessage's ``metadata`` (event_type + event_payload)
    author: tuple[str, str, str] = (BOT_USER, "BBOT", "AHUSH")  # user, bot_id, app_id: this app's unless planted

    def actions(self) -> list[dict[str, Any]]:
        return [el for b in self.blocks if b.get("type") == "actions" for el in b.get("elements", [])]

    def body(self) -> str:
        parts = [self.text]
        for b in self.blocks:
            t = b.get("text")
            if isinstance(t, dict):
                parts.append(str(t.get("text", "")))
            for el in b.get("elements", []):
                parts.append(json.dumps(el))
        return "\n".join(parts)


def _json_arg(raw: Any) -> Any:
    """An argument the SDK sends as JSON in a JSON body, or as a JSON string in a form."""
    return json.loads(raw) if isinstance(raw, str) else raw


def _flag(raw: Any) -> bool:
    return raw is True or str(raw).lower() in ("true", "1")


def _blocks(raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = json.loads(raw)
    return list(raw)


class FakeSlack(FakeServer):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[Call] = []
        self.messages: dict[tuple[str, str], Message] = {}
        self.responses: list[dict[str, Any]] = []  # bodies posted to response_url
        self.views: list[dict[str, Any]] = []
        self.uploads: dict[str, bytes] = {}
        self.files: list[dict[str, Any]] = []
        self.admins: set[str] = set()
        self.closed_dms: set[str] = set()
        self.history_refused: dict[str, str] = {}  # channel -> the error its history reads answer
        self.scopes: list[str] = list(MANIFEST_SCOPES)  # the bot token's, as installed from the manifest
        # Per chat.postMessage made, its answer lost: "drop" (the connection), "500", or "late" (after late_s).
        self.lost_answers: list[str] = []
        self.late_s = 2.0
        self.socket_acks: list[dict[str, Any]] = []
        self.response_targets: dict[str, tuple[str, str]] = {}  # response_url token -> the clicked message
        self._socket: web.WebSocketResponse | None = None
        self._socket_ready = asyncio.Event()
        self._last_ts = 0  # microseconds: every ts is the time it was made, as Slack's are, and unique
        self.history_reads: list[tuple[str, dict[str, Any]]] = []  # (method, args) of each history read
        # channel -> its members, for users.conversations (a channel not listed has every member in it)
        self.channel_members: dict[str, set[str]] = {}
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ server

    @property
    def api_url(self) -> str:
        return f"{self.base}/api/"  # the trailing slash matters to the SDK

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # users.info and other readers use GET
        app.router.add_post("/response/{token}", self._response)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/socket", self._ws)

    async def before_close(self) -> None:
        if self._socket is not None:
            await self._socket.close()

    def bare_ok(self) -> None:
        """Answer every Web API method but auth.test with a bare ``{"ok": true}``, as
        bolt-python's mock Web API server does (no channel, no ts, no user)."""
        self.faults.append(Fault(lambda method, path: path.startswith("/api/") and path != "/api/auth.test", {"ok": True}))

    def refuse_token(self, method: str = "auth.test", error: str = "invalid_auth") -> None:
        """Answer ``method`` as Slack does for a token it does not accept (``ok: false`` and the error)."""
        self.faults.append(Fault(lambda _m, path: path == f"/api/{method}", {"ok": False, "error": error}))

    async def _args(self, request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            args.update(await request.json())
        elif request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            args.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
        return args

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._args(request)
        self.calls.append(Call(method, args))
        await self.touch()
        faulty = self.fault_for(request.method, request.path)
        if faulty is not None:
            return faulty
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        answer = await handler(args)
        if method == "chat.postMessage" and answer.get("ok") and self.lost_answers:
            # The message is made, and its answer never arrives: the connection drops, or Slack
            # fails after the write (as its own internal_error says may happen).
            lost = self.lost_answers.pop(0)
            if lost == "late":  # made, and answered after the client stopped waiting
                await asyncio.sleep(self.late_s)
                return web.json_response(answer)
            if lost == "drop":
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            return web.json_response({"ok": False, "error": "internal_error"}, status=500)
        # As Slack does, every answer lists the token's scopes.
        return web.json_response(answer, headers={"x-oauth-scopes": ",".join(self.scopes)})

    def _next_ts(self) -> str:
        self._last_ts = max(self._last_ts + 1, time.time_ns() // 1000)
        return f"{self._last_ts // 1_000_000}.{self._last_ts % 1_000_000:06d}"

    # ------------------------------------------------------------------ Web API methods

    async def _m_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": "https://hush.example/", "team": "Hush", "team_id": TEAM, "user": "hushtable", "user_id": BOT_USER, "bot_id": "BBOT"}

    async def _m_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args["channel"])
        if channel.startswith("D") and channel[1:] in self.closed_dms:
            return {"ok": False, "error": "cannot_dm_bot"}
        thread_ts = args.get("thread_ts") or None
        metadata = _json_arg(args.get("metadata")) if args.get("metadata") else None
        if metadata is not None and not (isinstance(metadata, dict) and isinstance(metadata.get("event_type"), str)
                                         and isinstance(metadata.get("event_payload"), dict)):
            return {"ok": False, "error": "invalid_metadata_format"}
        ts = self._next_ts()
        m = Message(channel, ts, str(args.get("text", "")), _blocks(args.get("blocks")), thread_ts, metadata=metadata)
        self.messages[(channel, ts)] = m
        return {"ok": True, "channel": channel, "ts": ts, "message": self._shown(m, with_metadata=True)}

    # The reads of a conversation, as Slack answers them: ``oldest``/``latest`` bound the ts (exclusive
    # unless ``inclusive``), ``limit`` a page, ``cursor`` the next page, and a message's metadata is
    # there only with ``include_all_metadata``.

    def _shown(self, m: Message, *, with_metadata: bool) -> dict[str, Any]:
        user, bot_id, app_id = m.author
        out: dict[str, Any] = {"type": "message", "text": m.text, "user": user, "bot_id": bot_id,
                               "app_id": app_id, "team": TEAM, "ts": m.ts, "blocks": m.blocks}
        replies = [r for r in self.in_channel(m.channel) if r.thread_ts == m.ts and r.ts != m.ts]
        if m.thread_ts:
            out["thread_ts"] = m.thread_ts
            out["parent_user_id"] = BOT_USER
        elif replies:
            out.update(thread_ts=m.ts, reply_count=len(replies), reply_users_count=1,
                       latest_reply=replies[-1].ts, reply_users=[BOT_USER])
        if with_metadata and m.metadata is not None:
            out["metadata"] = m.metadata
        return out

    def _page(self, found: list[Message], args: dict[str, Any]) -> dict[str, Any]:
        inclusive = _flag(args.get("inclusive"))
        oldest, latest = float(args.get("oldest") or 0), float(args.get("latest") or time.time() + 1)

        def within(m: Message) -> bool:
            t = float(m.ts)
            return (oldest <= t if inclusive else oldest < t) and (t <= latest if inclusive else t < latest)

        found = [m for m in found if within(m)]
        limit = max(1, min(int(args.get("limit") or 100), 999))
        start = int(base64.b64decode(str(args["cursor"])).decode().partition(":")[2]) if args.get("cursor") else 0
        page = found[start:start + limit]
        more = start + limit < len(found)
        out: dict[str, Any] = {"ok": True, "messages": [self._shown(m, with_metadata=_flag(args.get("include_all_metadata")))
                                                        for m in page], "has_more": more}
        if more:
            out["response_metadata"] = {"next_cursor": base64.b64encode(f"next:{start + limit}".encode()).decode()}
        return out

    async def _m_conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        self.history_reads.append(("conversations.history", args))
        channel = str(args.get("channel", ""))
        if channel in self.history_refused:
            return {"ok": False, "error": self.history_refused[channel]}
        # The channel's own messages (thread replies stay in their thread), newest first.
        top = [m for m in self.in_channel(channel) if m.thread_ts is None]
        return {**self._page(sorted(top, key=lambda m: float(m.ts), reverse=True), args),
                "pin_count": 0, "channel_actions_ts": None, "channel_actions_count": 0}

    async def _m_conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        self.history_reads.append(("conversations.replies", args))
        channel, ts = str(args.get("channel", "")), str(args.get("ts", ""))
        if channel in self.history_refused:
            return {"ok": False, "error": self.history_refused[channel]}
        parent = self.messages.get((channel, ts))
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        # The thread's parent, then its replies, oldest first.
        thread = [parent] + [m for m in self.in_channel(channel) if m.thread_ts == ts]
        return self._page(sorted(thread, key=lambda m: float(m.ts)), args)

    async def _m_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        key = (str(args["channel"]), str(args["ts"]))
        m = self.messages.get(key)
        if m is None:
            return {"ok": False, "error": "message_not_found"}
        m.history.append({"text": m.text, "blocks": m.blocks})
        m.text, m.blocks = str(args.get("text", "")), _blocks(args.get("blocks"))
        return {"ok": True, "channel": key[0], "ts": key[1]}

    async def _m_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "message_ts": self._next_ts()}

    async def _m_conversations_open(self, args: dict[str, Any]) -> dict[str, Any]:
        user = str(args.get("users", ""))
        if user in self.closed_dms:
            return {"ok": False, "error": "cannot_dm_bot"}
        return {"ok": True, "channel": {"id": "D" + user}}

    async def _m_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        view = args["view"] if isinstance(args["view"], dict) else json.loads(args["view"])
        n = next(self._ids)
        view = {**view, "id": f"V{n:05d}", "hash": hashlib.sha1(f"{n}".encode()).hexdigest()[:12], "trigger_id": args.get("trigger_id")}
        self.views.append(view)
        return {"ok": True, "view": view}

    async def _m_users_conversations(self, args: dict[str, Any]) -> dict[str, Any]:
        # As Slack: the channels the user is in that the token may list (channels:read, groups:read), paged.
        if "channels:read" not in self.scopes:
            return {"ok": False, "error": "missing_scope", "needed": "channels:read"}
        user = str(args.get("user") or "")
        known = sorted({m.channel for m in self.messages.values()} | set(self.channel_members) | {"CGAMES"})
        mine = [c for c in known if user in self.channel_members.get(c, {user})]
        start = int(args.get("cursor") or 0)
        limit = int(args.get("limit") or 100)
        page = mine[start:start + limit]
        more = str(start + limit) if start + limit < len(mine) else ""
        return {"ok": True, "channels": [{"id": c} for c in page], "response_metadata": {"next_cursor": more}}

    async def _m_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = str(args["user"])
        return {"ok": True, "user": {"id": user, "name": user.lower(), "is_admin": user in self.admins, "is_owner": False}}

    async def _m_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        fid = f"F{next(self._ids):05d}"
        return {"ok": True, "upload_url": f"{self.base}/upload/{fid}", "file_id": fid}

    async def _m_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        files = args["files"] if isinstance(args["files"], list) else json.loads(args["files"])
        for f in files:
            self.files.append(
                {
                    "id": f["id"],
                    "title": f.get("title"),
                    "channel": args.get("channel_id"),
                    "comment": args.get("initial_comment"),
                    "data": self.uploads.get(f["id"], b""),
                }
            )
        return {"ok": True, "files": [{"id": f["id"], "title": f.get("title")} for f in files]}

    async def _m_files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "file": {"id": args.get("file")}}

    async def _m_apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"}

    async def _upload(self, request: web.Request) -> web.Response:
        self.uploads[request.match_info["file_id"]] = await request.read()
        return web.Response(text="OK")

    async def _response(self, request: web.Request) -> web.Response:
        body = await request.json()
        token = request.match_info["token"]
        self.responses.append({"token": token, **body})
        target = self.response_targets.get(token)
        if body.get("replace_original") and target in self.messages:
            # As Slack does: the clicked message itself is replaced.
            m = self.messages[target]
            m.history.append({"text": m.text, "blocks": m.blocks})
            m.text, m.blocks = str(body.get("text", "")), _blocks(body.get("blocks"))
        return web.json_response({"ok": True})

    # ------------------------------------------------------------------ Socket Mode

    async def _ws(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._socket = ws
        await ws.send_json({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "AHUSH"}})
        self._socket_ready.set()
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                self.socket_acks.append(json.loads(msg.data))
        return ws

    async def socket_send(self, envelope_type: str, payload: dict[str, Any], accepts_response_payload: bool = False) -> str:
        await asyncio.wait_for(self._socket_ready.wait(), 10)
        assert self._socket is not None
        envelope_id = f"env-{next(self._ids)}"
        await self._socket.send_json(
            {
                "envelope_id": envelope_id,
                "type": envelope_type,
                "payload": payload,
                "accepts_response_payload": accepts_response_payload,
                "retry_attempt": 0,
                "retry_reason": "",
            }
        )
        return envelope_id

    # ------------------------------------------------------------------ inspection

    def methods(self, name: str) -> list[dict[str, Any]]:
        return [c.args for c in self.calls if c.method == name]

    def in_channel(self, channel: str) -> list[Message]:
        return [m for m in self.messages.values() if m.channel == channel]

    def dms(self, user: str) -> list[Message]:
        return self.in_channel("D" + user)

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        return [m for m in self.in_channel(channel) if m.thread_ts == thread_ts]


class Signer:
    """Builds the headers Slack sends: a v0 HMAC over ``v0:{timestamp}:{body}``."""

    def __init__(self, secret: str) -> None:
        self.verifier = SignatureVerifier(secret)

    def headers(self, body: str, content_type: str, timestamp: int | None = None) -> dict[str, str]:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        sig = self.verifier.generate_signature(timestamp=ts, body=body)
        return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": str(sig), "Content-Type": content_type}


class SlackClientSim:
    """Sends what Slack would send to the app's request URL, signed."""

    def __init__(self, app_url: str, fake: FakeSlack, secret: str) -> None:
        self.app_url = app_url
        self.fake = fake
        self.signer = Signer(secret)
        self._n = itertools.count(1)
        self.session = aiohttp.ClientSession()

    async def close(self) -> None:
        await self.session.close()

    async def send(
        self, body: str, content_type: str, *, signer: Signer | None = None, timestamp: int | None = None, extra: dict[str, str] | None = None
    ) -> int:
        headers = (signer or self.signer).headers(body, content_type, timestamp)
        headers.update(extra or {})
        async with self.session.post(self.app_url, data=body.encode(), headers=headers) as resp:
            await resp.read()
            return resp.status

    # --- bodies

    def command_body(self, user: str, channel: str, text: str) -> str:
        n = next(self._n)
        return urlencode(
            {
                "token": "legacy",
                "team_id": TEAM,
                "channel_id": channel,
                "channel_name": "games",
                "user_id": user,
                "user_name": user.lower(),
                "command": "/hushtable",
                "text": text,
                "api_app_id": "AHUSH",
                "response_url": f"{self.fake.base}/response/cmd{n}",
                "trigger_id": f"{n}.trigger.cmd",
            }
        )

    def action_payload(self, user: str, message: Message, element: dict[str, Any], selected: str | None = None) -> dict[str, Any]:
        n = next(self._n)
        action: dict[str, Any] = {"action_id": element["action_id"], "block_id": "b", "type": element["type"], "action_ts": f"{1800000000 + n}.{n:06d}"}
        if element["type"] == "button":
            action["value"] = element.get("value", "")
            action["text"] = element["text"]
        else:
            opt = next(o for o in element["options"] if o["value"] == selected)
            action["selected_option"] = opt
        self.fake.response_targets[f"act{n}"] = (message.channel, message.ts)
        return {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "AHUSH",
            "token": "legacy",
            "container": {
                "type": "message",
                "message_ts": message.ts,
                "channel_id": message.channel,
                "is_ephemeral": False,
                **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
            },
            "trigger_id": f"{n}.trigger.act",
            "channel": {"id": message.channel, "name": "games"},
            "message": {
                "type": "message",
                "ts": message.ts,
                "text": message.text,
                "blocks": message.blocks,
                **({"thread_ts": message.thread_ts} if message.thread_ts else {}),
            },
            "response_url": f"{self.fake.base}/response/act{n}",
            "actions": [action],
        }

    def view_payload(self, user: str, view: dict[str, Any], values: list[str]) -> dict[str, Any]:
        state = {f"f{i}": {"text": {"type": "plain_text_input", "value": v}} for i, v in enumerate(values)}
        return {
            "type": "view_submission",
            "team": {"id": TEAM},
            "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM},
            "api_app_id": "AHUSH",
            "token": "legacy",
            "trigger_id": f"{next(self._n)}.trigger.view",
            "view": {**view, "state": {"values": state}, "team_id": TEAM, "app_id": "AHUSH", "bot_id": "BBOT"},
        }

    def event_body(self, event: dict[str, Any], event_id: str | None = None) -> tuple[str, str]:
        eid = event_id or f"Ev{next(self._n):08d}"
        body = {
            "token": "legacy",
            "team_id": TEAM,
            "api_app_id": "AHUSH",
            "event": event,
            "type": "event_callback",
            "event_id": eid,
            "event_time": int(time.time()),
            "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
        }
        return json.dumps(body), eid

    # --- senders

    async def command(self, user: str, channel: str, text: str) -> int:
        return await self.send(self.command_body(user, channel, text), "application/x-www-form-urlencoded")

    async def interact(self, payload: dict[str, Any], extra: dict[str, str] | None = None) -> int:
        return await self.send(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded", extra=extra)

    async def click(self, user: str, message: Message, element: dict[str, Any], selected: str | None = None) -> int:
        return await self.interact(self.action_payload(user, message, element, selected))

    async def submit(self, user: str, view: dict[str, Any], values: list[str]) -> int:
        return await self.interact(self.view_payload(user, view, values))

    async def dm_text(self, user: str, text: str, event_id: str | None = None, extra: dict[str, str] | None = None) -> tuple[int, str]:
        n = next(self._n)
        event = {
            "type": "message",
            "channel": "D" + user,
            "channel_type": "im",
            "user": user,
            "text": text,
            "ts": f"{1900000000 + n}.{n:06d}",
            "event_ts": f"{1900000000 + n}.{n:06d}",
            "team": TEAM,
        }
        body, eid = self.event_body(event, event_id)
        return await self.send(body, "application/json", extra=extra), eid

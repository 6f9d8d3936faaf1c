"""Commands and replies as JSON, to travel to the process that holds a table and back
(``storage.relay``); and the mark a relayed command carries while its holder handles it.

A command for a table held by another live process is not refused: the receiving process sends
it to the holder, the holder handles it as if it had come from the platform, and the reply
comes back to be shown to the member by the process the platform asked (ephemerally where the
platform has it). The holder never relays a relayed command further.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from bot.core.messages import Button, Command, CommandKind, Form, Outgoing, Place, Reply, Style, UserRef

RELAYED: ContextVar[bool] = ContextVar("hushtable_relayed_command", default=False)
"""True while this process handles a command another process relayed to it."""


def command_json(cmd: Command) -> dict[str, Any]:
    return {"kind": cmd.kind.value, "user": [cmd.user.platform, cmd.user.user_id, cmd.user.name],
            "place": [cmd.place.platform, cmd.place.channel, cmd.place.thread], "args": dict(cmd.args),
            "inbound_id": cmd.inbound_id, "is_admin": cmd.is_admin, "tenant": cmd.tenant}


def command_from(raw: Mapping[str, Any]) -> Command:
    user, place = raw["user"], raw["place"]
    return Command(CommandKind(raw["kind"]), UserRef(str(user[0]), str(user[1]), str(user[2])),
                   Place(str(place[0]), str(place[1]), place[2]), dict(raw.get("args") or {}),
                   raw.get("inbound_id"), bool(raw.get("is_admin")), str(raw.get("tenant", "")))


def reply_json(reply: Reply) -> dict[str, Any]:
    out: dict[str, Any] = {"text": reply.text, "ok": reply.ok, "duplicate": reply.duplicate}
    m = reply.outgoing
    if m is not None:
        out["outgoing"] = {
            "text": m.text, "buttons": [[b.id, b.label, b.style.value] for b in m.buttons], "select_id": m.select_id,
            "form": None if m.form is None else {"id": m.form.id, "title": m.form.title, "fields": list(m.form.fields),
                                                 "max_chars": m.form.max_chars, "hint": m.form.hint},
            "title": m.title, "user_text": m.user_text,
        }
    return out


def reply_from(raw: Mapping[str, Any]) -> Reply:
    outgoing = None
    m = raw.get("outgoing")
    if m is not None:
        f = m.get("form")
        form = None if f is None else Form(str(f["id"]), str(f["title"]), tuple(f["fields"]), int(f["max_chars"]),
                                           str(f.get("hint", "")))
        outgoing = Outgoing(str(m["text"]), tuple(Button(str(i), str(label), Style(style)) for i, label, style in m["buttons"]),
                            m.get("select_id"), form, m.get("title"), bool(m.get("user_text")))
    return Reply(str(raw["text"]), ok=bool(raw.get("ok", True)), outgoing=outgoing, duplicate=bool(raw.get("duplicate")))

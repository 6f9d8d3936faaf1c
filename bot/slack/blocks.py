"""Block Kit rendering: core `Outgoing` messages and `Form`s as Slack blocks and modals.

Pure functions over data (no client, no I/O), so every limit Slack enforces is
handled in one place: 3000 characters per section, 25 elements per actions
block, 75 characters per button label, 100 options per select, 2000 characters
per button value, 24 characters for a modal title.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.core.fit import fit_label, split_text
from bot.core.messages import Button, Form, Outgoing, Style

SECTION_MAX = 3000
FALLBACK_TEXT_MAX = 3900  # chat.postMessage truncates `text` at 40k; keep notifications short
BUTTON_LABEL_MAX = 75
BUTTONS_PER_BLOCK = 25
SELECT_OPTIONS_MAX = 100
OPTION_TEXT_MAX = 75
HEADER_MAX = 150
MODAL_TITLE_MAX = 24
VALUE_MAX = 2000

# Slack only knows two button styles; the others render as the default look.
_STYLES = {Style.PRIMARY: "primary", Style.DANGER: "danger", Style.SUCCESS: "primary"}

FIELD_BLOCK = "f{}"  # block_id of the i-th input in a form modal
FIELD_ACTION = "text"  # action_id of every input in a form modal


def escape(text: str) -> str:
    """Slack's three control characters. Escaping them means no text we relay, whoever
    wrote it, can become a mention (`<!channel>`, `<@U…>`) or a link."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_DOUBLE_STAR = re.compile(r"\*\*(.+?)\*\*", re.S)


def mrkdwn(text: str) -> str:
    """Any text for a mrkdwn field: escaped once, the core's **bold** made Slack's *bold*.
    The one place Slack text is escaped (`render` and the adapter's own lines use it)."""
    return to_mrkdwn(escape(text))


def to_mrkdwn(text: str) -> str:
    """The core writes **bold** (common markdown); Slack's mrkdwn bold is *bold*."""
    return _DOUBLE_STAR.sub(r"*\1*", text)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(text: str, limit: int) -> dict[str, Any]:
    # Labels are shortened from the middle: " (2)" at the end tells same-named players apart.
    return {"type": "plain_text", "text": fit_label(text, limit) or " ", "emoji": True}




def button_element(b: Button) -> dict[str, Any]:
    el: dict[str, Any] = {"type": "button", "action_id": b.id, "value": b.id, "text": _plain(b.label, BUTTON_LABEL_MAX)}
    if b.style in _STYLES:
        el["style"] = _STYLES[b.style]
    return el


def select_element(select_id: str, buttons: Sequence[Button], placeholder: str = "Choose…") -> dict[str, Any]:
    # The option value is the full button id, so the choice decodes like a click would.
    options = [{"text": _plain(b.label, OPTION_TEXT_MAX), "value": b.id} for b in buttons[:SELECT_OPTIONS_MAX]]
    return {"type": "static_select", "action_id": select_id, "placeholder": _plain(placeholder, 150), "options": options}


def form_opener(form: Form) -> dict[str, Any]:
    """A button that opens the form as a modal. The form travels in the button's value,
    so the adapter keeps no state between the click and the modal."""
    return {
        "type": "button",
        "action_id": form.id,
        "value": _clip(encode_form(form), VALUE_MAX),
        "style": "primary",
        "text": _plain(f"✏️ {form.title}", BUTTON_LABEL_MAX),
    }


def encode_form(form: Form) -> str:
    return json.dumps({"t": form.title, "f": list(form.fields), "m": form.max_chars, "h": form.hint}, separators=(",", ":"))


def decode_form(form_id: str, raw: str) -> Form:
    data = json.loads(raw)
    return Form(form_id, str(data["t"]), tuple(str(f) for f in data["f"]), int(data["m"]), str(data.get("h", "")))


@dataclass(frozen=True, slots=True)
class Rendered:
    """What chat.postMessage / chat.update / respond() take: notification text and blocks."""

    text: str
    blocks: list[dict[str, Any]]

    def kwargs(self) -> dict[str, Any]:
        return {"text": self.text, "blocks": self.blocks}


def render(m: Outgoing) -> Rendered:
    blocks: list[dict[str, Any]] = []
    if m.title:
        blocks.append({"type": "header", "text": _plain(m.title, HEADER_MAX)})
    body = mrkdwn(m.text)
    for part in split_text(body, SECTION_MAX) if body else []:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": part, "verbatim": True}})
    elements: list[dict[str, Any]] = []
    if m.buttons and m.select_id:
        elements.append(select_element(m.select_id, m.buttons))
    else:
        elements.extend(button_element(b) for b in m.buttons)
    if m.form:
        elements.append(form_opener(m.form))
    for i in range(0, len(elements), BUTTONS_PER_BLOCK):
        blocks.append({"type": "actions", "elements": elements[i : i + BUTTONS_PER_BLOCK]})
    head = f"{m.title}: " if m.title else ""
    return Rendered(_clip(mrkdwn(head + m.text), FALLBACK_TEXT_MAX) or " ", blocks)


def form_modal(form: Form, private_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A modal view with one single-line input per field; ``callback_id`` is the form id."""
    blocks: list[dict[str, Any]] = []
    if form.hint:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": escape(form.hint)[:SECTION_MAX], "verbatim": True}})
    for i, label in enumerate(form.fields):
        blocks.append(
            {
                "type": "input",
                "block_id": FIELD_BLOCK.format(i),
                "label": _plain(label, 2000),
                "element": {"type": "plain_text_input", "action_id": FIELD_ACTION, "max_length": max(1, form.max_chars)},
            }
        )
    return {
        "type": "modal",
        "callback_id": form.id,
        "title": _plain(form.title, MODAL_TITLE_MAX),
        "submit": _plain("Send", 24),
        "close": _plain("Cancel", 24),
        "private_metadata": json.dumps(dict(private_metadata), separators=(",", ":")),
        "blocks": blocks,
    }


def form_values(view: Mapping[str, Any]) -> list[str]:
    """The submitted texts in field order, from a view_submission's ``view.state``."""
    values = view.get("state", {}).get("values", {})
    out: list[str] = []
    i = 0
    while FIELD_BLOCK.format(i) in values:
        out.append(str(values[FIELD_BLOCK.format(i)].get(FIELD_ACTION, {}).get("value") or "").strip())
        i += 1
    return out

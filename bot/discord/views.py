"""Rendering core `Outgoing` messages as Discord components, and the persistent items behind them.

Every button and select carries a custom id from `bot.core.codec`. The two `DynamicItem`
classes below match those ids by a regular expression and are registered once at startup
(`PERSISTENT_ITEMS`), so a click on any message the bot ever sent is routed after a restart
too: nothing about a view lives only in memory. Forms become a button that opens a modal;
modal submissions are read straight from the interaction payload by the adapter, so they do
not depend on the modal object either.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

import discord

from bot.core.messages import Button, Form, Outgoing, Style
from bot.discord.text import INPUT_LABEL_MAX, MODAL_TITLE_MAX, OPTION_LABEL_MAX, label

if TYPE_CHECKING:
    from discord import Interaction

MAX_BUTTONS = 25  # 5 rows of 5
MAX_SELECT_OPTIONS = 25
CHUNK_SEP = "#"  # select ids beyond the first 25 options get "#n"; the codec never uses '#'
NO_MENTIONS = discord.AllowedMentions.none()

_STYLES = {
    Style.PRIMARY: discord.ButtonStyle.primary,
    Style.SECONDARY: discord.ButtonStyle.secondary,
    Style.SUCCESS: discord.ButtonStyle.success,
    Style.DANGER: discord.ButtonStyle.danger,
}


class ComponentRouter(Protocol):
    """What the persistent items call back into (the adapter's router)."""

    async def on_button(self, interaction: Interaction, custom_id: str) -> None: ...

    async def on_select(self, interaction: Interaction, custom_id: str, values: list[str]) -> None: ...


def _router(interaction: Interaction) -> ComponentRouter:
    # The bot instance carries its router: injected at startup, no module-level singleton.
    return interaction.client.router  # type: ignore[attr-defined,no-any-return]  # typed as discord.Client; ours is HushtableBot, which sets it


def _component_type(interaction: Interaction) -> int | None:
    data: Any = interaction.data or {}
    kind = data.get("component_type")
    return int(kind) if kind is not None else None


class CodecButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"(?P<cid>(?:g|l|s):.+)"):
    """Any Hushtable button: choice (g:..:option), form opener (g:..), lobby (l:..), show secret (s:..)."""

    def __init__(self, custom_id: str, text: str = "", style: discord.ButtonStyle = discord.ButtonStyle.secondary,
                 row: int | None = None) -> None:
        super().__init__(discord.ui.Button(custom_id=custom_id, label=label(text), style=style), row=row)
        self.cid = custom_id

    @classmethod
    async def from_custom_id(cls, interaction: Interaction, item: discord.ui.Item[Any], match: re.Match[str], /) -> CodecButton:
        return cls(match["cid"], getattr(item, "label", None) or "", getattr(item, "style", discord.ButtonStyle.secondary))

    async def interaction_check(self, interaction: Interaction, /) -> bool:
        # Both templates match g: ids; each item answers only its own component type.
        return _component_type(interaction) == discord.ComponentType.button.value

    async def callback(self, interaction: Interaction) -> None:
        await _router(interaction).on_button(interaction, self.cid)


class CodecSelect(discord.ui.DynamicItem[discord.ui.Select[Any]], template=r"(?P<cid>g:.+?)(?:#\d+)?"):
    """A select menu over a choice's options; each option value is the option's own button id."""

    def __init__(self, custom_id: str, options: list[discord.SelectOption], placeholder: str = "Choose…",
                 row: int | None = None) -> None:
        super().__init__(discord.ui.Select(custom_id=custom_id, options=options, placeholder=placeholder[:150],
                                           min_values=1, max_values=1), row=row)
        self.cid = custom_id.split(CHUNK_SEP)[0]

    @classmethod
    async def from_custom_id(cls, interaction: Interaction, item: discord.ui.Item[Any], match: re.Match[str], /) -> CodecSelect:
        options = list(getattr(item, "options", None) or [discord.SelectOption(label="-", value="-")])
        return cls(getattr(item, "custom_id", match["cid"]), options)

    async def interaction_check(self, interaction: Interaction, /) -> bool:
        return _component_type(interaction) == discord.ComponentType.string_select.value

    async def callback(self, interaction: Interaction) -> None:
        await _router(interaction).on_select(interaction, self.cid, list(self.item.values))


PERSISTENT_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (CodecButton, CodecSelect)


def view_of(m: Outgoing) -> discord.ui.View | None:
    """The components for ``m``: buttons when few, select menus when many or when asked for."""
    if not m.buttons and m.form is None:
        return None
    view = discord.ui.View(timeout=None)  # persistent: no timeout, ids from the codec
    row = 0
    if m.buttons and (m.select_id is not None or len(m.buttons) > MAX_BUTTONS - (1 if m.form else 0)):
        select_id = m.select_id or _select_id_for(m.buttons)
        for n, start in enumerate(range(0, len(m.buttons), MAX_SELECT_OPTIONS)):
            if row >= 4 and m.form is not None or row >= 5:
                break  # Discord allows five rows; more than 100 options cannot be shown at once
            chunk = m.buttons[start : start + MAX_SELECT_OPTIONS]
            cid = select_id if n == 0 else f"{select_id}{CHUNK_SEP}{n}"
            options = [discord.SelectOption(label=label(b.label or b.id, OPTION_LABEL_MAX), value=b.id) for b in chunk]
            view.add_item(CodecSelect(cid, options, placeholder=m.title or "Choose…", row=row))
            row += 1
    else:
        for i, b in enumerate(m.buttons):
            view.add_item(CodecButton(b.id, b.label, _STYLES.get(b.style, discord.ButtonStyle.secondary), row=i // 5))
        row = (len(m.buttons) + 4) // 5
    if m.form is not None:
        view.add_item(CodecButton(m.form.id, f"✍ {m.form.title}", discord.ButtonStyle.primary, row=min(row, 4)))
    return view


def _select_id_for(buttons: tuple[Button, ...]) -> str:
    # Choice buttons are g:{game}:{seat}:{kind}:{option}; the menu id is the same without the option.
    return buttons[0].id.rsplit(":", 1)[0]


class FormModal(discord.ui.Modal):
    """The modal for a `Form`: one short text input per field, ``custom_id`` = the form's codec id.

    Each input sits in a Label component (discord.py 2.6+, the layout Discord documents now;
    text inputs in action rows with their own label are deprecated). Submissions are handled
    by the adapter's interaction listener from the raw payload (so a modal opened before a
    restart still counts); this object only describes the dialog.
    """

    def __init__(self, form: Form) -> None:
        super().__init__(title=label(form.title or "Your answer", MODAL_TITLE_MAX), custom_id=form.id, timeout=None)
        for i, name in enumerate(form.fields[:5]):
            self.add_item(discord.ui.Label(
                text=label(name or f"Answer {i + 1}", INPUT_LABEL_MAX),
                description=label(form.hint, 100) if form.hint else None,
                component=discord.ui.TextInput(custom_id=f"f{i}", style=discord.TextStyle.short,
                                               max_length=max(1, min(form.max_chars, 4000)), required=True),
            ))

    async def on_submit(self, interaction: Interaction, /) -> None:
        return None  # answered by the adapter's on_interaction listener


def modal_values(data: Any) -> list[str]:
    """The text values of a modal submission, in field order (custom ids f0..f4)."""
    found: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == 4 and "custom_id" in node:
                found[str(node["custom_id"])] = str(node.get("value") or "")
            for key in ("components", "component"):
                if key in node:
                    walk(node[key])
        elif isinstance(node, list):
            for x in node:
                walk(x)

    walk((data or {}).get("components") or [])
    return [found[k] for k in sorted(found, key=lambda k: (len(k), k))]

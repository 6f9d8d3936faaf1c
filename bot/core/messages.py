"""The platform-neutral language between adapters and the TableService.

Inbound: a `Command` (what a person or an AI seat asked for). Outbound: an
`Outgoing` message (text, optional buttons or a select built from a game's
legal options, optional free-text form) that each adapter renders natively,
and a `Reply` that answers the command's author only (ephemeral where the
platform has it).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from games.base import Board
from games.text import MAX_NAME_CHARS, display_name


@dataclass(frozen=True, slots=True)
class Place:
    """Where a table sits: a channel, or a thread inside one."""

    platform: str
    channel: str
    thread: str | None = None

    @property
    def key(self) -> str:
        return f"{self.channel}/{self.thread}" if self.thread else self.channel

    @classmethod
    def from_key(cls, platform: str, key: str) -> Place:
        channel, _, thread = key.partition("/")
        return cls(platform, channel, thread or None)


@dataclass(frozen=True, slots=True)
class UserRef:
    """A person, by stable platform id; ``name`` is only for display."""

    platform: str
    user_id: str
    name: str = ""

    def __post_init__(self) -> None:
        # A platform's display name shows in lobbies, boards and listings: one name rule for all of them
        # (games.text: no control, bidi or invisible characters, NFKC, bounded).
        if self.name:
            object.__setattr__(self, "name", display_name(self.name, fallback=self.user_id[:MAX_NAME_CHARS]))

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.user_id}"


class Style(enum.StrEnum):
    PRIMARY = "primary"
    SECONDARY = "secondary"
    DANGER = "danger"
    SUCCESS = "success"


@dataclass(frozen=True, slots=True)
class Button:
    """A clickable choice. ``id`` comes from bot.core.codec and survives restarts."""

    id: str
    label: str
    style: Style = Style.SECONDARY


@dataclass(frozen=True, slots=True)
class Form:
    """A free-text form with ``fields`` (one input each); ``id`` from bot.core.codec."""

    id: str
    title: str
    fields: tuple[str, ...]
    max_chars: int = 40
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One message. ``buttons`` are rendered as buttons when few, as a select menu when many
    (``select_id`` names the menu; each button id is then an option value)."""

    text: str
    buttons: tuple[Button, ...] = ()
    select_id: str | None = None
    form: Form | None = None
    title: str | None = None
    user_text: bool = False  # contains player-written text: never allow mentions
    # A turn's message carries its outbox id: sent at least once, so a platform (or a reader)
    # that keeps the keys it has seen can drop a repeat (bot.core.outbox).
    key: str | None = None
    # The table drawn as a grid, for screens that draw one (the console); the text stands without it.
    board: Board | None = None
    # Set when a keyed message may have been sent already (an outbox row sent again after a takeover
    # or a withheld send): the earliest time (Unix seconds) a copy could have been made. A platform
    # whose API takes no idempotency key looks for that copy before sending again.
    maybe_sent_since: float | None = None

    @property
    def has_controls(self) -> bool:
        return bool(self.buttons or self.form)


@dataclass(frozen=True, slots=True)
class MessageRef:
    """A posted message, so it can be edited in place (lobby cards)."""

    platform: str
    channel: str
    message_id: str


class DeliveryFailed(Exception):
    """A platform could not deliver a message (e.g. a member's DMs are closed)."""


class CommandKind(enum.StrEnum):
    """What a command asks for; its raw args become the typed dataclass in bot.core.commands."""

    CREATE = "create"  # args: game, variant, options (dict), deadline_s, spectate
    JOIN = "join"  # args: game_id (optional: the table here)
    LEAVE = "leave"
    ADD_AI = "add_ai"  # args: agent (one of the configured agent names), count
    REMOVE_AI = "remove_ai"  # args: agent (optional)
    SET_DEADLINE = "set_deadline"  # args: seconds (0 = none)
    START = "start"  # args: seed (optional)
    ABORT = "abort"
    LIST = "list"  # open lobbies of this tenant on this platform
    STATUS = "status"
    RULES = "rules"  # args: game, variant (optional: the table's game)
    ACT = "act"  # args: game_id, seat, kind, value (list[str]); or text (a reply in direct messages)
    SHOW = "show"  # args: game_id: the caller's private view, ephemerally
    EXPORT = "export"  # the author of an export; the file comes from TableService.export, not handle


@dataclass(frozen=True, slots=True)
class Command:
    kind: CommandKind
    user: UserRef
    place: Place
    args: Mapping[str, Any] = field(default_factory=dict)
    inbound_id: str | None = None  # the platform's event/interaction id, for idempotency
    is_admin: bool = False  # admin of *this* tenant, as the platform says (the service adds configured admins)
    tenant: str = ""  # whose game this is: "discord:<guild id>", "slack:<team id>", "console"; ids never cross tenants


@dataclass(frozen=True, slots=True)
class Reply:
    """The answer to a command, for its author only. ``ok`` is False for refused commands."""

    text: str
    ok: bool = True
    outgoing: Outgoing | None = None
    duplicate: bool = False

    @classmethod
    def error(cls, text: str) -> Reply:
        return cls(text, ok=False)

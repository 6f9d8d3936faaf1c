"""Intake shared by every adapter: what people type or click, turned into `Command` arguments.

One set of rules for all platforms, so a table opened from Discord, Slack or the console
reads its options the same way:

- ``key=value`` options (`parse_options`): ``yes/no/on/off/true/false`` are booleans,
  whole numbers are ints, decimals are floats, ``"quoted text"`` stays text (quotes keep
  spaces and keep ``"3"`` a string); a token that is not ``key=value`` is named in a clear
  `IntakeError`. Keys are folded to ``snake_case`` (``max-rounds`` -> ``max_rounds``).
- ``since`` dates for exports (`parse_since`), UTC unless the text says otherwise.
- The command a decoded codec id stands for (`command_for`): lobby buttons, "show my
  secret", choice buttons, select options and form submissions; a form *opener* is the
  adapter's own business (it opens a modal) and yields None.
- The default agent of the lobby "ai" button (`default_agent`): the configured default if
  the operator offers it, else the first offered name: the same on every platform.

Validation of the values themselves (ranges, known options) belongs to the service's
intake; this module only produces the raw ``Command.args`` uniformly.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.core import codec
from bot.core.messages import Command, CommandKind, Place, UserRef

__all__ = [
    "LOBBY_KINDS",
    "dm_tenant",
    "reaches",
    "IntakeError",
    "Origin",
    "command_for",
    "default_agent",
    "parse_options",
    "parse_since",
    "parse_value",
    "tokens",
    "unquote",
]

LOBBY_KINDS: dict[codec.LobbyVerb, CommandKind] = {
    codec.LobbyVerb.JOIN: CommandKind.JOIN,
    codec.LobbyVerb.LEAVE: CommandKind.LEAVE,
    codec.LobbyVerb.AI: CommandKind.ADD_AI,
    codec.LobbyVerb.START: CommandKind.START,
    codec.LobbyVerb.ABORT: CommandKind.ABORT,
}

_KEY = re.compile(r"[A-Za-z_][\w-]*")
_INT = re.compile(r"[-+]?[0-9]{1,18}")  # ASCII digits only: int() reads any script's and fails past 4,300
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?")
_TRUE = frozenset({"true", "yes", "on"})
_FALSE = frozenset({"false", "no", "off"})
_TOKEN = re.compile(r"""(?:[^\s,;"']|"[^"]*"|'[^']*')+""")
_ALL_TOKENS = re.compile(r"""(?:[\s,;]|[^\s,;"']|"[^"]*"|'[^']*')*""")
_SHOWN = 40  # characters of a bad token quoted back to its author


class IntakeError(ValueError):
    """Input that cannot be read; the message says what was wrong and how to write it."""


def _quote(token: str) -> str:
    return token if len(token) <= _SHOWN else token[: _SHOWN - 1] + "…"


def tokens(text: str | None) -> list[str]:
    """Words split at spaces, commas and semicolons, quotes kept: ``name="two words"`` is one word.

    Quotes stay on so that `parse_options` can tell ``"3"`` (text) from ``3`` (a number);
    `unquote` takes them off a positional word.
    """
    text = text or ""
    if not _ALL_TOKENS.fullmatch(text):
        raise IntakeError("Unbalanced quotes: close every quote you open.")
    return _TOKEN.findall(text)


def unquote(word: str) -> str:
    """A word without its surrounding quotes, if it has a matching pair."""
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "\"'":
        return word[1:-1]
    return word


def parse_value(raw: str, *, quoted: bool = False) -> bool | int | float | str:
    """One option value by the shared rules (see the module docstring)."""
    if quoted:
        return raw
    low = raw.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    if _INT.fullmatch(raw):
        return int(raw)
    if _FLOAT.fullmatch(raw):
        value = float(raw)
        # 1e999 reads as inf: refused here, where the token can still be named.
        if not math.isfinite(value):
            raise IntakeError(f"`{_quote(raw)}` is too large a number.")
        return value
    return raw


def _option(token: str) -> tuple[str, bool | int | float | str]:
    key, eq, raw = token.partition("=")
    if not eq or not _KEY.fullmatch(key):
        raise IntakeError(f"`{_quote(token)}` is not an option: write options as key=value, e.g. rounds=3.")
    if not raw:
        raise IntakeError(f"`{_quote(token)}` has no value: write {key}=VALUE.")
    text = unquote(raw)
    return key.replace("-", "_").lower(), parse_value(text, quoted=text != raw)


def parse_options(tokens: str | Iterable[str] | None) -> dict[str, Any]:
    """``"rounds=3 tie=runoff blank=yes"`` -> ``{"rounds": 3, "tie": "runoff", "blank": True}``.

    ``tokens`` is either the raw text or words already split by `tokens` (quotes kept). Raises `IntakeError` naming the first
    token that is not ``key=value`` or a key given twice.
    """
    if tokens is None:
        return {}
    if isinstance(tokens, str):
        words = _split_option_text(tokens)
    else:
        words = list(tokens)
    out: dict[str, Any] = {}
    for token in words:
        key, value = _option(token)
        if key in out:
            raise IntakeError(f"`{key}` is given twice.")
        out[key] = value
    return out


def operator_options(pairs: Iterable[str]) -> dict[str, Any]:
    """Command-line options of the operator (``-o key=value``): a value is JSON when it parses (so a whole
    deal can be given), else the text as typed. Raises `IntakeError` naming a pair without ``=``."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise IntakeError(f"option {pair!r} must be KEY=VALUE")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def _split_option_text(text: str) -> list[str]:
    # `key = value` typed with spaces reads as two or three words; join them back.
    out: list[str] = []
    for w in tokens(text):
        if out and ((w.startswith("=") and "=" not in out[-1]) or out[-1].endswith("=")):
            out[-1] += w
        else:
            out.append(w)
    return out


def parse_since(raw: str | None) -> datetime | None:
    """An export's ``since``: an ISO date or date-time; UTC unless it names its own offset."""
    if raw is None or not raw.strip():
        return None
    try:
        when = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise IntakeError(f"`since` is a date like 2025-01-31, not `{_quote(raw)}`.") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def default_agent(choices: Sequence[str], configured: str) -> str:
    """The agent an "Add AI" click or a bare ``ai`` adds: the configured default when the
    operator offers it, else the first name offered (the same on every platform)."""
    if configured in choices or not choices:
        return configured
    return choices[0]


def dm_tenant(platform: str) -> str:
    """The tenant of a command made in a direct message, where the platform names no guild or
    workspace (a Discord DM): ``"<platform>:dm"``."""
    return f"{platform}:dm"


def reaches(cmd: Command, tenant: str) -> bool:
    """Whether ``cmd`` may act on a table of ``tenant``: its own tenant's tables, and, from a DM
    (which names no tenant), its platform's tables; the member's seat then decides, since a seat
    is held by one platform user and nobody else can click in that user's DMs."""
    if cmd.tenant == tenant:
        return True
    platform = cmd.place.platform
    return cmd.tenant == dm_tenant(platform) and tenant.startswith(f"{platform}:")


@dataclass(frozen=True, slots=True)
class Origin:
    """Who did something, where, for which tenant: everything a `Command` needs but its kind and args."""

    user: UserRef
    place: Place
    tenant: str
    is_admin: bool = False
    inbound_id: str | None = None

    def command(self, kind: CommandKind, args: dict[str, Any] | None = None) -> Command:
        return Command(kind, self.user, self.place, dict(args or {}), inbound_id=self.inbound_id,
                       is_admin=self.is_admin, tenant=self.tenant)


def command_for(d: codec.Decoded, origin: Origin, *, agent: str,
                values: Sequence[str] | None = None) -> Command | None:
    """The command behind a decoded button, select option or form id.

    ``values``: the texts of a submitted form (for a ``g:`` id without an option). A ``g:``
    id without an option and without values is a form opener: None (the adapter opens it).
    ``agent``: what the lobby "ai" button adds (see `default_agent`).
    """
    if d.scope is codec.Scope.LOBBY:
        assert d.verb is not None  # decode() gives every lobby id its verb
        kind = LOBBY_KINDS[d.verb]
        args: dict[str, Any] = {"game_id": d.game_id}
        if kind is CommandKind.ADD_AI:
            args |= {"agent": agent, "count": 1}
        return origin.command(kind, args)
    if d.scope is codec.Scope.SHOW:
        return origin.command(CommandKind.SHOW, {"game_id": d.game_id})
    if d.option is not None:
        value = [d.option]
    elif values is not None:
        value = [str(v) for v in values]
    else:
        return None
    return origin.command(CommandKind.ACT, {"game_id": d.game_id, "seat": d.seat, "kind": d.kind, "value": value})

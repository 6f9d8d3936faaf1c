"""Typed, validated arguments for each command kind, built once at the service's intake.

Adapters hand the service a raw ``Command.args`` mapping (numbers may still be strings, a
Discord option or a Slack word). `parse_args` turns it into one small frozen dataclass per
kind, or raises `Refused` with a sentence for the author: a non-integer or overflowing id,
seat or count, a NaN or absurd deadline, options that are not plain values. Nothing past
this file reads ``Command.args``.

The one option schema lives here too: `check_deadline` and `check_options` run at create,
at /deadline and for every adapter (the console included), since all of them come through
`parse_args`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.core.messages import Command, CommandKind
from games.text import typed_number
from models.agent_names import canonical

MAX_ID = 2**62  # game ids and seeds fit a signed 64-bit column with room to spare
MAX_DEADLINE_S = 7 * 24 * 3600.0  # one week: longer turns are a table nobody plays
MAX_AI_AT_ONCE = 12
MAX_OPTION_CHARS = 200  # an option value is a word or a number, never an essay


class Refused(Exception):
    """A command that changes nothing; the message goes back to its author."""


# ---------------------------------------------------------------------- one dataclass per kind


@dataclass(frozen=True, slots=True)
class TableRef:
    """Which table a command is about: ``game_id`` when given, else the table at the command's place."""

    game_id: int | None = None


@dataclass(frozen=True, slots=True)
class CreateArgs:
    game: str
    variant: str | None
    options: Mapping[str, Any]
    deadline_s: float | None  # None: the operator's default
    spectate: bool  # an AI-only table: the host watches
    sneak_report: bool = False  # a table setting, not a rule: kept in the lobby, never handed to the engine


@dataclass(frozen=True, slots=True)
class AddAiArgs(TableRef):
    agent: str | None = None  # None: the operator's default agent
    count: int = 1


@dataclass(frozen=True, slots=True)
class RemoveAiArgs(TableRef):
    agent: str | None = None  # None: the last AI seat the author may remove


@dataclass(frozen=True, slots=True)
class DeadlineArgs(TableRef):
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class StartArgs(TableRef):
    seed: int | None = None


@dataclass(frozen=True, slots=True)
class RulesArgs:
    game: str | None
    variant: str | None


@dataclass(frozen=True, slots=True)
class ActArgs:
    game_id: int
    seat: int
    kind: str
    value: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ReplyTextArgs:
    """A free-text reply in direct messages: the service finds the game that awaits it."""

    text: str


@dataclass(frozen=True, slots=True)
class NoArgs:
    pass


Args = CreateArgs | AddAiArgs | RemoveAiArgs | DeadlineArgs | StartArgs | RulesArgs | ActArgs | ReplyTextArgs | \
    TableRef | NoArgs


# ---------------------------------------------------------------------- checks shared by every entry


def whole(raw: object, what: str, lo: int = 0, hi: int = MAX_ID) -> int:
    """An integer from an int or a string of digits, within [lo, hi)."""
    if isinstance(raw, bool):
        raise Refused(f"{what} must be a whole number.")
    if isinstance(raw, int):
        value = raw
    elif isinstance(raw, str) and (digits := typed_number(raw.strip().lstrip("+-"), 20)) is not None:
        value = -digits if raw.strip().startswith("-") else digits
    else:
        raise Refused(f"{what} must be a whole number.")
    if not lo <= value < hi:
        raise Refused(f"{what} must be between {lo} and {hi - 1}.")
    return value


def check_deadline(raw: object) -> float:
    """Seconds for a human turn: a finite number between 0 (none) and one week."""
    if isinstance(raw, bool):
        raise Refused("The deadline is a number of seconds (0 for none).")
    try:
        value = float(raw) if isinstance(raw, (int, float, str)) else math.nan
    except (ValueError, OverflowError):
        value = math.nan
    if not math.isfinite(value):
        raise Refused("The deadline is a number of seconds (0 for none).")
    if not 0 <= value <= MAX_DEADLINE_S:
        raise Refused("The deadline must be between 0 (none) and one week (604800 s).")
    return value


SNEAK_REPORT = "sneak_report"
"""The table option that asks for the SNEAK clue report after a Who-is-Spy or Decrypto game."""


def check_options(raw: object) -> dict[str, Any]:
    """Game options as plain JSON values; the engine's ``make_config`` checks their meaning."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise Refused("Options are name=value pairs.")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise Refused(f"{str(key)[:40]!r} is not an option name.")
        out[key] = _plain(key, value)
    return out


def _plain(key: str, value: object, depth: int = 0) -> Any:
    if value is None or isinstance(value, (bool, str, int)):
        if isinstance(value, str) and len(value) > MAX_OPTION_CHARS:
            raise Refused(f"Option {key} is too long.")
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_ID:
            raise Refused(f"Option {key} is out of range.")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Refused(f"Option {key} must be a finite number.")
        return value
    if isinstance(value, (list, tuple)) and depth < 3 and len(value) <= 64:
        return [_plain(key, v, depth + 1) for v in value]
    if isinstance(value, Mapping) and depth < 3 and len(value) <= 64:
        return {str(k): _plain(key, v, depth + 1) for k, v in value.items()}
    raise Refused(f"Option {key} must be a number, a word, true or false.")


def _agent(raw: object) -> str | None:
    """An AI player's name as typed; an old name (``llm:default``) is read as its new one."""
    name = _text(raw, "The AI player")
    return None if name is None else canonical(name)


def _text(raw: object, what: str, limit: int = 100) -> str | None:
    if raw is None or raw == "":
        return None
    if not isinstance(raw, str) or len(raw) > limit:
        raise Refused(f"{what} must be a short text.")
    return raw.strip() or None


def _table_ref(args: Mapping[str, Any]) -> int | None:
    raw = args.get("game_id")
    return None if raw is None or raw == "" else whole(raw, "The game id", 1)


# ---------------------------------------------------------------------- the intake


def parse_args(cmd: Command, *, max_text_chars: int) -> Args:
    """The typed arguments of ``cmd``; raises Refused with a sentence for its author."""
    a = cmd.args
    match cmd.kind:
        case CommandKind.CREATE:
            game = _text(a.get("game"), "The game")
            if game is None:
                raise Refused("Name a game to play.")
            deadline = a.get("deadline_s")
            options = check_options(a.get("options"))
            report = options.pop(SNEAK_REPORT, False)
            if not isinstance(report, bool):
                raise Refused(f"{SNEAK_REPORT} is yes or no.")
            return CreateArgs(game, _text(a.get("variant"), "The variant"), options,
                              None if deadline is None else check_deadline(deadline), bool(a.get("spectate")), report)
        case CommandKind.ADD_AI:
            count = 1 if a.get("count") in (None, "") else whole(a.get("count"), "The number of AI seats", 0)
            if not 1 <= count <= MAX_AI_AT_ONCE:
                raise Refused(f"Add between 1 and {MAX_AI_AT_ONCE} AI seats at a time.")
            return AddAiArgs(_table_ref(a), _agent(a.get("agent")), count)
        case CommandKind.REMOVE_AI:
            return RemoveAiArgs(_table_ref(a), _agent(a.get("agent")))
        case CommandKind.SET_DEADLINE:
            return DeadlineArgs(_table_ref(a), check_deadline(a.get("seconds", 0)))
        case CommandKind.START:
            seed = a.get("seed")
            return StartArgs(_table_ref(a), None if seed is None else whole(seed, "A seed"))
        case CommandKind.RULES:
            return RulesArgs(_text(a.get("game"), "The game"), _text(a.get("variant"), "The variant"))
        case CommandKind.ACT:
            if a.get("game_id") is None:
                text = a.get("text", "")
                if not isinstance(text, str):
                    raise Refused("That answer could not be read.")
                return ReplyTextArgs(text.strip())
            value = a.get("value")
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value) or len(value) > 8:
                raise Refused("That answer could not be read.")
            if any(len(v) > max_text_chars for v in value):
                raise Refused(f"Keep each answer within {max_text_chars} characters.")
            kind = a.get("kind")
            if not isinstance(kind, str) or len(kind) > 40:
                raise Refused("That answer could not be read.")
            return ActArgs(whole(a.get("game_id"), "The game id", 1), whole(a.get("seat", -1), "The seat", 0, 64),
                           kind, tuple(value))
        case CommandKind.SHOW:
            return TableRef(whole(a.get("game_id"), "The game id", 1))
        case CommandKind.JOIN | CommandKind.LEAVE | CommandKind.ABORT | CommandKind.STATUS:
            return TableRef(_table_ref(a))
        case CommandKind.LIST | CommandKind.EXPORT:
            return NoArgs()
    raise Refused("Unknown command.")  # pragma: no cover - every kind is matched above

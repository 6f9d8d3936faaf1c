"""The one codec for button, select and form ids, so they survive restarts on every platform.

- ``g:{game_id}:{seat}:{kind}:{option}`` a choice button (option ids never contain ':')
- ``g:{game_id}:{seat}:{kind}`` a select menu or form; the value comes with the interaction
- ``l:{game_id}:{verb}`` a lobby button (join, leave, ai, start, abort)
- ``s:{game_id}`` the "show my secret" button
Ids stay under Discord's 100-character limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class LobbyVerb(StrEnum):
    """The lobby card's buttons."""

    JOIN = "join"
    LEAVE = "leave"
    AI = "ai"
    START = "start"
    ABORT = "abort"


LOBBY_VERBS: tuple[str, ...] = tuple(LobbyVerb)


class Scope(StrEnum):
    """What an id is for: its first field."""

    ACTION = "g"  # a choice button, a select menu or a form of a seat's turn
    LOBBY = "l"  # a lobby button
    SHOW = "s"  # the "show my secret" button


@dataclass(frozen=True, slots=True)
class Decoded:
    scope: Scope
    game_id: int
    seat: int | None = None
    kind: str | None = None
    option: str | None = None
    verb: LobbyVerb | None = None


class BadId(ValueError):
    pass


def action_id(game_id: int, seat: int, kind: str, option: str | None = None) -> str:
    if ":" in kind or (option is not None and ":" in option):
        raise BadId("action kinds and option ids cannot contain ':'")
    out = f"{Scope.ACTION}:{game_id}:{seat}:{kind}" + (f":{option}" if option is not None else "")
    if len(out) > 100:
        raise BadId("id longer than 100 characters")
    return out


def lobby_id(game_id: int, verb: LobbyVerb) -> str:
    if verb not in LOBBY_VERBS:
        raise BadId(f"unknown lobby verb {verb!r}")
    return f"{Scope.LOBBY}:{game_id}:{verb}"


def show_id(game_id: int) -> str:
    return f"{Scope.SHOW}:{game_id}"


def decode(raw: str) -> Decoded:
    parts = raw.split(":")
    try:
        if parts[0] == Scope.ACTION and len(parts) in (4, 5):
            return Decoded(Scope.ACTION, int(parts[1]), int(parts[2]), parts[3], parts[4] if len(parts) == 5 else None)
        if parts[0] == Scope.LOBBY and len(parts) == 3 and parts[2] in LOBBY_VERBS:
            return Decoded(Scope.LOBBY, int(parts[1]), verb=LobbyVerb(parts[2]))
        if parts[0] == Scope.SHOW and len(parts) == 2:
            return Decoded(Scope.SHOW, int(parts[1]))
    except ValueError:
        pass
    raise BadId(f"not a Hushtable id: {raw!r}")

"""What callers hand the store and get back: the records of a turn, the log of a game, and the store's errors.

Plain frozen dataclasses, checked on construction (an unknown seat kind, action
source or audience is a ValueError at the caller, not a bad row in the log).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from storage.tables import ActionRow, ActionSource, AgentOperation, EventRow, GameRow, SeatKind, SeatRow


class GameStateError(ValueError):
    """The game is not in a status that allows this write (e.g. a turn for a finished game)."""


class LogAhead(GameStateError):
    """The log already holds another action at the place this turn expected: the process's copy of
    the game is behind its log (a turn of its own whose commit answer was lost). Nothing was written."""

    def __init__(self, game_id: int, seq: int) -> None:
        super().__init__(f"game {game_id} already has an action {seq} in its log: this copy of the game is behind")
        self.game_id = game_id
        self.seq = seq


class WriteUnknown(RuntimeError):
    """A write whose COMMIT went unanswered twice (the connection to the database was lost) and
    could not be settled by reading back. ``written``: False when the read-back found it not
    written (nothing changed), None when even the read-back failed (it may or may not be)."""

    def __init__(self, what: str, written: bool | None) -> None:
        state = "nothing was written" if written is False else "whether it was written is unknown"
        super().__init__(f"{what}: the database did not answer; {state}")
        self.written = written


class GameNotFound(KeyError):
    """No game has this id."""


class DatabaseReadOnly(RuntimeError):
    """The database accepts no writes (a read-only file or role)."""


class DatabaseMissing(FileNotFoundError):
    """A command that needs an existing log was pointed at a SQLite file that is not there
    (opening it would silently create an empty one)."""


class SchemaOutOfDate(RuntimeError):
    """``Store.open(..., create=False)`` found a database not at the newest migration."""


# --------------------------------------------------------------------------- records written by callers


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """A seat of the frozen roster: a human with a user key, or an AI with an agent spec."""

    seat: int
    kind: SeatKind
    display_name: str
    user_key: str | None = None
    agent_spec: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", SeatKind(self.kind))  # a member's string becomes the member


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """An action as logged: who played it (``actor``: user key or agent spec) and how (``source``)."""

    seat: int
    kind: str
    value: Sequence[str]
    source: ActionSource
    actor: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "source", ActionSource(self.source))  # a member's string becomes the member
        if isinstance(self.value, str) or not all(isinstance(v, str) for v in self.value):
            raise ValueError("an action's value is a list of strings")

    @classmethod
    def of(cls, seat: int, action: Any, *, source: ActionSource, actor: str) -> ActionRecord:
        """From a ``games.base.Action`` (anything with ``kind`` and ``value``)."""
        return cls(seat, action.kind, tuple(action.value), source, actor)


@dataclass(frozen=True, slots=True)
class EventRecord:
    """An event as logged; ``audience_json`` is ``"public"`` or a list of seats (``Audience.to_json()``)."""

    kind: str
    data: Mapping[str, Any]
    audience_json: str | list[int] = "public"

    def __post_init__(self) -> None:
        aud = self.audience_json
        if aud != "public" and not (isinstance(aud, list) and all(isinstance(s, int) for s in aud)):
            raise ValueError(f"audience must be 'public' or a list of seat numbers, not {aud!r}")

    @classmethod
    def of(cls, event: Any) -> EventRecord:
        """From a ``games.base.Event`` (anything with ``to_json()`` giving kind, data, audience)."""
        raw = event.to_json()
        return cls(raw["kind"], raw["data"], raw["audience"])


@dataclass(frozen=True, slots=True)
class OutboxRecord:
    """A message a turn sends, logged with the turn (``storage.outbox``): ``seat`` None for the
    table's channel, else that seat's private message; ``id`` is the sender's key for it."""

    id: str
    seat: int | None
    body: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class AgentCallRecord:
    """One model call made for an AI seat.

    In ``append_turn`` the call is tied to the appended action: ``game_id`` and
    ``action_seq`` are filled in there. ``log_agent_calls`` needs ``game_id``.
    """

    seat: int
    agent_spec: str
    operation: AgentOperation = AgentOperation.NONE
    model_id: str = ""
    prompt: Any = field(default_factory=list)
    raw_output: str = ""
    label_probs: Mapping[str, float] | None = None
    latency_ms: float = 0.0
    retries: int = 0
    fallback: bool = False
    error: str | None = None
    game_id: int | None = None
    action_seq: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "operation", AgentOperation(self.operation))


@dataclass(frozen=True, slots=True)
class ActionActor:
    """Who played one logged action: the seat, how (``source``) and who (a user key or an agent spec)."""

    seat: int
    source: ActionSource
    actor: str


@dataclass(frozen=True)
class GameLog:
    """Everything logged about one game, in order: enough to replay it."""

    row: GameRow
    seats: list[SeatRow]
    actions: list[ActionRow]
    events: list[EventRow]

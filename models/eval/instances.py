"""SNEAK instances: what one scored message is, the log as the per-game mappers read it, the benchmark's.

A SNEAK instance is ``(category, candidates W, secret w_s, message m)`` plus who
said it. How each game's clue-like moves become instances lives in that game's
own module under ``models/eval/games/`` (found through its registry, keyed by
the game's id); this module holds what they share: the ``Instance`` record, the
shape of a logged game they read (``LogLike``), ``walk`` (events in order, each
action at its first caused event, so an instance is what the players saw) and
``speaker_of``.

Every draw a mapper makes is seeded from the game's own seed, so the same log
gives the same instances on every run; mappers never replay the engines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from games.base import normalize

BENCH_GAME = "bench"  # the ``game`` of a standalone benchmark instance
BENCH_ROLE = "bench"  # the ``role`` of a standalone benchmark message (games name their own roles)


class SpeakerKind(StrEnum):
    HUMAN = "human"
    AI = "ai"
    BENCH = "bench"


@dataclass(frozen=True, slots=True)
class Instance:
    """One message to score. ``game_id``/``action_seq``/``part`` name the move it came from."""

    game: str
    category: str
    candidates: tuple[str, ...]
    secret: str
    message: str
    role: str = BENCH_ROLE
    bluff: bool = False  # said without knowing the secret (scored "as if it knew": how well it blended in)
    seat: int | None = None
    speaker: str = ""  # the actor: a user key or an agent spec (never shown unpseudonymised)
    speaker_kind: str = SpeakerKind.BENCH.value
    game_id: int | None = None
    action_seq: int | None = None
    part: int = 0
    seed: int = 0  # the draw seed of this instance (the game's seed, or the bench's)

    def __post_init__(self) -> None:
        if normalize(self.secret) not in {normalize(c) for c in self.candidates}:
            raise ValueError("the secret must be one of the candidates")
        if len(self.candidates) < 2:
            raise ValueError("an instance needs at least two candidates")

    @property
    def key(self) -> str:
        """Stable name of the move: ``game_id:action_seq:part`` (bench instances: category/secret)."""
        if self.game_id is None:
            return f"bench:{self.category}:{self.secret}"
        return f"{self.game_id}:{self.action_seq}:{self.part}"

    def to_json(self) -> dict[str, Any]:
        """What the evaluations table keeps of the instance (no speaker identity: the log has it)."""
        return {
            "game": self.game,
            "category": self.category,
            "candidates": list(self.candidates),
            "secret": self.secret,
            "message": self.message,
            "role": self.role,
            "bluff": self.bluff,
            "seat": self.seat,
            "part": self.part,
        }


# --------------------------------------------------------------------------- the log, as read here


class SeatLike(Protocol):
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def user_key(self) -> str | None: ...
    @property
    def agent_spec(self) -> str | None: ...


class ActionLike(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def seat(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def value(self) -> list[str]: ...
    @property
    def source(self) -> str: ...
    @property
    def actor(self) -> str: ...


class EventLike(Protocol):
    @property
    def seq(self) -> int: ...
    @property
    def action_seq(self) -> int | None: ...
    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> dict[str, Any]: ...
    @property
    def audience(self) -> Any: ...


class GameRowLike(Protocol):
    @property
    def id(self) -> int | None: ...
    @property
    def game(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def config(self) -> dict[str, Any]: ...
    @property
    def seed(self) -> int | None: ...


class LogLike(Protocol):
    """``storage.store.GameLog`` (or anything shaped like it)."""

    @property
    def row(self) -> GameRowLike: ...
    @property
    def seats(self) -> Sequence[SeatLike]: ...
    @property
    def actions(self) -> Sequence[ActionLike]: ...
    @property
    def events(self) -> Sequence[EventLike]: ...


def speaker_of(a: ActionLike) -> tuple[str, str]:
    # The actor is who really spoke: an AI that took over a human's turn is an AI message.
    return a.actor, SpeakerKind.HUMAN.value if a.source == "human" else SpeakerKind.AI.value


def only_seat(audience: Any) -> int | None:
    return audience[0] if isinstance(audience, list) and len(audience) == 1 and isinstance(audience[0], int) else None


def walk(log: LogLike, on_event: Callable[[EventLike], None], on_action: Callable[[ActionLike], None]) -> None:
    """Feed events in order and call ``on_action`` for each action just before its first event.

    The state at an action is what the events logged before it say; an action
    is placed at its first caused event (``action_seq``), every action causing
    at least one event in all three engines.
    """
    by_seq = {a.seq: a for a in log.actions}
    seen: set[int] = set()
    for e in sorted(log.events, key=lambda e: e.seq):
        if e.action_seq is not None and e.action_seq not in seen:
            seen.add(e.action_seq)
            a = by_seq.get(e.action_seq)
            if a is not None:
                on_action(a)
        on_event(e)


# --------------------------------------------------------------------------- the standalone benchmark


def bench_instances(cards: Sequence[tuple[str, Sequence[str]]], card_size: int) -> list[Instance]:
    """Every word of every card as the secret (the paper's 1,394 instances; here our own cards)."""
    return [
        Instance(game=BENCH_GAME, category=cat, candidates=tuple(words[:card_size]), secret=w, message="")
        for cat, words in cards
        for w in words[:card_size]
    ]

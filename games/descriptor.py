"""What a game declares to the rest of the system, in one typed value.

A game is a package ``games/<game>/`` whose ``__init__`` exposes ``DESCRIPTOR``, a
``GameDescriptor``; ``games.catalog`` lists the packages. Everything outside a game's
own files that needs to know something about a game (its title in a menu, its roles in
a leaderboard, which moves are clues to score, the labels of its metrics) reads it here
instead of comparing game names.

The shared vocabulary of outcomes lives here too, because descriptors name it:

- ``SeatRole`` and ``Side``: the roles and sides of the games shipped with Hushtable.
  A new game may declare its own ``StrEnum`` of roles and sides instead; every consumer
  reads roles and sides as ``StrEnum`` members, never as one closed list.
- ``SeatOutcome`` (one seat's part in one finished game) and ``Measured`` (a replayed
  finished game), which ``games.metrics`` builds and tournaments and ``stats`` read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from games.base import Game, Result

if TYPE_CHECKING:
    from games.record import Record


class SeatRole(StrEnum):
    """What a seat did in a game. In games whose roles rotate, the role of the whole game."""

    ENCODER = "encoder"
    DECODER = "decoder"
    INTERCEPTOR = "interceptor"
    TEAM_MEMBER = "team_member"  # Decrypto teams: encoder and decoder rotate every round
    VILLAGER = "villager"
    SPY = "spy"
    MR_WHITE = "mr_white"
    CHAMELEON = "chameleon"
    PLAYER = "player"  # Chameleon: a non-chameleon seat, or any seat of a match (the chameleon changes)


class Side(StrEnum):
    """Whose win a seat shares."""

    TEAM = "team"  # Decrypto benchmark: encoder and decoder
    INTERCEPTOR = "interceptor"
    TEAM_A = "team_a"
    TEAM_B = "team_b"
    VILLAGERS = "villagers"
    SPIES = "spies"
    MR_WHITE = "mr_white"
    CHAMELEON = "chameleon"
    PLAYERS = "players"  # Chameleon single round: everyone but the chameleon
    SELF = "self"  # Chameleon match: every seat plays for its own points


@dataclass(frozen=True)
class SeatOutcome:
    """One seat's part in one finished game. ``won`` is None for a draw. ``role`` and ``side`` are
    names: a game's own StrEnum members when read from a replay, their stored values when read back
    from a tournament's match (both compare and print alike)."""

    seat: int
    role: str
    side: str
    won: bool | None
    stats: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Measured:
    """A replayed finished game: what the metrics read."""

    game: str
    variant: str
    result: Result
    seats: tuple[SeatOutcome, ...]


SeatReader = Callable[["Record", str, Result], list[SeatOutcome]]
"""``(record, variant, result) -> outcome per seat``: roles, sides, wins and per-seat numbers."""

Summary = Callable[[Sequence[Measured]], dict[str, Any]]
"""The game's metrics over a set of measured games of one variant (``hushtable stats``)."""


class MetricScope(StrEnum):
    """Where a metric's number lives."""

    SEAT = "seat"  # ``SeatOutcome.stats``: one number per seat; leaderboards average it per role
    GAMES = "games"  # a number of the game's summary over a set of games
    ROLE_BLOCK = "role_block"  # a block of the summary: numbers over the seats of ``roles``


class ClueScoring(StrEnum):
    """What a clue is scored against (the game's clue module in ``models/eval/games/<id>.py``)."""

    ONE_SECRET = "one_secret"  # SNEAK's pair: allies who know one secret among candidates, an outsider who names it
    BOARD = "board"  # a clue points at several words of a board: utility and leakage over the board
    OUTCOME = "outcome"  # judged by what the table did with it: did the guesser find the word (Just One)
    NONE = "none"  # the game's clues are not scored


@dataclass(frozen=True, slots=True)
class SeatShape:
    """Roles that belong to seats instead of being dealt from the seed, and the sides those
    seats form (the Decrypto benchmark: seat 0 encodes and seat 1 decodes for one side, seat 2
    intercepts for the other). Tournament formats seat one entrant per side in such a variant
    (every ordered tuple of distinct entrants), or one per seat in the grid."""

    roles: tuple[StrEnum, ...]
    sides: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        seats = sorted(s for side in self.sides for s in side)
        if seats != list(range(len(self.roles))):
            raise ValueError("a seat shape's sides hold every seat exactly once")

    def describe(self) -> str:
        """The sides in words: "encoder + decoder vs interceptor"."""
        return " vs ".join(" + ".join(str(self.roles[s]) for s in side) for side in self.sides)


@dataclass(frozen=True, slots=True)
class DealFormat:
    """What ``deal_of`` returns and the ``deal`` option takes: its keys and a sentence on each
    (a deal may also be a list of such mappings, one per round, where the game says so)."""

    keys: tuple[str, ...]
    doc: str


@dataclass(frozen=True, slots=True)
class Golden:
    """A golden transcript: a seeded random game of this variant, seats and options, written to
    ``tests/games/golden/<id>-<variant>-seed<seed>.txt`` and compared on every test run."""

    variant: str
    seats: int
    seed: int
    options: tuple[tuple[str, object], ...] = ()

    def name(self, game: str) -> str:
        return f"{game}-{self.variant}-seed{self.seed}"


class SneakScoring(StrEnum):
    """When the clues of a finished chat game are scored and reported."""

    ALWAYS = "always"  # the game is SNEAK's own: every finished game gets its clue report
    ON_REQUEST = "on_request"  # only when the table asked for it
    NEVER = "never"  # the game has no clues


@dataclass(frozen=True, slots=True)
class Metric:
    """One number the game's metrics compute.

    ``roles`` are the roles whose seats the number describes (empty: every seat, or the
    game as a whole); ``short`` is its column on leaderboards (empty: not shown there).
    A ``ROLE_BLOCK``'s inner numbers are metrics of their own (scope ``GAMES``)."""

    key: str
    label: str
    scope: MetricScope
    roles: tuple[StrEnum, ...] = ()
    short: str = ""


@dataclass(frozen=True, slots=True)
class MenuEntry:
    """The game's line in the console's menu.

    ``order`` sorts the menu; ``seats`` is how many seats the console fills a new table
    to with AI players (0: the fewest the variant allows)."""

    order: int
    seats: int = 0


@dataclass(frozen=True, slots=True)
class GameDescriptor:
    """Everything the rest of the system needs to know about one game.

    - ``id``: the registry name, stored with every game (``GameRow.game``); ``aliases``
      are other names a person may type for it.
    - ``title``, ``blurb``: how menus and help name and describe it.
    - ``engine``: the rules (``games.base.Game``).
    - ``seats``: fewest and most seats over its variants (a config narrows it:
      ``engine.seat_range(cfg)``).
    - ``variants``: its variants, the default first (the engine's ``variants``).
    - ``roles``, ``sides``: every role and side its ``SeatOutcome``s can carry.
    - ``seat_shapes``: variants whose roles belong to seats rather than being dealt, with
      each seat's role and the sides (``SeatShape``); tournament formats plan those by side.
    - ``view``: the ``TypedDict`` of ``Observation.view`` (agents read it; the conformance
      suite checks every view has exactly its keys in every phase).
    - ``deal``: the deal's format (``deal_of`` and the ``deal`` option).
    - ``golden``: the seeded games whose transcripts are checked in.
    - ``metrics``: what ``games.metrics`` computes for it, with the roles each describes;
      ``read_seats`` and ``summarize`` compute them (None: ``games.metrics`` reads every
      seat as a ``PLAYER`` on its own ``SELF`` side and counts games only).
    - ``clue_kinds``: action kinds whose text is a clue (SNEAK scoring reads these);
      ``clue_scoring``: what a clue is scored against (one secret, a board, what the table did with it, nothing);
      ``sneak``: when a chat game's clue report is posted.
    - ``menu``: its console menu entry (None: not offered there).
    """

    id: str
    title: str
    blurb: str
    engine: Game
    seats: tuple[int, int]
    variants: tuple[StrEnum, ...]
    roles: tuple[StrEnum, ...]
    sides: tuple[StrEnum, ...]
    metrics: tuple[Metric, ...]
    read_seats: SeatReader | None = None
    summarize: Summary | None = None
    clue_kinds: frozenset[str] = frozenset()
    sneak: SneakScoring = SneakScoring.NEVER
    menu: MenuEntry | None = None
    aliases: tuple[str, ...] = ()
    seat_shapes: Mapping[str, SeatShape] = field(default_factory=dict)
    clue_scoring: ClueScoring = ClueScoring.NONE
    view: type | None = None
    deal: DealFormat | None = None
    golden: tuple[Golden, ...] = ()

    def metric(self, key: str) -> Metric | None:
        """The declared metric with this key, or None."""
        return next((m for m in self.metrics if m.key == key), None)

    def labels(self) -> dict[str, str]:
        """``{key: label}`` for the numbers of the game's summary (``hushtable stats``)."""
        out: dict[str, str] = {}
        for m in self.metrics:
            if m.scope is not MetricScope.SEAT:
                out.setdefault(m.key, m.label)
        return out

    def role_blocks(self) -> frozenset[str]:
        """Keys of the summary whose value is a block of numbers over one role's seats."""
        return frozenset(m.key for m in self.metrics if m.scope is MetricScope.ROLE_BLOCK)

    def leaderboard(self) -> tuple[Metric, ...]:
        """The per-seat numbers a leaderboard shows for this game (those with a column name), in order."""
        return tuple(m for m in self.metrics if m.scope is MetricScope.SEAT and m.short)

    def seat_shape(self, variant: str) -> SeatShape | None:
        """The roles and sides of the seats when this variant fixes roles to seats, else None."""
        return self.seat_shapes.get(str(variant))

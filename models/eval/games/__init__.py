"""Per-game SNEAK knowledge, found through a registry keyed by the game's id.

Each module in this package describes one game with a module-level ``SNEAK``:
a ``SneakGame`` (SNEAK's own pair: the engine's id and the function that maps a
logged game to its instances) or, where that pair does not fit the game's clues,
a ``ClueHook`` (the per-game scoring hook: the game's own report of one logged
game, e.g. Spymasters' clues scored on their board). Which moves are clues and
when the chat report is posted are the game's own descriptor's (``clue_kinds``,
``clue_scoring`` and ``sneak``). ``registry()`` asks
``models.parts`` for the clue module of every registered game (``games.catalog``)
and keys what it finds by game id; nothing else in the project names a game to
score it. Adding a game is one new file here (see "Adding an evaluator" in
docs/design.md).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING

from games.catalog import find, ids
from models.eval.instances import Instance, LogLike
from models.parts import Part, part

if TYPE_CHECKING:
    from models.eval.evaluators import Evaluator


@dataclass(frozen=True, slots=True)
class SneakGame:
    """What the SNEAK evaluation needs to know of one game."""

    game: str  # the engine's id (``games.get(game)``)
    instances: Callable[[LogLike], list[Instance]]  # pure: the log alone, seeded draws from the game's seed


@dataclass(frozen=True, slots=True)
class OwnReport:
    """A game's own clue report of one logged game: ``lines`` in chat words (seats as
    ``games.labels.seat_ref`` tokens, named by whoever shows them), ``clues`` how many clues it
    judged, ``numbers`` the game's headline numbers (0-100) for ``hushtable sneak score``."""

    clues: int
    lines: tuple[str, ...]
    numbers: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ClueHook:
    """The per-game scoring hook of a game whose clues SNEAK's one-secret pair does not fit
    (a clue among a board's words; a clue judged by what the table did with it): ``report``
    scores one logged game's clues with the evaluators it is handed (it may use none)."""

    game: str
    report: Callable[[LogLike, Sequence[Evaluator]], Awaitable[OwnReport]]


def _entries() -> dict[str, object]:
    found: dict[str, object] = {}
    for game_id in ids():
        desc = part(Part.CLUE, game_id)
        if isinstance(desc, (SneakGame, ClueHook)):
            if desc.game != game_id:
                raise ValueError(f"{Part.CLUE.path(game_id)} describes the game {desc.game!r}")
            found[game_id] = desc
    return found


@cache
def registry() -> Mapping[str, SneakGame]:
    """Every registered game's ``SNEAK`` entry of SNEAK's own kind, by game id (read once)."""
    return MappingProxyType({g: d for g, d in _entries().items() if isinstance(d, SneakGame)})


@cache
def hooks() -> Mapping[str, ClueHook]:
    """Every registered game whose clue module scores its clues its own way (``ClueHook``), by game id."""
    return MappingProxyType({g: d for g, d in _entries().items() if isinstance(d, ClueHook)})


def clue_kinds(game: str) -> frozenset[str]:
    """The action kinds that are clues in ``game``: its descriptor's ``clue_kinds``, read at each call (none
    for an unknown game). The mappers and hooks here read them, never a kind of their own."""
    desc = find(game)
    return desc.clue_kinds if desc is not None else frozenset()


def scored_games() -> tuple[str, ...]:
    """The ids of the games whose clues are scored."""
    return tuple(registry())


def instances_from_log(log: LogLike) -> list[Instance]:
    """Every SNEAK instance of one logged game, in the order the moves were made (none for an unknown game)."""
    desc = registry().get(log.row.game)
    return desc.instances(log) if desc is not None else []

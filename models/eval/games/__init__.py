"""Per-game SNEAK knowledge, found through a registry keyed by the game's id.

Each module in this package describes one game with a module-level ``SNEAK``
(a ``SneakGame``): the engine's id and the function that maps a logged game to
its instances (which moves are clues and when the chat report is posted are
the game's own descriptor's: ``clue_kinds`` and ``sneak``). ``registry()`` asks
``models.parts`` for the clue module of every registered game (``games.catalog``)
and keys what it finds by game id; nothing else in the project names a game to
score it. Adding a game is one new file here (see "Adding an evaluator" in
docs/design.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

from games.catalog import ids
from models.eval.instances import Instance, LogLike
from models.parts import Part, part


@dataclass(frozen=True, slots=True)
class SneakGame:
    """What the SNEAK evaluation needs to know of one game."""

    game: str  # the engine's id (``games.get(game)``)
    instances: Callable[[LogLike], list[Instance]]  # pure: the log alone, seeded draws from the game's seed


@cache
def registry() -> Mapping[str, SneakGame]:
    """Every registered game's ``SNEAK`` entry, by game id (read once)."""
    found: dict[str, SneakGame] = {}
    for game_id in ids():
        desc = part(Part.CLUE, game_id)
        if isinstance(desc, SneakGame):
            if desc.game != game_id:
                raise ValueError(f"{Part.CLUE.path(game_id)} describes the game {desc.game!r}")
            found[game_id] = desc
    return MappingProxyType(found)


def scored_games() -> tuple[str, ...]:
    """The ids of the games whose clues are scored."""
    return tuple(registry())


def instances_from_log(log: LogLike) -> list[Instance]:
    """Every SNEAK instance of one logged game, in the order the moves were made (none for an unknown game)."""
    desc = registry().get(log.row.game)
    return desc.instances(log) if desc is not None else []

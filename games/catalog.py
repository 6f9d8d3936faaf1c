"""The catalog of registered games: one line per game in ``GAME_PACKAGES``, looked up by id or alias.

(Not ``games.registry``: that name is the older ``games.registry()`` function, which a
submodule of the same name would hide.)

A game registers by adding its package to ``GAME_PACKAGES``; the package's ``__init__``
exposes ``DESCRIPTOR`` (a ``games.descriptor.GameDescriptor``). Packages are imported by
name when first asked for, so ``games.base`` and the shared modules stand alone and no
module of ours imports every game.
"""

from __future__ import annotations

from importlib import import_module

from games.base import Game
from games.descriptor import GameDescriptor

GAME_PACKAGES: tuple[str, ...] = (
    "games.decrypto",
    "games.spy",
    "games.chameleon",
    "games.spymasters",
    "games.justone",
)
"""Every registered game's package, in registration order (the console menu has its own order)."""


class UnknownGame(KeyError):
    """No registered game has this id or alias. ``str()`` is one sentence naming the choices."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown game"


def descriptors() -> tuple[GameDescriptor, ...]:
    """Every registered game's descriptor, in registration order."""
    out: list[GameDescriptor] = []
    for name in GAME_PACKAGES:
        d = import_module(name).DESCRIPTOR
        if not isinstance(d, GameDescriptor):
            raise TypeError(f"{name}.DESCRIPTOR is not a GameDescriptor")
        out.append(d)
    return tuple(out)


def ids() -> tuple[str, ...]:
    """Every registered game id, in registration order."""
    return tuple(d.id for d in descriptors())


def find(game_id: str) -> GameDescriptor | None:
    """The descriptor named by this id or alias (case-insensitive), or None."""
    key = game_id.lower()
    for d in descriptors():
        if key == d.id or key in d.aliases:
            return d
    return None


def descriptor(game_id: str) -> GameDescriptor:
    """The descriptor named by this id or alias; raises ``UnknownGame`` (a ``KeyError``)."""
    d = find(game_id)
    if d is None:
        raise UnknownGame(f"unknown game {game_id!r}; choose one of {', '.join(sorted(ids()))}")
    return d


def engine(game_id: str) -> Game:
    """The rules of the game named by this id or alias; raises ``UnknownGame``."""
    return descriptor(game_id).engine

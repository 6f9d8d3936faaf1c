"""Pure rule engines for Hushtable's games, and the registry that names them.

``games.catalog`` is the registry (descriptors by id); ``registry()`` and ``get()`` here
are its two oldest questions, kept for their many callers.
"""

from __future__ import annotations

from games.base import Game


def registry() -> dict[str, Game]:
    """Every registered game's rules by id. Imported lazily so ``games.base`` stands alone."""
    from games.catalog import descriptors

    return {d.id: d.engine for d in descriptors()}


def get(game_id: str) -> Game:
    """The rules of the game with this id or alias; raises ``KeyError`` naming the choices."""
    from games.catalog import engine

    return engine(game_id)

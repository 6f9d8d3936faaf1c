"""Pure rule engines for Hushtable's games, and the registry that names them."""

from __future__ import annotations

from games.base import Game


def registry() -> dict[str, Game]:
    """Every registered game by id. Imported lazily so ``games.base`` stands alone."""
    from games import chameleon, decrypto, spy

    return {g.id: g for g in (decrypto.GAME, spy.GAME, chameleon.GAME)}


def get(game_id: str) -> Game:
    games = registry()
    aliases = {"whoisspy": "spy", "who-is-spy": "spy", "undercover": "spy"}
    key = aliases.get(game_id.lower(), game_id.lower())
    if key not in games:
        raise KeyError(f"unknown game {game_id!r}; choose one of {', '.join(sorted(games))}")
    return games[key]

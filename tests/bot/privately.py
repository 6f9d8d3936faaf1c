"""Which members of a logged game the bot had something private for, for the platform tests' checks
that secrets and prompts went by direct message."""

from __future__ import annotations

import games
from storage.store import Store
from storage.tables import SeatKind, SeatRow


async def members_told_privately(store: Store, game_id: int) -> list[SeatRow]:
    """The member seats that hold a secret from the deal or that moved. A Spymasters guesser holds no
    secret, and the game may end before one is asked to guess: such a member rightly gets nothing."""
    glog = await store.load_game(game_id)
    engine = games.get(glog.row.game)
    assert glog.row.seed is not None
    dealt, _ = engine.new(engine.config_from_dict(glog.row.config), len(glog.seats), glog.row.seed)
    told = {seat for secret in engine.secrets(dealt) for seat in secret.known_by}
    told |= {a.seat for a in glog.actions if a.source == "human"}
    return [s for s in glog.seats if s.kind == SeatKind.HUMAN and s.seat in told]

"""A logged game as a replayable record: the one way from ``storage.records.GameLog`` to
``games.record.Record``.

Every reader of the log that replays a game goes through `record_of`: resuming a running
table (``bot.core.tables.rebuild``), reading finished games for ``stats``
(``bot.research.logbook``), rating tournament matches (``bot.tournaments.results``) and
checking a copied log (``bot.ops.verify``). A game that cannot become a record (an unknown
game, a config that no longer loads, a game never dealt) raises `RecordError` with a
sentence naming the game by id, never its content.
"""

from __future__ import annotations

import games
from games.base import Action, ConfigError
from games.record import Record, RecordError
from storage.records import GameLog


def record_of(log: GameLog) -> Record:
    """The game's engine, config, seat count, seed, actions (in seq order, ``lines`` holding their
    seqs) and stored result. Raises RecordError when it has none to replay."""
    row = log.row
    try:
        engine = games.get(row.game)
        cfg = engine.config_from_dict(row.config or {"variant": row.variant})
    except (KeyError, ConfigError, TypeError, ValueError) as exc:
        raise RecordError(0, f"game #{row.id}: cannot rebuild its config ({type(exc).__name__})") from None
    if row.seed is None:
        raise RecordError(0, f"game #{row.id} was never started")
    actions = tuple((a.seat, Action(a.kind, tuple(a.value))) for a in log.actions)
    return Record(engine, cfg, len(log.seats), int(row.seed), actions, row.result, tuple(a.seq for a in log.actions))

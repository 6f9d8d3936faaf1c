"""From logged games to rating inputs: a stored game becomes a ``games.record.Record``, its
seats' outcomes come from ``games.metrics.seat_outcomes`` (the engine decides roles and
winners on replay), and a tournament's finished matches become ``MatchResult``s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import games
from bot.tournaments.ratings import MatchResult
from games.base import Action
from games.metrics import SeatOutcome, seat_outcomes
from games.record import Record
from storage import tournaments as repo
from storage.store import GameLog, Store
from storage.tables import MatchStatus, TournamentMatchRow


def record_of(glog: GameLog) -> Record:
    """The game as a record, rebuilt from its logged config, seed and actions."""
    row = glog.row
    engine = games.get(row.game)
    cfg = engine.config_from_dict(row.config)
    actions = tuple((a.seat, Action(a.kind, tuple(a.value))) for a in glog.actions)
    return Record(engine, cfg, len(glog.seats), int(row.seed or 0), actions, row.result)


def outcomes_of(glog: GameLog) -> list[SeatOutcome]:
    return seat_outcomes(record_of(glog))


async def match_results(store: Store, tournament_id: int) -> list[MatchResult]:
    """Every finished match of the tournament, in match order."""
    rows = [m for m in await repo.matches(store, tournament_id) if m.status == MatchStatus.FINISHED and m.game_id]
    return [await match_result(store, m) for m in rows]


async def match_result(store: Store, m: TournamentMatchRow) -> MatchResult:
    assert m.game_id is not None
    glog = await store.load_game(m.game_id)
    return MatchResult(tuple(m.seats), tuple(outcomes_of(glog)), m.deal_group, m.game_id)


async def clue_scores(store: Store, game_ids: Sequence[int]) -> Mapping[tuple[int, int], float]:
    """Mean SNEAK SoftScore per (game, seat) where evaluations exist.

    The evaluation issue's repository (storage/evaluations.py) is not merged on this branch
    yet: until it is, there are no scores and the leaderboard leaves the column out.
    """
    return {}

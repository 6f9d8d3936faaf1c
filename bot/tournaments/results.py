"""From logged games to rating inputs: a stored game becomes a ``games.record.Record``, its
seats' outcomes come from ``games.metrics.seat_outcomes`` (the engine decides roles and
winners on replay), and a tournament's finished matches become ``MatchResult``s."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean

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
    """Mean SNEAK SoftScore of each seat's clues, per (game id, seat), where evaluations exist
    (``storage.evaluations``, issue 11): the mean per evaluator first, then over evaluators,
    as the SNEAK paper reports its metrics. Failed judgements (no score) are left out."""
    from storage.evaluations import evaluations

    rows = [r for r in await evaluations(store, game_ids=game_ids) if r.soft is not None]
    if not rows:
        return {}
    seats: dict[tuple[int, int], int] = {}
    for gid in sorted({r.game_id for r in rows}):
        for a in (await store.load_game(gid)).actions:
            seats[(gid, a.seq)] = a.seat
    per: dict[tuple[int, int], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        seat = seats.get((r.game_id, r.action_seq))
        if seat is not None and r.soft is not None:
            per[(r.game_id, seat)][r.evaluator].append(float(r.soft))
    return {key: fmean(fmean(v) for v in by_eval.values()) for key, by_eval in per.items()}

"""From logged games to rating inputs: a stored game becomes a ``games.record.Record``, its
seats' outcomes come from ``games.metrics.seat_outcomes`` (the engine decides roles and
winners on replay), and a tournament's finished matches become ``MatchResult``s."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Protocol

from bot.core.replays import record_of
from bot.tournaments.ratings import MatchResult
from games.metrics import SeatOutcome, seat_outcomes
from storage import tournaments as repo
from storage.ports import GameReader, UnitsOfWork
from storage.records import GameLog
from storage.tables import MatchStatus, TournamentMatchRow


class MatchSource(UnitsOfWork, GameReader, Protocol):
    """What rating a tournament reads: its matches (through the units of work) and their games."""


def outcomes_of(glog: GameLog) -> list[SeatOutcome]:
    return seat_outcomes(record_of(glog))


async def match_results(store: MatchSource, tournament_id: int) -> list[MatchResult]:
    """Every finished match of the tournament, in match order."""
    rows = [m for m in await repo.matches(store, tournament_id) if m.status == MatchStatus.FINISHED and m.game_id]
    return [await match_result(store, m) for m in rows]


async def match_result(store: GameReader, m: TournamentMatchRow) -> MatchResult:
    assert m.game_id is not None
    glog = await store.load_game(m.game_id)
    return MatchResult(tuple(m.seats), tuple(outcomes_of(glog)), m.deal_group, m.game_id)


async def clue_scores(store: MatchSource, game_ids: Sequence[int], *, bluff: bool = False
                      ) -> Mapping[tuple[int, int], float]:
    """Mean SNEAK SoftScore of each seat's clues, per (game id, seat), where evaluations exist
    (``storage.evaluations``): the mean per evaluator first, then over evaluators,
    as the SNEAK paper reports its metrics. Failed judgements (no score) are left out. Informed
    clues only, or with ``bluff`` only the clues given without the secret (the chameleon's, Mr.
    White's): a bluff's score is not a clue-giver's SoftScore and is never averaged with one."""
    from storage.evaluations import evaluations

    rows = [r for r in await evaluations(store, game_ids=game_ids)
            if r.soft is not None and bool(r.instance.get("bluff")) is bluff]
    if not rows:
        return {}
    actors = await store.actors(r.game_id for r in rows)
    per: dict[tuple[int, int], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        actor = actors.get((r.game_id, r.action_seq))
        if actor is not None and r.soft is not None:
            per[(r.game_id, actor.seat)][r.evaluator].append(float(r.soft))
    return {key: fmean(fmean(v) for v in by_eval.values()) for key, by_eval in per.items()}

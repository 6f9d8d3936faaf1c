"""From logged games to rating inputs: a stored game becomes a ``games.record.Record``, its
seats' outcomes come from ``games.metrics.seat_outcomes`` (the engine decides roles and
winners on replay), and a tournament's finished matches become ``MatchResult``s.

A match's outcomes are computed once, when its game ends, and stored with the match's finish
(``outcome_rows``); standings read them back (``match_results``) instead of replaying every
game. Only a match finished before outcomes were stored, or an explicit refit, replays."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean
from typing import Any, Protocol

from bot.core.replays import record_of
from bot.tournaments.ratings import MatchResult
from games.metrics import SeatOutcome, seat_outcomes
from games.record import Record
from storage import tournaments as repo
from storage.ports import GameReader, UnitsOfWork
from storage.records import GameLog
from storage.tables import MatchStatus, TournamentMatchRow


class MatchSource(UnitsOfWork, GameReader, Protocol):
    """What rating a tournament reads: its matches (through the units of work) and their games."""


def outcomes_of(glog: GameLog) -> list[SeatOutcome]:
    return seat_outcomes(record_of(glog))


def outcomes_of_record(record: Record) -> list[SeatOutcome]:
    """The seats' outcomes of a finished table's record (``bot.core.finished.FinishedTable``)."""
    return seat_outcomes(record)


def outcome_rows(outcomes: Sequence[SeatOutcome]) -> list[dict[str, Any]]:
    """Seat outcomes as JSON rows (a NaN number, which JSON cannot hold, as null)."""
    return [{"seat": o.seat, "role": str(o.role), "side": str(o.side), "won": o.won,
             "stats": {k: None if math.isnan(v) else v for k, v in o.stats.items()}} for o in outcomes]


def seat_outcomes_of(rows: Sequence[Mapping[str, Any]]) -> list[SeatOutcome]:
    """The stored rows of ``outcome_rows`` as seat outcomes again."""
    return [SeatOutcome(int(r["seat"]), str(r["role"]), str(r["side"]),
                        None if r["won"] is None else bool(r["won"]),
                        {k: math.nan if v is None else float(v) for k, v in dict(r.get("stats") or {}).items()})
            for r in rows]


async def match_results(store: MatchSource, tournament_id: int, *, replay: bool = False,
                        matches: Sequence[TournamentMatchRow] | None = None) -> list[MatchResult]:
    """Every finished match of the tournament, in match order, from the outcomes stored with each
    (``matches``: the tournament's rows when the caller just read them). ``replay``: from the
    logged games instead (a refit after the games' seat readers changed)."""
    rows = [m for m in (matches if matches is not None else await repo.matches(store, tournament_id))
            if m.status == MatchStatus.FINISHED and m.game_id]
    return [await match_result(store, m, replay=replay) for m in rows]


async def match_result(store: GameReader, m: TournamentMatchRow, *, replay: bool = False) -> MatchResult:
    """One finished match's result: its stored outcomes, or (stored before there were any, or
    ``replay``) the outcomes of its replayed game."""
    assert m.game_id is not None
    if m.outcomes is not None and not replay:
        outcomes = seat_outcomes_of(m.outcomes)
    else:
        outcomes = outcomes_of(await store.load_game(m.game_id))
    return MatchResult(tuple(m.seats), tuple(outcomes), m.deal_group, m.game_id)


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

"""The SNEAK SoftScore beside the rating: stored evaluations of a seat's clues (the evaluations
repository) become the mean per evaluator, then over evaluators, for that entrant and role."""

from __future__ import annotations

from pathlib import Path

from bot.tournaments import manage
from bot.tournaments.results import clue_scores, match_results
from bot.tournaments.runner import TournamentRunner
from storage.evaluations import EvaluationRecord, save_evaluations
from tests.tournaments.agents import open_service, spec


def _eval(gid: int, seq: int, evaluator: str, soft: float | None, bluff: bool = False) -> EvaluationRecord:
    return EvaluationRecord(gid, seq, 0, "chameleon", evaluator, "s", {}, {"bluff": bluff}, [], 0, None, None, None, None,
                            soft, None)


async def test_softscore_of_an_entrants_clues(tmp_path: Path) -> None:
    async with open_service(f"sqlite+aiosqlite:///{tmp_path / 't.db'}") as b:
        store = b.service.store
        tid = await manage.create(b.service, "console", spec(game="chameleon", variant="classic",
                                  entrants=["random", "random:b"], seats=3, seed=2))
        await TournamentRunner(b.service, rounds=10).run(tid)
        m = (await match_results(store, tid))[0]
        assert m.game_id is not None
        clues = [a for a in (await store.load_game(m.game_id)).actions if a.kind == "clue"]
        first, second = clues[0], clues[1]
        await save_evaluations(store, [_eval(m.game_id, first.seq, "e1", 0.2), _eval(m.game_id, first.seq, "e2", 0.6),
                                       _eval(m.game_id, second.seq, "e1", 0.9), _eval(m.game_id, second.seq, "e2", None)])
        third = clues[2]
        await save_evaluations(store, [_eval(m.game_id, third.seq, "e1", 0.1, bluff=True)])
        scores = await clue_scores(store, [m.game_id])
        assert scores == {(m.game_id, first.seat): 0.4, (m.game_id, second.seat): 0.9}  # the bluff is not in it
        assert await clue_scores(store, [m.game_id], bluff=True) == {(m.game_id, third.seat): 0.1}
        rows = await TournamentRunner(b.service, rounds=10).save_standings(
            await manage.get(b.service, "console", tid), await match_results(store, tid))
        entrant = m.entrants[first.seat]
        role = str(m.seats[first.seat].role)
        (row,) = [r for r in rows if r.entrant == entrant]
        assert "sneak_softscore" in row.roles[role]

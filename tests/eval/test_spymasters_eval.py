"""Spymasters clues scored on their board: the metric on hand-made distributions, clues read
from a logged game (real SQLite store), and a real evaluator (MiniLM embeddings) telling a
good clue from a dangerous one."""

from __future__ import annotations

import pytest

from games.base import normalize
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.games import instances_from_log, registry
from models.eval.games.spymasters import BoardClue, board_clues, board_scores, score_clues
from models.worker.embedding_backend import embedder_for
from storage.store import Store
from tests.eval.logging_helpers import log_random_game

BOARD = ("apple", "banana", "cherry", "piano", "violin", "snow")
CLUE = BoardClue(clue="fruit", number=3, team="red", board=BOARD, team_words=BOARD[:3],
                 opponent_words=("piano", "violin"), assassin=("snow",))


def test_utility_and_leakage_from_a_distribution_over_the_board() -> None:
    on_team = board_scores([1 / 3, 1 / 3, 1 / 3, 0, 0, 0], CLUE)
    assert (on_team.utility, on_team.leakage, on_team.soft) == (pytest.approx(1.0), 0.0, pytest.approx(1.0))  # type: ignore[comparison-overlap]  # approx's stub type
    uniform = board_scores([1 / 6] * 6, CLUE)
    assert uniform.utility == pytest.approx(0.0, abs=1e-9) and uniform.leakage == pytest.approx(0.0, abs=1e-9)
    deadly = board_scores([0, 0, 0, 0, 0, 1], CLUE)
    assert (deadly.utility, deadly.leakage, deadly.assassin, deadly.soft) == (0.0, 1.0, 1.0, 0.0)
    half = board_scores([0.25, 0.25, 0, 0.5, 0, 0], CLUE)
    assert half.utility == pytest.approx(0.0) and half.leakage == pytest.approx((0.5 - 0.5) / 0.5)
    with pytest.raises(ValueError, match="6 words"):
        board_scores([1.0], CLUE)


async def test_clues_come_from_the_log_with_the_board_as_it_stood(store: Store) -> None:
    gid, result = await log_random_game(store, "spymasters", "classic", 6, seed=3, humans=(0, 1))
    assert result is not None
    log = await store.load_game(gid)
    clues = board_clues(log)
    given = result.details["clue_instances"]  # the engine's own account of every clue
    assert [(c.clue, c.number, c.team, c.seat) for c in clues] == [(g["clue"], g["number"], g["team"], g["seat"]) for g in given]
    for c, g in zip(clues, given, strict=True):
        assert list(c.board) == g["board"] and list(c.team_words) == g["team_words"]
        assert list(c.opponent_words) == g["opponent_words"] and list(c.assassin) == g["assassin"]
        assert c.game_id == gid and c.speaker_kind == ("human" if c.seat in (0, 1) else "ai")
        action = next(a for a in log.actions if a.seq == c.action_seq)
        assert action.kind == "clue" and normalize(action.value[0]) == normalize(c.clue)
    assert board_clues(await store.load_game(gid)) == clues, "the same log gives the same clues"
    # The generic one-secret clue report leaves the game out (its clues are scored on the board here).
    assert "spymasters" not in registry() and instances_from_log(log) == []


async def test_an_embedding_evaluator_prefers_the_clue_that_points_at_the_team() -> None:
    ev = EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")
    danger = BoardClue(clue="winter", number=1, team="red", board=BOARD, team_words=BOARD[:3],
                       opponent_words=("piano", "violin"), assassin=("snow",))
    report = await score_clues([ev], [CLUE, danger])
    good, bad = report.per_clue["embed:minilm"]
    assert good is not None and bad is not None
    assert good.utility > bad.utility and good.soft > bad.soft
    assert bad.assassin > good.assassin and bad.leakage > good.leakage
    assert report.failures == {"embed:minilm": 0} and report.average == report.means["embed:minilm"]

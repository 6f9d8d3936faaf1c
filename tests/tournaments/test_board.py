"""Leaderboard rendering: the text table, the chart as a PNG, CSV and JSON of the same standings."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from bot.tournaments import board
from bot.tournaments.ratings import Standing
from storage.tables import TournamentRow

T = TournamentRow(id=3, tenant="console", name="nightly", game="decrypto", variant="benchmark", entrants=["a", "b"],
                  format="round_robin", seats=3, seed=1)
ROWS = [
    Standing(1, "a", 28.0, 6.0, 26.5, 29.0, 4, {"encoder": {"seats": 2, "win_rate": 1.0, "miscommunications": 0.5},
                                               "interceptor": {"seats": 2, "win_rate": float("nan")}}),
    Standing(2, "b", 22.0, 6.0, 21.0, 21.5, 4, {"interceptor": {"seats": 2, "win_rate": 0.0, "interceptions": 0.0}}),
]


def test_text_table_names_ranks_intervals_and_role_metrics() -> None:
    text = board.text_table(T, ROWS)
    assert "Tournament #3 nightly" in text and "95% of replays" in text and "bootstrap over deal groups" in text
    assert " 1  a" in text and "[ 26.5,  29.0]" in text and "encoder (2 games): win 100% · misc 0.50" in text
    assert "interceptor (2 games): win –" in text  # no decided game: a dash, not 'nan'


def test_chart_is_a_png_even_when_the_interval_misses_the_point() -> None:
    png = board.chart_png(T, ROWS)  # b's rating 22.0 lies above its interval [21.0, 21.5]
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000


def test_csv_and_json_carry_the_same_standings() -> None:
    rows = list(csv.DictReader(io.StringIO(board.to_csv(T, ROWS))))
    assert [(r["rank"], r["entrant"], r["rating"], r["lo"], r["hi"]) for r in rows] == \
        [("1", "a", "28.000", "26.500", "29.000"), ("2", "b", "22.000", "21.000", "21.500")]
    assert rows[0]["encoder.miscommunications"] == "0.5000" and rows[0]["interceptor.win_rate"] == ""
    doc = json.loads(board.to_json(T, ROWS))
    assert doc["tournament"]["id"] == 3 and doc["standings"][0]["roles"]["interceptor"]["win_rate"] is None


CHAM = TournamentRow(id=4, tenant="console", name="", game="chameleon", variant="classic", entrants=["a", "b"],
                     format="round_robin", seats=3, seed=1)
NAN = float("nan")
CHAM_ROWS = [
    Standing(1, "a", 26.0, 7.0, NAN, NAN, 3, {
        "chameleon": {"seats": 1, "win_rate": 0.0, "points": 0.0, "escapes": 0.0, "caught": 1.0, "sneak_bluff": 0.0},
        "player": {"seats": 2, "win_rate": 1.0, "points": 2.0, "escapes": 0.0, "caught": 0.0, "sneak_softscore": 42.0}}),
    Standing(2, "b", 24.0, 7.0, NAN, NAN, 3, {
        "player": {"seats": 3, "win_rate": 0.0, "points": 0.0, "escapes": 0.0, "caught": 0.0}}),
]


def test_roles_show_only_their_metrics_with_games_and_softscore_on_0_100() -> None:
    text = board.text_table(CHAM, CHAM_ROWS)
    # The chameleon's clues are bluffs: their score is shown apart and never called SoftScore.
    assert "chameleon (1 games): win 0% · pts 0.00 · escapes 0.00 · caught 1.00 · bluff score 0" in text
    assert "player (2 games): win 100% · pts 2.00 · SoftScore 42" in text
    assert "player (3 games): win 0% · pts 0.00" in text
    for line in text.splitlines():
        if line.strip().startswith("player"):
            assert "escapes" not in line and "caught" not in line


def test_without_enough_deal_groups_the_board_says_so() -> None:
    text = board.text_table(CHAM, CHAM_ROWS)
    assert "not enough games for an interval" in text and "nan" not in text.lower()
    rows = list(csv.DictReader(io.StringIO(board.to_csv(CHAM, CHAM_ROWS))))
    assert [(r["lo"], r["hi"]) for r in rows] == [("", ""), ("", "")]
    assert json.loads(board.to_json(CHAM, CHAM_ROWS))["standings"][0]["lo"] is None
    # Stored standings read back without intervals when fewer than five deal groups were played.
    from storage.tables import TournamentRatingRow

    stored = [TournamentRatingRow(tournament_id=4, entrant="a", game="chameleon", rank=1, mu=26.0, sigma=7.0, lo=26.0,
                                  hi=26.0, games=3, metrics={})]
    assert not board.standings_of(stored, groups=1)[0].has_interval
    assert board.standings_of(stored, groups=5)[0].has_interval


def test_the_chart_marks_zero_bars_and_counts_games() -> None:
    fig = board.chart_figure(CHAM, CHAM_ROWS)
    right = fig.axes[1]
    labels = [t.get_text() for t in right.texts]
    assert "0% (1)" in labels and "0% (3)" in labels and "100% (2)" in labels
    zero_marks = [ln for ln in right.lines if np.asarray(ln.get_xdata()).tolist() == [0]]
    assert len(zero_marks) == 2  # a's chameleon bar and b's player bar are 0: each gets a mark
    assert "not enough games for an interval" in fig.axes[0].get_xlabel()
    assert board.chart_png(CHAM, CHAM_ROWS).startswith(b"\x89PNG")


def test_a_leader_is_named_only_when_its_interval_is_clear_and_a_tie_is_said_as_a_tie() -> None:
    # a [26.5, 29.0] is clear of b [21.0, 21.5]: a leads.
    assert board.verdict(ROWS) == "Leader: a (its interval is clear of every other entrant's)."
    assert "Leader: a" in board.text_table(T, ROWS)
    overlapping = [ROWS[0], Standing(2, "b", 26.0, 6.0, 24.0, 27.0, 4, {})]
    text = board.text_table(T, overlapping)
    assert "Tied at the top: a, b (their intervals overlap" in text and "Leader" not in text
    assert board.verdict(CHAM_ROWS).startswith("No leader yet")


def test_one_uncertainty_is_shown_and_exported_the_interval_never_sigma() -> None:
    header = next(csv.reader(io.StringIO(board.to_csv(T, ROWS))))
    assert "sigma" not in header and {"lo", "hi"} <= set(header)
    doc = json.loads(board.to_json(T, ROWS))
    assert all("sigma" not in s for s in doc["standings"]) and "bootstrap" in doc["interval"]


def test_roles_are_named_as_players_say_them() -> None:
    spy = TournamentRow(id=5, tenant="console", name="", game="spy", variant="classic", entrants=["a"],
                        format="round_robin", seats=5, seed=1)
    rows = [Standing(1, "a", 25.0, 7.0, NAN, NAN, 2, {"mr_white": {"seats": 1, "win_rate": 1.0},
                                                       "villager": {"seats": 1, "win_rate": 0.0}})]
    text = board.text_table(spy, rows)
    assert "Mr. White (1 games)" in text and "mr_white" not in text and "villager (1 games)" in text
    assert board.role_name("team_member") == "team member"


def test_the_game_count_of_a_new_tournament_is_explained() -> None:
    from types import SimpleNamespace

    from bot.tournaments.cli import why_games
    from bot.tournaments.formats import count_matches

    # The README's example: the Decrypto benchmark, the four default entrants, --games 2.
    t = SimpleNamespace(entrants=["strategist", "llm:plain", "embed:minilm", "random"], games_per_pairing=2,
                        game="decrypto", variant="benchmark", format="round_robin")
    n = count_matches("decrypto", "benchmark", 4, games_per_pairing=2)
    assert n == 24
    assert why_games(t, n) == ("why 24: 12 seatings (every ordered choice of 2 of the 4 entrants for the sides "
                               "encoder + decoder vs interceptor) x 2 repetitions (--games 2).")


def test_log_records_go_to_the_file_not_over_the_progress_bar(tmp_path, monkeypatch, capfd) -> None:
    import logging

    from bot.ops.masking import MASKER
    from bot.tournaments.cli import _logs_off_the_bar

    monkeypatch.setenv("HUSHTABLE_LOG_DIR", str(tmp_path / "logs"))
    root = logging.getLogger()
    before = list(root.handlers)
    try:
        path, counted = _logs_off_the_bar()
        logging.getLogger("bot.core.agents").warning("AI move timed out for seat %s", 2)
        logging.getLogger("bot.core.agents").info("a quiet line")
        assert counted.count == 1
        for h in root.handlers:
            h.flush()
        # As the file's handler masks it: a game another test left running in this process may hold a secret
        # such as "time", whose forms the log never shows.
        line = MASKER.mask("AI move timed out for seat 2")
        assert line in path.read_text(encoding="utf-8")
        out, err = capfd.readouterr()
        assert line not in out + err and "for seat 2" not in out + err
    finally:
        for h in list(root.handlers):
            if h not in before:
                root.removeHandler(h)
                h.close()
        for h in before:
            if h not in root.handlers:
                root.addHandler(h)

"""Leaderboard rendering: the text table, the chart as a PNG, CSV and JSON of the same standings."""

from __future__ import annotations

import csv
import io
import json

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
    assert "Tournament #3 nightly" in text and "95% bootstrap interval" in text
    assert " 1  a" in text and "[ 26.5,  29.0]" in text and "encoder (2): win 100% · misc 0.50" in text
    assert "interceptor (2): win –" in text  # no decided game: a dash, not 'nan'


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

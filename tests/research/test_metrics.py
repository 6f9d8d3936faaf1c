"""games.metrics on hand-built games whose metrics are counted by hand from the script."""

from __future__ import annotations

import json

import pytest

from games.metrics import GameNotOver, SeatRole, Side, game_metrics, seat_outcomes
from games.record import Record, parse, to_lines
from tests.research.builders import chameleon_round, decrypto_benchmark, decrypto_teams_draw, spy_game

# (decoder right?, interceptor right?) per turn
MISCOMMS_AT_4 = [(True, False), (False, False), (True, True), (False, False)]  # 2 miscomms, 1 interception
SURVIVED = [(True, False)] * 8  # the team wins
INTERCEPTED_AT_2 = [(True, True), (False, True)]  # 1 miscomm, 2 interceptions
BOTH_AT_2 = [(False, True), (False, True)]  # 2 and 2 on the same turn


def test_decrypto_benchmark_metrics_as_the_papers_table() -> None:
    recs = [decrypto_benchmark(t, seed=i) for i, t in enumerate([MISCOMMS_AT_4, SURVIVED, INTERCEPTED_AT_2, BOTH_AT_2])]
    m = game_metrics(recs)["decrypto"]["benchmark"]
    assert m["games"] == 4
    assert m["miscommunications"] == 2 + 0 + 1 + 2
    assert m["interceptions"] == 1 + 0 + 2 + 2
    assert (m["miscommunications_per_game"], m["interceptions_per_game"]) == (5 / 4, 5 / 4)
    assert m["team_win_rate"] == pytest.approx(1 / 4)
    assert m["mean_turns"] == pytest.approx((4 + 8 + 2 + 2) / 4)
    assert m["ended_by"] == {"interceptions": 1, "miscommunications": 1, "both": 1, "survived": 1}


def test_decrypto_seat_outcomes() -> None:
    lost = seat_outcomes(decrypto_benchmark(MISCOMMS_AT_4))
    assert [(o.seat, o.role, o.side, o.won) for o in lost] == [
        (0, SeatRole.ENCODER, Side.TEAM, False),
        (1, SeatRole.DECODER, Side.TEAM, False),
        (2, SeatRole.INTERCEPTOR, Side.INTERCEPTOR, True),
    ]
    assert lost[1].stats == {"turns": 4, "miscommunications": 2, "interceptions": 1}
    won = seat_outcomes(decrypto_benchmark(SURVIVED))
    assert [o.won for o in won] == [True, True, False]
    assert won[0].stats["turns"] == 8


def test_spy_metrics_as_the_papers_table() -> None:
    caught = spy_game([{"v0": "spy", "v1": "spy", "v2": "spy", "spy": "v0"}], seed=3)
    escaped = spy_game([{"v0": "v1", "v1": "v0", "v2": "v0", "spy": "v0"},  # v0 out (3 votes)
                        {"v1": "spy", "v2": "v1", "spy": "v1"}], seed=4)  # v1 out (2), spy got 1: two left
    m = game_metrics([caught, escaped])["spy"]["spygame"]
    assert m["games"] == 2
    assert m["spy_game_win_rate"] == pytest.approx(0.5)
    assert m["mean_rounds"] == pytest.approx((1 + 2) / 2)
    assert m["spy"] == {"seats": 2, "win_rate": 0.5, "rounds_survived": pytest.approx(1.5),
                        "votes_per_round": pytest.approx((3 + 0 + 1) / (1 + 2))}
    # villagers: caught game 3 winners, 1 round each, v0 got 1 vote; escaped game:
    # v0 out in round 1 (3 votes), v1 out in round 2 (1 + 2 votes), v2 survives 2 rounds (0 votes)
    assert m["villager"] == {"seats": 6, "win_rate": 0.5, "rounds_survived": pytest.approx((3 + 1 + 2 + 2) / 6),
                             "votes_per_round": pytest.approx((1 + 3 + 3) / (3 + 1 + 2 + 2))}


def test_spy_seat_outcomes() -> None:
    rec = spy_game([{"v0": "spy", "v1": "spy", "v2": "spy", "spy": "v0"}], seed=3)
    outs = seat_outcomes(rec)
    spy = next(o for o in outs if o.role is SeatRole.SPY)
    assert (spy.side, spy.won) == (Side.SPIES, False)
    assert spy.stats["votes_received"] == 3 and spy.stats["rounds_survived"] == 1 and spy.stats["eliminated"] == 1
    assert [o.won for o in outs if o.role is SeatRole.VILLAGER] == [True, True, True]


def test_chameleon_metrics() -> None:
    escaped = chameleon_round({"c": "p0", "p0": "p1", "p1": "p0", "p2": "p0"}, seed=1)  # p0 accused
    guessed = chameleon_round({"c": "p0", "p0": "c", "p1": "c", "p2": "c"}, guess_right=True, seed=2)
    caught = chameleon_round({"c": "p1", "p0": "c", "p1": "c", "p2": "p0"}, guess_right=False, seed=3)
    m = game_metrics([escaped, guessed, caught])["chameleon"]["classic"]
    assert m["games"] == 3 and m["rounds"] == 3
    assert m["catch_rate"] == pytest.approx(2 / 3)
    assert m["escape_rate"] == pytest.approx(2 / 3)
    assert m["guessed_when_caught"] == pytest.approx(1 / 2)
    assert m["outcomes"] == {"escaped": 1, "guessed": 1, "caught": 1}
    assert m["chameleon_points_per_round"] == pytest.approx((2 + 1 + 0) / 3)
    assert m["player_points_per_round"] == pytest.approx((0 + 0 + 2 * 3) / 9)
    outs = seat_outcomes(caught)
    cham = next(o for o in outs if o.role is SeatRole.CHAMELEON)
    assert (cham.side, cham.won, cham.stats["caught"], cham.stats["votes_received"]) == (Side.CHAMELEON, False, 1, 2)
    assert all(o.won and o.side is Side.PLAYERS and o.stats["points"] == 2 for o in outs if o is not cham)


def test_a_draw_has_no_winner_and_an_unfinished_game_no_outcome() -> None:
    draw = decrypto_teams_draw()
    outs = seat_outcomes(draw)
    assert [(o.side, o.won) for o in outs] == [(Side.TEAM_A, None), (Side.TEAM_B, None)] * 2
    assert outs[0].stats == {"rounds": 8, "miscommunications": 0, "interceptions": 0, "encoded": 4, "decoded": 4}
    m = game_metrics([draw])["decrypto"]["teams"]
    assert (m["games"], m["draw_rate"], m["mean_rounds"], m["ended_by"]["tie"]) == (1, 1.0, 8, 1)
    assert m["win_rate"] == {"A": 0.0, "B": 0.0}
    rec = decrypto_benchmark(MISCOMMS_AT_4)
    with pytest.raises(GameNotOver):
        seat_outcomes(Record(rec.game, rec.config, 3, rec.seed, rec.actions[:5], None))


def test_parsed_records_measure_the_same() -> None:
    rec = decrypto_benchmark(INTERCEPTED_AT_2)
    lines = [json.dumps(x) for x in to_lines(rec.game, rec.config, 3, rec.seed, rec.actions, [], None)]
    assert game_metrics([parse(lines)]) == game_metrics([rec])

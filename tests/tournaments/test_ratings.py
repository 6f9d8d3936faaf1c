"""Ratings on hand-made results: a dominant entrant rises, ties stay level, teams share results,
the bootstrap is deterministic for a seed and its intervals shrink with more games."""

from __future__ import annotations

from statistics import fmean

from bot.tournaments.ratings import (
    MIN_GROUPS,
    MatchResult,
    OnlineFit,
    Standing,
    bootstrap,
    fit,
    fit_orders,
    role_metrics,
    standings,
    summary,
)
from games.metrics import SeatOutcome, SeatRole, Side


def mean_width(rows: list[Standing]) -> float:
    """The mean interval width of a leaderboard: how sure it is."""
    return fmean(r.width for r in rows if r.has_interval)


def bench(team: str, interceptor: str, team_won: bool, group: int = 0, turns: float = 8.0) -> MatchResult:
    stats = {"turns": turns, "miscommunications": 0.0 if team_won else 2.0, "interceptions": 0.0}
    seats = (
        SeatOutcome(0, SeatRole.ENCODER, Side.TEAM, team_won, stats),
        SeatOutcome(1, SeatRole.DECODER, Side.TEAM, team_won, stats),
        SeatOutcome(2, SeatRole.INTERCEPTOR, Side.INTERCEPTOR, not team_won, stats),
    )
    return MatchResult((team, team, interceptor), seats, group)


def spy(entrants: tuple[str, ...], spies: set[int], spies_won: bool | None, group: int = 0) -> MatchResult:
    seats = tuple(
        SeatOutcome(i, SeatRole.SPY if i in spies else SeatRole.VILLAGER, Side.SPIES if i in spies else Side.VILLAGERS,
                    None if spies_won is None else (spies_won if i in spies else not spies_won),
                    {"rounds_survived": 2.0})
        for i in range(len(entrants))
    )
    return MatchResult(entrants, seats, group)


def test_a_dominant_entrant_rises_and_its_interval_clears_the_rest() -> None:
    # "strong" wins every game, as the team and as the interceptor, against "weak"; "mid" wins three games in four against "weak".
    matches = []
    for g in range(12):
        matches += [bench("strong", "weak", True, g), bench("weak", "strong", False, g)]
        matches += [bench("mid", "weak", g % 4 != 0, 100 + g), bench("weak", "mid", g % 4 == 0, 100 + g)]
    rows = standings(matches, ["strong", "mid", "weak"], rounds=200, seed=1)
    assert [r.entrant for r in rows] == ["strong", "mid", "weak"]
    strong, mid, weak = rows
    assert strong.mu > 25 > weak.mu and strong.lo > weak.hi
    assert strong.lo <= strong.mu <= strong.hi and strong.games == 24
    assert strong.roles["encoder"]["win_rate"] == 1.0 and strong.roles["interceptor"]["win_rate"] == 1.0
    # weak intercepts mid in 3 games of its 24 as interceptor; its team loses 21 of 24 (2 tokens each).
    assert weak.roles["interceptor"]["win_rate"] == 3 / 24 and weak.roles["decoder"]["miscommunications"] == 2 * 21 / 24


def test_draws_leave_equal_entrants_level_and_more_certain() -> None:
    matches = [spy(("a", "b", "a", "b"), {i % 4}, None, i) for i in range(8)]
    r = fit(matches, ["a", "b"])
    assert abs(r["a"].mu - r["b"].mu) < 1e-9
    assert r["a"].sigma < 25 / 3 and r["b"].sigma < 25 / 3
    assert role_metrics(matches)["a"]["villager"]["win_rate"] != role_metrics(matches)["a"]["villager"]["win_rate"]  # nan: no decided game


def test_teams_share_the_result_and_an_entrant_on_both_sides_partly_cancels() -> None:
    # Villagers a, a, b beat spy c: a gains from two seats, b from one, c loses.
    r = fit([spy(("a", "a", "b", "c"), {3}, False)], ["a", "b", "c"])
    assert r["a"].mu > r["b"].mu > 25 > r["c"].mu
    # a holds a winning villager seat and the losing spy seat: less than b's single winning seat.
    r2 = fit([spy(("a", "b", "c", "a"), {3}, False)], ["a", "b", "c"])
    assert r2["b"].mu > r2["a"].mu and r2["c"].mu > 25


def test_bootstrap_is_deterministic_for_a_seed_and_narrows_with_more_games() -> None:
    few = [bench("x", "y", i % 3 != 0, i) for i in range(6)] + [bench("y", "x", i % 3 == 0, i) for i in range(6)]
    many = [bench("x", "y", i % 3 != 0, i) for i in range(60)] + [bench("y", "x", i % 3 == 0, i) for i in range(60)]
    assert bootstrap(few, rounds=100, seed=5) == bootstrap(few, rounds=100, seed=5)
    assert bootstrap(few, rounds=100, seed=5) != bootstrap(few, rounds=100, seed=6)
    assert mean_width(standings(many, rounds=100, seed=5)) < mean_width(standings(few, rounds=100, seed=5))


def test_no_games_means_the_prior_and_no_interval() -> None:
    rows = standings([], ["a", "b"], rounds=10)
    assert [(r.entrant, r.mu, r.games, r.has_interval) for r in rows] == [("a", 25.0, 0, False), ("b", 25.0, 0, False)]


def test_the_bootstrap_refuses_an_interval_from_too_few_deal_groups() -> None:
    one_group = [bench("x", "y", i % 3 != 0, 0) for i in range(6)] + [bench("y", "x", i % 3 == 0, 0) for i in range(6)]
    assert all(lo != lo and hi != hi for lo, hi in bootstrap(one_group, rounds=100, seed=5).values())
    four = [bench("x", "y", i % 2 == 0, i) for i in range(MIN_GROUPS - 1)]
    assert all(lo != lo for lo, _ in bootstrap(four, rounds=100, seed=5).values())
    five = [bench("x", "y", i % 2 == 0, i) for i in range(MIN_GROUPS)]
    ci = bootstrap(five, rounds=100, seed=5)
    assert all(lo == lo and lo <= hi for lo, hi in ci.values())
    rows = standings(one_group, rounds=100, seed=5)
    assert not any(r.has_interval for r in rows) and all(r.mu == r.mu for r in rows)
    assert summary(rows)[0]["lo"] is None and summary(rows)[0]["hi"] is None


def test_softscore_is_on_the_0_100_scale() -> None:
    m = bench("x", "y", True, 0)
    m = MatchResult(m.entrants, m.seats, 0, game_id=7)
    metrics = role_metrics([m], {(7, 0): 0.42}, bluff_scores={(7, 2): 0.3})
    assert metrics["x"]["encoder"]["sneak_softscore"] == 42.0 and "sneak_bluff" not in metrics["x"]["encoder"]
    assert [r.get("sneak_bluff") for r in metrics["y"].values()] == [30.0]  # apart, never averaged in


def test_the_point_estimate_does_not_depend_on_the_order_games_were_logged() -> None:
    games = [bench("x", "y", i % 3 != 0, i) for i in range(9)] + [bench("y", "x", i % 2 == 0, 50 + i) for i in range(9)]
    a = fit_orders(games, seed=3)
    b = fit_orders(list(reversed(games)), seed=3)
    assert all(abs(a[e].mu - b[e].mu) < 1e-9 for e in ("x", "y"))
    once = fit(games)
    assert abs(once["x"].mu - fit(list(reversed(games)))["x"].mu) > 1e-6  # a single online pass does depend on it


def test_the_running_rating_says_who_is_ahead_after_each_game_as_a_refit_would() -> None:
    games = [bench("y", "x", i % 4 == 0, i) for i in range(12)]
    online = OnlineFit(["x", "y", "z"])
    assert online.ahead() is None  # before any game nobody is ahead (all hold the prior)
    for n, m in enumerate(games, 1):
        online.add(m)
        refit = fit(games[:n], ["x", "y", "z"])
        assert online.ratings() == refit and online.games == n
        assert online.ahead() == max(refit, key=lambda e: (refit[e].mu, e))
    assert online.ahead() == "x" and online.ratings()["z"] == fit([], ["z"])["z"]  # no games: the prior

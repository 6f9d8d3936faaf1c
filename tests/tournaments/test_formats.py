"""Formats balance seats and roles: counted over the planned matches, roles read from real deals."""

from __future__ import annotations

from collections import Counter

import pytest

import games
from bot.tournaments.formats import Format, FormatError, MatchPlan, plan_matches
from games.metrics import seat_outcomes
from games.play import play_random
from games.record import Record

ENTRANTS = ["strategist", "embed:minilm", "random"]


def seat_counts(plans: list[MatchPlan]) -> Counter[tuple[str, int]]:
    """How often each entrant sat in each seat: the balance a round robin promises."""
    return Counter((entrant, seat) for p in plans for seat, entrant in enumerate(p.seats))


def _roles(game: str, variant: str, seats: int, seed: int) -> list[str]:
    """Who holds which role in this seed's deal: a random playthrough read by games.metrics."""
    engine = games.get(game)
    cfg = engine.make_config(variant)
    pt = play_random(engine, cfg, seats, seed)
    return [str(s.role) for s in seat_outcomes(Record(engine, cfg, seats, seed, tuple(pt.actions), None))]


def test_benchmark_round_robin_gives_every_entrant_every_role_equally() -> None:
    plans = plan_matches("decrypto", "benchmark", ENTRANTS, seats=3, games_per_pairing=2, duplicate=True, seed=1)
    assert len(plans) == 3 * 2 * 2  # 3 pairs, both ways round, twice
    roles = Counter((e, role) for p in plans for e, role in zip(p.seats, ("encoder", "decoder", "interceptor"),
                                                                strict=True))
    assert set(roles.values()) == {4} and len(roles) == 9  # (E-1) * games per pairing, for each of 3 roles
    # Duplicates: a pair and its swap share one deal; different pairs or repetitions do not.
    by_group: dict[int, list] = {}
    for p in plans:
        by_group.setdefault(p.deal_group, []).append(p)
    assert all(len(ms) == 2 and len({m.seed for m in ms}) == 1 for ms in by_group.values())
    a, b = by_group[0]
    assert (a.seats[0], a.seats[2]) == (b.seats[2], b.seats[0])
    assert len({ms[0].seed for ms in by_group.values()}) == len(by_group)


def test_without_duplicates_every_match_has_its_own_deal() -> None:
    plans = plan_matches("decrypto", "benchmark", ENTRANTS, seats=3, games_per_pairing=2, duplicate=False, seed=1)
    assert len(plans) == 12 and len({p.seed for p in plans}) == 12 and len({p.deal_group for p in plans}) == 12
    assert seat_counts(plans) == seat_counts(plan_matches("decrypto", "benchmark", ENTRANTS, seats=3,
                                                          games_per_pairing=2, duplicate=True, seed=1))


def test_grid_is_encoder_by_decoder_by_interceptor() -> None:
    plans = plan_matches("decrypto", "benchmark", ENTRANTS, seats=3, fmt=Format.GRID, seed=3)
    assert len(plans) == 27 and len({p.seats for p in plans}) == 27
    assert set(seat_counts(plans).values()) == {9}
    with pytest.raises(FormatError, match="grid"):
        plan_matches("spy", "classic", ENTRANTS, seats=4, fmt=Format.GRID)


@pytest.mark.parametrize(("game", "variant", "seats"), [("spy", "classic", 5), ("chameleon", "classic", 4),
                                                        ("decrypto", "teams", 4)])
def test_duplicate_deals_give_every_entrant_every_dealt_role_equally(game: str, variant: str, seats: int) -> None:
    plans = plan_matches(game, variant, ENTRANTS, seats=seats, games_per_pairing=3, duplicate=True, seed=11)
    assert len(plans) == 9 and len({p.deal_group for p in plans}) == 3
    counts = seat_counts(plans)
    assert set(counts.values()) == {3} and len(counts) == len(ENTRANTS) * seats  # every entrant in every seat, 3x
    roles: Counter[tuple[str, str]] = Counter()
    for p in plans:
        for entrant, role in zip(p.seats, _roles(game, variant, seats, p.seed), strict=True):
            roles[(entrant, role)] += 1
    for role in {r for _, r in roles}:
        assert len({roles[(e, role)] for e in ENTRANTS}) == 1, (role, roles)  # counted: equal for everyone


def test_bad_entrant_lists_are_refused() -> None:
    with pytest.raises(FormatError, match="once"):
        plan_matches("spy", "classic", ["random", "random"], seats=4)
    with pytest.raises(FormatError, match="at least one"):
        plan_matches("spy", "classic", [], seats=4)

"""The benches' shared statistics (bench/stats.py): the intervals and the power line every people bench prints."""

from __future__ import annotations

import pytest

from bench.stats import bootstrap, detectable, fmt_diff, fmt_share, wilson


def test_wilson_intervals_match_the_textbook_and_stay_inside_0_and_1() -> None:
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(10, 10)[1] == pytest.approx(1.0) and wilson(10, 10)[1] <= 1.0
    assert all(x != x for x in wilson(0, 0))  # no data: no interval (nan)
    assert fmt_share(0, 0) == "-" and fmt_share(22, 100).startswith(" 22% [")


def test_the_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0] * 50 + [1.0] * 10
    lo, hi = bootstrap(values)
    assert lo < sum(values) / len(values) < hi and bootstrap(values) == (lo, hi)
    assert bootstrap([0.25] * 30) == (0.25, 0.25)
    assert fmt_diff([]) == "-" and fmt_diff([0.1] * 20) == " +10 points [+10, +10]"


def test_the_power_line_is_the_smallest_difference_a_half_can_show() -> None:
    assert detectable(216) == pytest.approx(0.1235, abs=1e-3)  # the writers' whole Who-is-Spy half: 12 points
    assert detectable(40) == pytest.approx(0.287, abs=1e-3)  # the old 40-deal samples: 29 points
    assert detectable(4 * 216) < detectable(216) / 1.9
    assert detectable(100, 0.99) == detectable(100, 0.95)  # a share near 0 or 1 is read as 5% or 95%

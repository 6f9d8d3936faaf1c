"""The SNEAK metrics by hand: normalisation, clipping, BinaryScore, and averaging across evaluators."""

from __future__ import annotations

import pytest

from models.eval.metrics import Scores, across_evaluators, mean_scores, normalised, score


def test_normalised_is_zero_at_chance_one_at_certainty_and_clipped_below() -> None:
    assert normalised(1 / 6, 6) == pytest.approx(0.0)
    assert normalised(1.0, 6) == pytest.approx(1.0)
    assert normalised(0.5, 6) == pytest.approx((0.5 - 1 / 6) / (5 / 6))  # 0.4
    assert normalised(0.05, 6) == 0.0  # below chance: clipped, never negative
    assert normalised(0.0, 12) == 0.0
    with pytest.raises(ValueError):
        normalised(1.5, 6)


def test_score_by_hand() -> None:
    ally = [0.5, 0.1, 0.1, 0.1, 0.1, 0.1]  # |M| = 6, the real message is option 0
    cham = [0.25] + [0.75 / 11] * 11  # |W| = 12, the secret is option 0
    s = score(ally, 0, cham, 0)
    u = (0.5 - 1 / 6) / (1 - 1 / 6)
    lk = (0.25 - 1 / 12) / (1 - 1 / 12)
    assert s.utility == pytest.approx(u)
    assert s.leakage == pytest.approx(lk)
    assert s.soft == pytest.approx(u * (1 - lk))
    assert s.binary == 0.0  # the chameleon ranks the secret first
    assert score(ally, 0, [0.05, 0.5] + [0.45 / 10] * 10, 0).binary == 1.0
    assert score([0.1, 0.5, 0.1, 0.1, 0.1, 0.1], 0, [0.05, 0.5] + [0.45 / 10] * 10, 0) == Scores(0.0, 0.0, 0.0, 0.0)


def test_ties_count_as_first() -> None:
    assert score([0.5, 0.5], 0, [0.1, 0.9], 0).binary == 1.0  # ally tie: m is among the top
    assert score([1.0, 0.0], 0, [0.5, 0.5], 0).binary == 0.0  # chameleon tie: the secret is among the top


def test_table_9_ocean_salty_needs_per_evaluator_then_average() -> None:
    """Paper, Table 9: Body of Water / Ocean / Salty -> U 66.4, L 33.3, SS 33.1, BS 33.3 (three evaluators)."""
    # |M| = 6, |W| = 12. One evaluator is sure of both; one finds the message but not the secret; one neither.
    sure = score([1.0, 0, 0, 0, 0, 0], 0, [1.0] + [0.0] * 11, 0)
    found = score([0.9933, 0.0013, 0.0013, 0.0013, 0.0014, 0.0014], 0, [0.05, 0.5] + [0.045] * 10, 0)
    lost = score([0.0, 0.2, 0.2, 0.2, 0.2, 0.2], 0, [0.0] + [1 / 11] * 11, 0)
    per = {"a": [sure], "b": [found], "c": [lost]}
    avg = across_evaluators(per)["average"].x100()
    assert avg["utility"] == pytest.approx(66.4, abs=0.05)
    assert avg["leakage"] == pytest.approx(33.3, abs=0.05)
    assert avg["soft"] == pytest.approx(33.1, abs=0.05)
    assert avg["binary"] == pytest.approx(33.3, abs=0.05)
    # The product of the averages gives 44.3, which the paper does not report.
    means = mean_scores([sure, found, lost])
    wrong = 100 * means.utility * (1.0 - means.leakage)
    assert wrong == pytest.approx(44.3, abs=0.1)
    assert abs(wrong - avg["soft"]) > 10


def test_across_evaluators_averages_per_evaluator_means() -> None:
    a = [Scores(1.0, 0.0, 1.0, 1.0), Scores(0.0, 0.0, 0.0, 0.0)]  # evaluator a: mean U 0.5
    b = [Scores(0.2, 0.4, 0.12, 0.0)]
    out = across_evaluators({"a": a, "b": b})
    assert out["a"] == mean_scores(a)
    assert out["average"].utility == pytest.approx((0.5 + 0.2) / 2)  # evaluators weigh equally
    assert out["average"].soft == pytest.approx((0.5 + 0.12) / 2)

"""The SNEAK human study's numbers (the paper's Tables 6 and 7), checked against a hand computation.

Three ally items of six options, five annotations each; every number below is worked out by hand
in the comments from the votes and probabilities written here.
"""

from __future__ import annotations

import pytest

from models.eval.human import MEAN, Item, Task, fleiss_kappa, render, report, task_report

OPTS = tuple(f"m{i}" for i in range(6))


def _ally(key: str, gold: int, probs: tuple[float, ...]) -> Item:
    return Item(key, Task.ALLY, "Fruits", ("apple", "pear"), "apple", None, OPTS, gold, {"e": probs, "f": probs})


ITEMS = [
    _ally("A", 2, (0.1, 0.1, 0.5, 0.1, 0.1, 0.1)),
    _ally("B", 0, (0.4, 0.1, 0.1, 0.2, 0.1, 0.1)),
    _ally("C", 1, (0.3, 0.2, 0.1, 0.1, 0.2, 0.1)),
]
VOTES = {
    "A": [2, 2, 2, 1, 0],  # counts [1, 1, 3, 0, 0, 0]: plurality 2 (right), a strict majority (3 of 5)
    "B": [0, 3, 3, 0, 5],  # counts [2, 0, 0, 2, 0, 1]: 0 and 3 tied (the right one among them: 1/2)
    "C": [1, 1, 1, 1, 4],  # counts [0, 4, 0, 0, 1, 0]: plurality 1 (right), a strict majority
}


def test_table_6_worker_and_plurality_accuracy_and_fleiss_kappa() -> None:
    r = task_report(Task.ALLY, ITEMS, VOTES)
    assert r.items == 3 and r.complete == 3 and r.annotations == 15
    assert r.worker_accuracy == pytest.approx(9 / 15)  # 3 + 2 + 4 right annotations
    assert r.plurality_accuracy == pytest.approx((1 + 0.5 + 1) / 3)
    assert r.chance == pytest.approx(1 / 6)
    # Fleiss: P_A = (11-5)/20 = 0.3, P_B = (9-5)/20 = 0.2, P_C = (17-5)/20 = 0.6, mean 1.1/3;
    # column sums 3, 5, 3, 2, 1, 1 of 15: P_e = 49/225; kappa = (82.5/225 - 49/225) / (176/225) = 33.5/176.
    assert r.kappa == pytest.approx(33.5 / 176)
    assert fleiss_kappa([[5, 0], [5, 0]]) is None  # everyone on one option: no agreement beyond chance to measure
    assert fleiss_kappa([[1, 0]]) is None  # one annotation carries no agreement


def test_table_7_top1_strict_majority_and_correlation_per_evaluator_and_their_mean() -> None:
    r = task_report(Task.ALLY, ITEMS, VOTES)
    assert [a.evaluator for a in r.agreement] == ["e", "f", MEAN]
    for a in r.agreement:
        # Top-1 over the items with one plurality (A, C; B is tied): the evaluator's top is 2 on A (agrees) and
        # 0 on C (the people chose 1): 1 of 2. Both are strict majorities: 1 of 2.
        assert (a.top1, a.top1_items, a.strict, a.strict_items) == (0.5, 2, 0.5, 2)
        # r: human shares of the right option 0.6, 0.4, 0.8 against p = 0.5, 0.4, 0.2:
        # deviations (0, -0.2, 0.2) and (4, 1, -5)/30: r = -0.04 / sqrt(0.08 * 42/900) = -1.2 / sqrt(3.36).
        assert a.r == pytest.approx(-1.2 / 3.36 ** 0.5) and a.r_items == 3


def test_the_tasks_are_reported_apart_and_the_paper_beside_them() -> None:
    cham = Item("K", Task.CHAMELEON, "Fruits", tuple(f"w{i}" for i in range(12)), None, "red", tuple(f"w{i}" for i in range(12)),
                4, {"e": tuple([0.5] + [0.5 / 11] * 11)})
    reports = report([*ITEMS, cham], {**VOTES, "K": [4, 4, 0]})
    ally, chameleon = reports
    assert ally.items == 3 and chameleon.items == 1 and chameleon.complete == 0
    assert chameleon.chance == pytest.approx(1 / 12) and chameleon.worker_accuracy == pytest.approx(2 / 3)
    assert chameleon.agreement[0].top1 == 0.0  # the evaluator's top is w0; the people's is w4
    assert chameleon.agreement[0].r is None  # one item: no correlation
    text = render(reports)
    assert "Table 6" in text and "Table 7" in text and "[77.3%]" in text and "[0.27]" in text
    assert "60.0% [77.3%]" in text and "83.3% [88.9%]" in text

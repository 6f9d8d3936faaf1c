"""Debiased choice scoring on the tiny random llama, and on a copy of it built with a label bias.

The biased copy is a real transformers model: its output head gets a bias term
that adds a constant to the logit of the label token "A" (what position bias in
label scoring is: a preference for the first label whatever stands there).
"""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from typing import Any

import pytest
import torch

from models.scoring import ChoiceScores, Debias, default_render, score_choices, shifts
from models.types import Message
from models.worker.batcher import Batcher
from models.worker.transformers_backend import TransformersBackend

RULES = (
    "You are a careful judge in a word game. The secret word is known to you. "
    "Pick the clue that was most likely given by someone who knows the secret word."
)
OPTIONS = ("ocean wave", "desk lamp", "tiger stripe", "violin bow")
BIAS = 6.0


def chat(i: int) -> tuple[Message, ...]:
    secret = ["sea", "light", "cat", "music"][i % 4]
    return (Message("system", RULES), Message("user", f"Round {i}. Secret word: {secret}.\n{{options}}\nAnswer with one letter: {{labels}}."))


@pytest.fixture(scope="module")
def biased_model(tiny_model: Any, tiny_tokenizer: Any) -> Any:
    model = copy.deepcopy(tiny_model)
    old = model.lm_head
    head = torch.nn.Linear(old.in_features, old.out_features, bias=True)
    with torch.no_grad():
        head.weight.copy_(old.weight)
        head.bias.zero_()
        a_id = TransformersBackend(model, tiny_tokenizer, model_id="probe").label_token_ids(("A",))[0]
        head.bias[a_id] = BIAS
    model.lm_head = head
    return model.eval()


async def scores(model: Any, tok: Any, messages: Any, options: Any, **kw: Any) -> tuple[ChoiceScores, Batcher]:
    b = Batcher(TransformersBackend(model, tok, model_id="tiny", min_prefix_tokens=8), max_batch=8, max_wait_s=0.02)
    try:
        return await score_choices(b, messages, options, **kw), b
    finally:
        await b.aclose()


def test_cyclic_shifts_put_every_option_in_every_position() -> None:
    for n in (1, 2, 4, 7):
        rows = shifts(n)
        assert len(rows) == n
        for pos in range(n):
            assert sorted(r[pos] for r in rows) == list(range(n))
    capped = shifts(24, 4)
    assert len(capped) == 4 and [r[0] for r in capped] == [0, 6, 12, 18]


def test_default_render_fills_slots_or_appends() -> None:
    msgs = default_render(chat(0))(("A", "B"), ("x", "y"))
    assert "A) x\nB) y" in msgs[-1].content and "one letter: A, B." in msgs[-1].content
    plain = default_render((Message("user", "Which?"),))(("A", "B"), ("x", "y"))
    assert plain[-1].content.endswith("A) x\nB) y\nAnswer with one of: A, B.")


async def test_probabilities_come_back_in_the_callers_order(tiny_model: Any, tiny_tokenizer: Any) -> None:
    res, _ = await scores(tiny_model, tiny_tokenizer, chat(1), OPTIONS, debias=Debias.NONE)
    # One ordering, as given: the option at position k has the label k's probability.
    assert res.probs == pytest.approx(res.raw[0], abs=1e-6)
    swapped, _ = await scores(tiny_model, tiny_tokenizer, chat(1), OPTIONS, debias=Debias.NONE, order=(1, 0, 2, 3))
    assert swapped.orderings == ((1, 0, 2, 3),)
    assert sum(swapped.probs) == pytest.approx(1.0)


async def test_all_orderings_go_out_as_one_batch_over_one_shared_prefix(tiny_model: Any, tiny_tokenizer: Any) -> None:
    res, b = await scores(tiny_model, tiny_tokenizer, chat(2), OPTIONS, debias=Debias.CYCLIC_CALIBRATED)
    assert len(res.orderings) == 4 and res.prior is not None
    assert b.stats.batches["score"] == 1 and b.stats.requests["score"] == 5
    assert b.stats.cached_tokens > 0  # the rules were run once for the five prompts


async def test_a_built_in_label_bias_decides_plain_scoring_and_not_debiased(
    tiny_model: Any, tiny_tokenizer: Any, biased_model: Any
) -> None:
    plain_positions: Counter[int] = Counter()
    cyclic_positions: Counter[int] = Counter()
    for i, order in zip(range(8), itertools.permutations(range(4)), strict=False):
        order = tuple(order[(i % 4):] + order[: (i % 4)])
        plain, _ = await scores(biased_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.NONE, order=order)
        plain_positions[order.index(plain.best)] += 1
        cyc, _ = await scores(biased_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.CYCLIC, order=order)
        cyclic_positions[order.index(cyc.best)] += 1
        # Calibration cancels an additive label bias exactly: same answer as the unbiased model.
        cal_b, _ = await scores(biased_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.CALIBRATED, order=order)
        cal_u, _ = await scores(tiny_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.CALIBRATED, order=order)
        assert cal_b.probs == pytest.approx(cal_u.probs, abs=1e-4)
        both_b, _ = await scores(biased_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.CYCLIC_CALIBRATED, order=order)
        both_u, _ = await scores(tiny_model, tiny_tokenizer, chat(i), OPTIONS, debias=Debias.CYCLIC_CALIBRATED, order=order)
        assert both_b.probs == pytest.approx(both_u.probs, abs=1e-4)
        # The bias shows in the raw label probabilities, and no longer in the averaged ones.
        assert plain.raw[0][0] > 0.8 and max(cyc.probs) < 0.4
    assert plain_positions == Counter({0: 8}), "without debiasing the label bias picks position A every time"
    assert cyclic_positions[0] < 8, "averaged over shifts, the option in position A no longer always wins"


async def test_cyclic_scores_do_not_depend_on_which_rotation_came_first(biased_model: Any, tiny_tokenizer: Any) -> None:
    first, _ = await scores(biased_model, tiny_tokenizer, chat(3), OPTIONS, debias=Debias.CYCLIC, order=(0, 1, 2, 3))
    rotated, _ = await scores(biased_model, tiny_tokenizer, chat(3), OPTIONS, debias=Debias.CYCLIC, order=(2, 3, 0, 1))
    assert first.probs == pytest.approx(rotated.probs, abs=1e-4)


async def test_long_lists_are_scored_by_option_likelihood(tiny_model: Any, tiny_tokenizer: Any) -> None:
    options = [f"word{i}" for i in range(30)]
    res, _ = await scores(tiny_model, tiny_tokenizer, (Message("user", "Which word?\n{options}"),), options,
                          debias=Debias.CYCLIC_CALIBRATED, max_orderings=2)
    assert res.mode == "loglik" and res.prior is None and len(res.orderings) == 2
    assert len(res.probs) == 30 and sum(res.probs) == pytest.approx(1.0)


async def test_bad_arguments_are_refused(tiny_model: Any, tiny_tokenizer: Any) -> None:
    with pytest.raises(ValueError):
        await scores(tiny_model, tiny_tokenizer, chat(0), ())
    with pytest.raises(ValueError):
        await scores(tiny_model, tiny_tokenizer, chat(0), OPTIONS, order=(0, 0, 1, 2))

"""SNEAK appendix E.2 (``sneak bias``): same-model pairs found from the specs, the self-minus-others and
difference-in-differences numbers computed by hand on chosen evaluations, and the command end to end."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from models.eval.bias import bias, bias_text, evaluator_model, generator_model
from models.eval.instances import Instance
from models.eval.metrics import Scores
from models.eval.score import Evaluation

runner = CliRunner()
GENS = ["embed:minilm?k=8", "embed:assoc"]
EVS = ["embed:minilm?t_cham=0.05", "embed:assoc"]


def _ev(secret: str, generator: str, evaluator: str, utility: float, leakage: float = 0.1) -> Evaluation:
    inst = Instance(game="bench", category="Animals", candidates=("dog", "cat", "cow"), secret=secret, message="m",
                    role=generator)
    return Evaluation(inst, evaluator, {}, "k", (), None, None, Scores(utility, leakage, utility, 0.0))


def test_models_are_compared_without_their_parameters() -> None:
    assert generator_model("embed:minilm?k=8") == evaluator_model("embed:minilm?t_cham=0.05") == "embed:minilm"
    assert generator_model("embed") == "embed:minilm" and generator_model("llm:default?method=cot") == "llm:default"
    assert generator_model("embed:assoc") != evaluator_model("embed:minilm")


def test_self_minus_others_and_beyond_the_others_view_by_hand() -> None:
    # Utility x100 per (generator, evaluator), the same on both instances:
    #   minilm gen: 60 under minilm, 40 under assoc;  assoc gen: 50 under minilm, 70 under assoc.
    # minilm evaluator: self - others = 60 - 50 = 10; the assoc evaluator's view of the same gap 40 - 70 = -30;
    # beyond = 10 - (-30) = 40. assoc evaluator: 70 - 40 = 30, beyond 30 - (50 - 60) = 40 (one interaction).
    table = {(GENS[0], EVS[0]): 0.6, (GENS[0], EVS[1]): 0.4, (GENS[1], EVS[0]): 0.5, (GENS[1], EVS[1]): 0.7}
    evals = [_ev(s, g, e, u) for s in ("dog", "cat") for (g, e), u in table.items()]
    evals.append(_ev("dog", "secret-synonym", EVS[0], 0.9))  # a baseline's message: no model's, left aside
    b = bias(evals, GENS, EVS, rounds=200)
    assert b.instances == 2 and not b.unpaired
    assert [c.same for c in b.cells] == [True, False, False, True]
    mini, assoc = b.per_evaluator
    assert mini.own == GENS[0] and assoc.own == GENS[1]
    assert mini.self_minus_others["utility"].value == pytest.approx(10.0)
    assert assoc.self_minus_others["utility"].value == pytest.approx(30.0)
    assert mini.beyond_others is not None and assoc.beyond_others is not None
    assert mini.beyond_others["utility"].value == pytest.approx(40.0)
    assert assoc.beyond_others["utility"].value == pytest.approx(40.0)
    assert b.pooled is not None and b.pooled["utility"].value == pytest.approx(40.0)
    # Every instance alike: every bootstrap sample gives the same number.
    assert (mini.self_minus_others["utility"].low, mini.self_minus_others["utility"].high) == pytest.approx((10, 10))
    assert mini.self_minus_others["leakage"].value == pytest.approx(0.0)
    text = bias_text(b, 1.5, 2)
    assert "no systematic same-model bias" in text and "took 1.5 s" in text and "on 2 core(s)" in text


def test_an_evaluator_without_a_same_model_generator_is_named() -> None:
    evals = [_ev("dog", g, "embed:minilm", 0.5) for g in GENS] + [_ev("dog", g, "llm:default", 0.5) for g in GENS]
    b = bias(evals, GENS, ["embed:minilm", "llm:default"], rounds=50)
    assert [p.evaluator for p in b.per_evaluator] == ["embed:minilm"] and b.unpaired == ["llm:default"]
    assert "without a same-model generator (in the table only): llm:default" in bias_text(b, 0.0, 1)


def test_bias_runs_end_to_end_on_one_card(tmp_path: Path) -> None:
    out = tmp_path / "bias"
    r = runner.invoke(app, ["sneak", "bias", "--cards", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "2 generators x 2 evaluators, 12 instances" in r.output
    assert "embed:minilm (own generator embed:minilm)" in r.output and "pooled over evaluators" in r.output
    assert "secret-synonym" not in r.output.split("Per evaluator")[0]  # the baselines are no model's
    assert (out / "bias.txt").is_file()


def test_bias_refuses_a_single_generator(tmp_path: Path) -> None:
    r = runner.invoke(app, ["sneak", "bias", "-g", "embed:minilm", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "two or more different generators" in r.output

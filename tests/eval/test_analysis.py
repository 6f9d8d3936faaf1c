"""SNEAK's section 4 analyses: agreement and similarity numbers computed by hand on chosen evaluations,
WordNet path similarity on known words, and the size sweep run end to end on one card."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from models.eval.analysis import agreement, agreement_text, card_similarity, similarity, similarity_text
from models.eval.instances import Instance
from models.eval.metrics import Scores
from models.eval.score import Evaluation
from models.eval.wordnet import wordnet

runner = CliRunner()


def _ev(method: str, evaluator: str, utility: float, leakage: float, soft: float, *, category: str = "Animals",
        candidates: tuple[str, ...] = ("dog", "cat")) -> Evaluation:
    inst = Instance(game="bench", category=category, candidates=candidates, secret=candidates[0], message="m",
                    role=method)
    return Evaluation(inst, evaluator, {}, "k", (), None, None, Scores(utility, leakage, soft, soft))


def test_agreement_spread_and_rank_correlation_by_hand() -> None:
    # Three methods, two evaluators. Utility x100: A (10, 20, 30), B (30, 20, 10): reversed ranks, rho -1;
    # leakage x100: both (5, 15, 25): rho 1. Spread per method, utility: sd(10,30)=14.142, sd(20,20)=0,
    # sd(30,10)=14.142; mean 9.428.
    evals = [_ev(m, "A", u, lk, 0.5) for m, u, lk in (("m1", 0.1, 0.05), ("m2", 0.2, 0.15), ("m3", 0.3, 0.25))]
    evals += [_ev(m, "B", u, lk, 0.5) for m, u, lk in (("m1", 0.3, 0.05), ("m2", 0.2, 0.15), ("m3", 0.1, 0.25))]
    a = agreement(evals)
    assert a.methods == ["m1", "m2", "m3"] and a.evaluators == ["A", "B"]
    assert a.mean_std["utility"] == pytest.approx(2 * math.sqrt(200) / 3)
    assert a.mean_std["leakage"] == pytest.approx(0.0)
    assert a.spearman[("A", "B")]["utility"] == pytest.approx(-1.0)
    assert a.spearman[("A", "B")]["leakage"] == pytest.approx(1.0)
    assert math.isnan(a.spearman[("A", "B")]["soft"])  # every method scored the same: no ranking
    text = agreement_text(a)
    assert "A vs B: utility -1.00  leakage 1.00  soft nan" in text and "paper: utility 5.42" in text
    assert "3 generators: a rank correlation over so few says little" in text
    assert "Reference baselines" not in text  # none scored


def test_agreement_ranks_the_reference_baselines_apart_from_the_generators() -> None:
    # Generators g1-g3 ranked alike by A and B (rho 1); the baselines reversed (rho -1). Ranked together, the
    # six would mix both (and the baselines' wide gaps would decide the correlation).
    gens = {"g1": (0.40, 0.50), "g2": (0.50, 0.60), "g3": (0.60, 0.70)}
    bases = {"random": (0.30, 0.01), "category": (0.20, 0.02), "secret-synonym": (0.10, 0.03)}
    evals = [_ev(m, ev, u[i], 0.1, 0.5) for ev, i in (("A", 0), ("B", 1)) for m, u in {**gens, **bases}.items()]
    a = agreement(evals)
    assert a.methods == ["g1", "g2", "g3"] and a.baselines == ["random", "category", "secret-synonym"]
    assert a.spearman[("A", "B")]["utility"] == pytest.approx(1.0)
    assert a.baseline_spearman[("A", "B")]["utility"] == pytest.approx(-1.0)
    text = agreement_text(a)
    assert "Generators ranked (3: g1, g2, g3;" in text
    assert "Reference baselines, ranked apart from the generators (random, category, secret-synonym" in text
    assert text.index("A vs B: utility 1.00") < text.index("Reference baselines") < text.index("A vs B: utility -1.00")


def test_wordnet_path_similarity_orders_close_and_far_cards() -> None:
    wn = wordnet()
    close, unknown = card_similarity(wn, ["dog", "cat", "wolf", "fox"])
    far, _ = card_similarity(wn, ["dog", "democracy", "violin", "granite"])
    assert close is not None and far is not None and unknown == 0
    assert close > far
    # dog and cat: carnivore is two steps above each, so 1 / (1 + 4) is the best over their senses.
    assert card_similarity(wn, ["dog", "cat"])[0] == pytest.approx(0.2)
    assert card_similarity(wn, ["dog", "qzxv", "cat"])[1] == 1


def test_similarity_correlates_card_similarity_with_each_cards_mean() -> None:
    cards = {"Close": ("dog", "cat", "wolf", "fox"), "Mixed": ("dog", "cat", "violin", "granite"),
             "Far": ("dog", "democracy", "violin", "granite"), "Tools": ("hammer", "saw", "drill", "wrench")}
    wn = wordnet()
    sims = {c: card_similarity(wn, list(w))[0] for c, w in cards.items()}
    # utility falls as similarity rises: utility = 1 - similarity exactly, so r is -1.
    evals = [_ev("g", ev, 1 - (sims[c] or 0), 0.1, 0.3, category=c, candidates=w)
             for c, w in cards.items() for ev in ("A", "B")]
    s = similarity(evals, wn, "g")
    assert len(s.cards) == 4 and not s.left_out
    assert s.r["utility"][0] == pytest.approx(-1.0)
    assert math.isnan(s.r["leakage"][0])
    assert "Not made: the paper's abstract / concrete split" in similarity_text(s)


def test_sweep_runs_end_to_end_on_one_card(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    r = runner.invoke(app, ["sneak", "sweep", "--cards", "1", "-w", "4", "-w", "12", "-m", "1", "-m", "5",
                            "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "the first 4 words of each as secrets in every column" in r.output
    assert "candidates swept (|M|=5)" in r.output and "decoys swept (|W|=12)" in r.output
    # The table is on the normalised scale, where an even-handed judge's chance is 0; raw chance is apart.
    assert "chance on this table's scale (|W| = 4 / 12): utility 0, leakage 0, soft 0" in r.output
    assert "binary 12.5 / 15.3" in r.output and "binary 45.8 / 15.3" in r.output  # 1/6 * 3/4, 1/6 * 11/12; 1/2 * 11/12
    assert "raw chance, before normalising" in r.output
    assert "ally 1/(|M|+1) 16.7 / 16.7 (|M| decoys and the real message), chameleon 1/|W| 25.0 / 8.3" in r.output
    assert "ally 1/(|M|+1) 50.0 / 16.7 (|M| decoys and the real message), chameleon 1/|W| 8.3 / 8.3" in r.output
    rows = [ln.split() for ln in r.output.splitlines() if ln.startswith("embed:minilm ")]
    assert [row[1] for row in rows] == ["4", "12", "1", "5"]
    assert {p.name for p in out.iterdir()} == {"sweep.txt", "figure4.png", "figure4.svg"}


def test_sweep_refuses_a_candidate_set_larger_than_every_card(tmp_path: Path) -> None:
    deck = tmp_path / "deck.txt"
    deck.write_text("Colours: red, green, blue, yellow, pink, black, white, grey, brown, orange, purple, gold\n")
    r = runner.invoke(app, ["sneak", "sweep", "--deck", str(deck), "-w", "16", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no card has 16 words" in r.output

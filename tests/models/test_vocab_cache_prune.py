"""The vocabulary cache keeps the newest matrix per embedder: storing a new one removes the older ones of
the same embedder and leaves other embedders' alone."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from models.embeddings import _read_matrix, _write_matrix


def test_storing_a_matrix_prunes_the_older_ones_of_its_embedder(tmp_path: Path) -> None:
    old = tmp_path / "minilm-aaaaaaaaaaaaaaaaaaaaaaaa.npy"
    other = tmp_path / "assoc-bbbbbbbbbbbbbbbbbbbbbbbb.npy"
    for path in (old, other):
        np.save(path, np.ones((3, 2), dtype=np.float32))
        os.utime(path, ns=(1, 1))  # written long ago
    new = tmp_path / "minilm-cccccccccccccccccccccccc.npy"
    _write_matrix(new, np.zeros((4, 2), dtype=np.float32))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([new.name, other.name])
    matrix = _read_matrix(new, 4)
    assert matrix is not None and matrix.shape == (4, 2)

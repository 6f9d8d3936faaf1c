"""Shared word-embedding tools: the embedder protocol, the hint vocabulary, its index, cosine helpers.

Both the AI players (``models/agents``) and the SNEAK evaluation (``models/eval``) use
these; neither imports the other for them. The embedding model itself (all-MiniLM-L6-v2,
bundled, offline) is loaded by ``models/worker/embedding_backend.py``, the only place
that touches torch: everything here works on unit-length numpy vectors.

The vocabulary: baselines never invent words, they pick hints, clues and descriptions
from a fixed list, the way the Decrypto paper's baselines draw from a fixed noun corpus.
Ours is every word of the bundled decks (Decrypto keywords, Who-is-Spy pairs, Chameleon
cards) plus ``models/data/vocab.txt``. Entries are normalised (lower case, single
spaces), deduplicated, kept in a stable order (so a seed picks the same word
everywhere), and limited to what every game accepts as one hint: at most two words and
30 characters.
"""

from __future__ import annotations

import glob
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from games import decks
from games.base import Text, contains_word, normalize, words_of
from games.text import is_variant

log = logging.getLogger(__name__)

VOCAB_FILE = "vocab.txt"
MAX_WORDS = 2
MAX_CHARS = 30
DEFAULT_K = 16
"""The top-K of the embedding baselines' draws (the Decrypto paper's K)."""


# --------------------------------------------------------------------------- the embedder


@runtime_checkable
class Embedder(Protocol):
    """Unit-length vectors for texts: ``embed(texts)`` is an (n, d) float array whose rows have norm 1."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


# --------------------------------------------------------------------------- the vocabulary


def parse_vocab(text: str) -> tuple[str, ...]:
    """Words separated by whitespace; ``_`` joins a multi-word entry; ``#`` starts a comment line."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out.extend(tok.replace("_", " ") for tok in line.split())
    return tuple(out)


def build_vocab(words: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for raw in words:
        w = normalize(raw)
        if w and len(words_of(w)) <= MAX_WORDS and len(w) <= MAX_CHARS:
            seen.setdefault(w, None)
    return tuple(seen)


def deck_words() -> list[str]:
    out = list(decks.keywords())
    for a, b in decks.pairs():
        out += [a, b]
    for _, card in decks.cards():
        out += list(card)
    return out


@cache
def default_vocab() -> tuple[str, ...]:
    extra = resources.files("models").joinpath("data", VOCAB_FILE).read_text(encoding="utf-8")
    return build_vocab([*deck_words(), *parse_vocab(extra)])


# --------------------------------------------------------------------------- the index


class VocabIndex:
    """The vocabulary and its embedding matrix, computed once on first use and shared by every agent.

    With a ``cache`` folder the matrix is also kept on disk, named by a digest of the embedder's
    ``fingerprint()`` (its model files and versions) and of the words, so a later start reads it in
    milliseconds instead of embedding a few thousand words again (minutes for the association model
    on a busy machine); a changed model or vocabulary is another name, never a stale matrix. The
    rows read back are handed to the embedder's ``remember``, so a vocabulary word embedded later
    gets the very vector it had when the matrix was computed: same seed, same moves, cache or not.
    """

    def __init__(self, embedder: Embedder, words: Sequence[str] | None = None, *, cache: Path | None = None) -> None:
        self.embedder = embedder
        self.words: tuple[str, ...] = tuple(words) if words is not None else default_vocab()
        self._keys = tuple(normalize(w) for w in self.words)
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()
        self.cache = cache

    @property
    def matrix(self) -> np.ndarray:
        with self._lock:
            if self._matrix is None:
                stored = self._cache_file()
                matrix = _read_matrix(stored, len(self.words)) if stored is not None else None
                if matrix is not None:
                    remember = getattr(self.embedder, "remember", None)
                    if callable(remember):
                        remember(self.words, matrix)
                else:
                    matrix = np.asarray(self.embedder.embed(list(self.words)), dtype=np.float32)
                    if stored is not None:
                        _write_matrix(stored, matrix)
                self._matrix = matrix
            return self._matrix

    def _cache_file(self) -> Path | None:
        fingerprint = getattr(self.embedder, "fingerprint", None)
        if self.cache is None or not callable(fingerprint):
            return None
        try:
            mark = str(fingerprint())
        except Exception as exc:  # a model whose files are missing: embedding reports it, not the cache
            log.debug("no vocabulary cache: %s", type(exc).__name__)
            return None
        digest = hashlib.sha256("\0".join((mark, *self.words)).encode("utf-8")).hexdigest()[:24]
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", self.embedder.model_id)[-40:]
        return self.cache / f"{name}-{digest}.npy"

    def warm(self) -> None:
        """Embed the vocabulary now (a background thread at start-up), so no move pays for it; an embedder
        with a ``load`` method (the association model) then reads its models, for the first new text."""
        try:
            _ = self.matrix
            load = getattr(self.embedder, "load", None)
            if callable(load):
                load()
        except Exception as exc:  # a missing model is reported by the move that needs it
            log.debug("vocabulary warm-up failed: %s", type(exc).__name__)

    def vec(self, text: str) -> np.ndarray:
        row: np.ndarray = np.asarray(self.embedder.embed([text]), dtype=np.float32)[0]
        return row

    def vecs(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def ranked(self, target: np.ndarray) -> np.ndarray:
        """Vocabulary indices, most similar to ``target`` first (stable on ties)."""
        return np.argsort(-(self.matrix @ target), kind="stable")


def file_marks(paths: Iterable[Path]) -> str:
    """Name, size and modification time of each file: what a model's ``fingerprint`` is made of (a
    reinstalled or replaced model file changes it)."""
    out = []
    for path in paths:
        st = path.stat()
        out.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(out)


def _read_matrix(path: Path, rows: int) -> np.ndarray | None:
    """A stored vocabulary matrix, or None when there is none or it is not one (then it is computed again)."""
    try:
        matrix = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if matrix.dtype != np.float32 or matrix.ndim != 2 or matrix.shape[0] != rows or not np.isfinite(matrix).all():
        log.debug("vocabulary cache %s is not a matrix of %d rows; computing it again", path.name, rows)
        return None
    out: np.ndarray = matrix
    return out


def _write_matrix(path: Path, matrix: np.ndarray) -> None:
    """Store the matrix whole or not at all (written aside, then renamed); a folder we cannot write only costs time."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".npy", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                np.save(f, matrix, allow_pickle=False)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as exc:
        log.debug("vocabulary cache not written: %s", type(exc).__name__)
        return
    _prune(path)


def _prune(kept: Path) -> None:
    """Remove the older matrices of the embedder just stored (a new model file or vocabulary makes a new
    name, and each is tens of megabytes): the newest matrix per embedder is kept."""
    embedder = kept.name.rsplit("-", 1)[0]
    try:
        newest = kept.stat().st_mtime_ns
        for old in kept.parent.glob(f"{glob.escape(embedder)}-*.npy"):
            if old != kept and old.name.rsplit("-", 1)[0] == embedder and old.stat().st_mtime_ns <= newest:
                old.unlink(missing_ok=True)
    except OSError as exc:  # another process pruned first, or the folder is read-only: only space is lost
        log.debug("old vocabulary caches not pruned: %s", type(exc).__name__)


# --------------------------------------------------------------------------- cosine helpers


def unit_vec(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def mean_vec(vecs: np.ndarray) -> np.ndarray:
    """The unit-length mean of unit vectors (the centroid a cosine is taken against)."""
    return unit_vec(vecs.mean(axis=0))


def cosines(index: VocabIndex, texts: Sequence[str], target: np.ndarray) -> np.ndarray:
    """Cosine of each text with ``target`` (a unit vector)."""
    if not texts:
        return np.zeros(0, dtype=np.float32)
    out: np.ndarray = index.vecs(texts) @ target
    return out


def overlaps(candidate: str, word: str) -> bool:
    """True when ``candidate`` names or contains ``word`` (or the reverse), as words or inside one.

    Stricter than any engine's rule on purpose: a baseline should never have a
    hint refused, and "firefly" for "fire" is no hint anyway.
    """
    a, b = normalize(candidate).replace(" ", ""), normalize(word).replace(" ", "")
    if not a or not b:
        return False
    if contains_word(candidate, word) or contains_word(word, candidate) or a == b:
        return True
    wa, wb = words_of(candidate), words_of(word)
    # A variant of the other (icy, colour, pianist): the rules refuse it, see games.text.is_variant.
    if (len(wb) == 1 and any(is_variant(x, wb[0]) for x in wa)) or (len(wa) == 1 and any(is_variant(x, wa[0]) for x in wb)):
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 4 and short in long_


def fits(word: str, spec: Text) -> bool:
    """True when ``word`` is within a free-text spec's word and character limits."""
    return len(word) <= spec.max_chars and len(words_of(word)) <= spec.max_words


class Draw(Protocol):
    """The part of ``random.Random`` a top-K draw needs."""

    def randrange(self, stop: int, /) -> int: ...


@dataclass(frozen=True, slots=True)
class Pick:
    word: str
    similarity: float
    candidates: int  # how many words were eligible in the top K


def sample_top_k(
    index: VocabIndex,
    target: np.ndarray,
    k: int,
    r: Draw,
    allowed: Callable[[int, str], bool],
) -> Pick:
    """A uniform draw among the eligible words in the top ``k``; else the nearest eligible word beyond."""
    order = index.ranked(target)
    sims = index.matrix @ target
    top = [int(i) for i in order[:k] if allowed(int(i), index.words[int(i)])]
    if top:
        i = top[r.randrange(len(top))]
        return Pick(index.words[i], float(sims[i]), len(top))
    for i in order[k:]:
        i = int(i)
        if allowed(i, index.words[i]):
            return Pick(index.words[i], float(sims[i]), 0)
    raise ValueError("no vocabulary word satisfies the constraints")


__all__ = [
    "DEFAULT_K",
    "MAX_CHARS",
    "MAX_WORDS",
    "Draw",
    "Embedder",
    "Pick",
    "VocabIndex",
    "build_vocab",
    "cosines",
    "deck_words",
    "default_vocab",
    "fits",
    "mean_vec",
    "overlaps",
    "parse_vocab",
    "sample_top_k",
    "unit_vec",
]

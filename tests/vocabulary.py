"""Made-up words for tests that play games: they match no secret word of any game, so a
clue, hint or description built from them is never refused for naming the secret.

Defined once for the whole suite (it used to be written three times)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

NONSENSE = tuple(f"zq{i}x" for i in range(80))

_SYLLABLES = ("zor", "quin", "blap", "vex", "mip", "trod", "plen", "gusk", "fim", "dral")


def nonsense_words() -> Iterator[str]:
    """An endless supply that never repeats and holds letters only (for rules that refuse digits)."""
    for a, b, c in itertools.product(_SYLLABLES, repeat=3):
        yield a + b + c

"""Golden transcripts: seeded random games of every variant, written out as text and checked in.

A change of rules or wording shows up here as a diff. If it is intended, regenerate with
``HUSHTABLE_UPDATE_GOLDEN=1 pytest tests/games/test_golden.py`` and read the new files by eye.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

import games
from games.play import play_random, seat_names, transcript

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("decrypto", "benchmark", 3, 1), ("decrypto", "benchmark", 3, 2), ("decrypto", "teams", 4, 1), ("decrypto", "teams", 5, 2),
    ("spy", "classic", 6, 1), ("spy", "classic", 6, 2), ("spy", "spygame", 4, 1), ("spy", "spygame", 4, 2),
    ("chameleon", "classic", 5, 1), ("chameleon", "classic", 5, 2), ("chameleon", "sneak", 5, 1), ("chameleon", "sneak", 5, 2),
]


def test_every_golden_file_has_a_case() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.txt")) == sorted(f"{g}-{v}-seed{s}.txt" for g, v, _, s in CASES)


@pytest.mark.parametrize(("game", "variant", "seats", "seed"), CASES)
def test_golden_transcript(game: str, variant: str, seats: int, seed: int) -> None:
    engine = games.get(game)
    pt = play_random(engine, engine.make_config(variant), seats, seed)
    text = transcript(engine, pt.events, seat_names(seats), pt.result)
    path = GOLDEN / f"{game}-{variant}-seed{seed}.txt"
    if os.environ.get("HUSHTABLE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "now", n=1))
        pytest.fail(f"{path.name} differs from the engine's output; if intended, regenerate with "
                    f"HUSHTABLE_UPDATE_GOLDEN=1 pytest {__file__}\n{diff[:4000]}")

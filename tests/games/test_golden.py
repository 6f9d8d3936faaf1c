"""Golden transcripts: the seeded random games each descriptor lists (``golden``), written out as
text and checked in, for every registered game.

A change of rules or wording shows up here as a diff. If it is intended, regenerate with
``HUSHTABLE_UPDATE_GOLDEN=1 pytest tests/games/test_golden.py`` and read the new files by eye.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from games.catalog import descriptors
from games.descriptor import GameDescriptor, Golden
from games.play import play_random, seat_names, transcript

GOLDEN = Path(__file__).parent / "golden"
CASES = [(d, g) for d in descriptors() for g in d.golden]


def test_every_game_has_golden_cases_and_every_file_a_case() -> None:
    assert all(d.golden for d in descriptors()), [d.id for d in descriptors() if not d.golden]
    names = [g.name(d.id) for d, g in CASES]
    assert len(set(names)) == len(names), "two golden cases of a game share a variant and seed"
    assert sorted(p.stem for p in GOLDEN.glob("*.txt")) == sorted(names)


@pytest.mark.parametrize(("d", "case"), CASES, ids=[g.name(d.id) for d, g in CASES])
def test_golden_transcript(d: GameDescriptor, case: Golden) -> None:
    engine = d.engine
    pt = play_random(engine, engine.make_config(case.variant, **dict(case.options)), case.seats, case.seed)
    text = transcript(engine, pt.events, seat_names(case.seats), pt.result)
    path = GOLDEN / f"{case.name(d.id)}.txt"
    if os.environ.get("HUSHTABLE_UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else ""
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True), str(path), "now", n=1))
        pytest.fail(f"{path.name} differs from the engine's output; if intended, regenerate with "
                    f"HUSHTABLE_UPDATE_GOLDEN=1 pytest {__file__}\n{diff[:4000]}")

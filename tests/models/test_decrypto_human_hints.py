"""The Decrypto decoder and interceptor on hints as people give them, with the real association model.

Multi-word hints, names and cultural references, and hints that build on the earlier hints of the
same keyword (a chain the interceptor follows). The hand-written games these come from are in
``bench/data/decrypto_human_style.json``; bench/association.py replays all of them.
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import pytest

from games.base import Choice, Observation, Option
from models.agents.games.decrypto import evidence
from models.embeddings import VocabIndex
from models.worker.embedding_backend import embedder_for

CODES = ["-".join(map(str, p)) for p in itertools.permutations((1, 2, 3, 4), 3)]
KEYWORDS = {"1": "piano", "2": "shark", "3": "castle", "4": "winter"}


@pytest.fixture(scope="module")
def index() -> VocabIndex:
    return VocabIndex(embedder_for("assoc"), words=list(KEYWORDS.values()))


def guess(role: str, hints: list[str], history: dict[str, list[str]], codes: list[str]) -> tuple[Observation, Choice]:
    v: Any = {"variant": "benchmark", "seat": 1 if role == "decoder" else 2, "role": role, "team": "A",
              "keywords": KEYWORDS if role == "decoder" else None, "code": None, "hint_history": history,
              "code_history": codes, "current_hints": {"team": "A", "encoder": 0, "hints": hints}, "turns": [],
              "round": len(codes) + 1}
    return Observation("decrypto", v["seat"], "guess", v, ()), Choice("guess", "Guess", tuple(Option(c, c) for c in CODES))


def best(scores: dict[str, float] | None) -> str:
    assert scores is not None
    return max(scores, key=scores.__getitem__)


def test_the_decoder_reads_phrases_names_and_references(index: VocabIndex) -> None:
    # "black and white keys" (piano), "Jaws" (the film: shark), "moat and drawbridge" (castle).
    obs, spec = guess("decoder", ["Jaws", "moat and drawbridge", "black and white keys"], {}, [])
    assert best(evidence(index, obs, spec)) == "2-3-1"
    obs, spec = guess("decoder", ["snowman", "Beethoven", "great white"], {}, [])
    assert best(evidence(index, obs, spec)) == "4-1-2"


def test_the_interceptor_follows_a_chain_of_hints(index: VocabIndex) -> None:
    # Without the keywords: each slot's past hints are the chain a new hint continues.
    history = {"1": ["Beethoven", "Mozart"], "2": ["Jaws", "fin"], "3": ["moat", "drawbridge"], "4": ["snowman", "frost"]}
    obs, spec = guess("interceptor", ["Chopin", "turret", "hammerhead"], history, ["1-2-3", "4-3-2"])
    assert best(evidence(index, obs, spec)) == "1-3-2"
    obs, spec = guess("interceptor", ["hibernation", "hammerhead", "Elton John"], history, ["1-2-3", "4-3-2"])
    assert best(evidence(index, obs, spec)) == "4-2-1"


def test_the_hand_written_games_replay_through_the_engine() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from association import human_style_records

    records = human_style_records()
    assert len(records) == 10
    for rec in records:
        hints = [a for seat, a in rec.actions if seat == 0]
        assert len(hints) == 8  # every turn played, every hint accepted by the rules
        assert any(len(h.split()) > 1 for a in hints for h in a.value)  # people's phrases, not only single words

"""The Decrypto specialist on hand-made vectors: the whole hint history, the codes still possible, and
an encoder that refines its hints against an interceptor built from the public history."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from games.base import Action, Choice, Observation, Option
from models.agents.games.decrypto import evidence, hint_outcome, text_score
from models.agents.judge import EmbeddingJudge
from models.embeddings import VocabIndex
from tests.models.test_embed_agent import DictEmbedder

CODES = ["-".join(map(str, p)) for p in itertools.permutations((1, 2, 3, 4), 3)]
AXES = {"sun": 0, "sea": 1, "car": 2, "owl": 3}


def vec(*weights: tuple[int, float]) -> np.ndarray:
    v = np.full(5, 0.05, dtype=np.float32)
    for axis, w in weights:
        v[axis] = w
    return v


TABLE = {
    # keywords and hints along four axes; "plain" points nowhere in particular
    "sun": vec((0, 1)), "sea": vec((1, 1)), "car": vec((2, 1)), "owl": vec((3, 1)),
    "light": vec((0, 1), (4, 0.3)), "wave": vec((1, 1), (4, 0.3)), "wheel": vec((2, 1), (4, 0.3)),
    "night": vec((3, 1), (4, 0.3)), "beach": vec((0, 0.7), (1, 0.7)), "plain": vec((4, 1)),
    "heat": vec((0, 0.9), (4, 0.5)), "tide": vec((1, 0.9), (4, 0.5)), "road": vec((2, 0.9), (4, 0.5)),
    "feather": vec((3, 0.9), (4, 0.5)), "dawn": vec((0, 0.6), (3, 0.6), (4, 0.4)),
}
INDEX = VocabIndex(DictEmbedder(TABLE), words=list(TABLE))


def view(role: str, hints: list[str] | None, history: dict[str, list[str]], codes: list[str], code: str | None = None) -> Any:
    return {"variant": "benchmark", "seat": 1, "role": role, "team": "A", "keywords": {"1": "sun", "2": "sea", "3": "car",
            "4": "owl"} if role != "interceptor" else None, "code": code, "hint_history": history, "code_history": codes,
            "current_hints": {"team": "A", "encoder": 0, "hints": hints} if hints else None, "turns": [], "round": 3}


def guess(v: Any) -> tuple[Observation, Choice]:
    return Observation("decrypto", 1, "guess", v, ()), Choice("guess", "Guess", tuple(Option(c, c) for c in CODES))


def test_the_interceptor_reads_every_slot_and_never_names_a_used_code() -> None:
    history = {"1": ["light"], "2": ["wave"], "3": ["wheel"], "4": ["night"]}
    scores = evidence(INDEX, *guess(view("interceptor", ["heat", "tide", "road"], history, ["4-1-2", "3-2-1"])))
    assert scores is not None and max(scores, key=scores.__getitem__) == "1-2-3"
    # The same hints when 1-2-3 was already played: it is never the answer again.
    scores = evidence(INDEX, *guess(view("interceptor", ["heat", "tide", "road"], history, ["1-2-3"])))
    assert scores is not None and max(scores, key=scores.__getitem__) != "1-2-3"
    assert scores["1-2-3"] < min(x for c, x in scores.items() if c != "1-2-3")


def test_the_interceptor_places_a_hint_by_the_closest_past_hint_not_only_the_centroid() -> None:
    # Slot 4 was hinted from two sides; "dawn" sits near one of them (light/night) but far from their centroid.
    history = {"1": ["beach"], "2": ["wave"], "3": ["wheel"], "4": ["night", "dawn"]}
    scores = evidence(INDEX, *guess(view("interceptor", ["tide", "road", "feather"], history, [])))
    assert scores is not None and max(scores, key=scores.__getitem__) == "2-3-4"


def test_with_nothing_to_read_every_possible_code_is_as_likely() -> None:
    scores = evidence(INDEX, *guess(view("interceptor", ["heat", "tide", "road"], {}, ["1-2-3"])))
    assert scores is not None and len({x for c, x in scores.items() if c != "1-2-3"}) == 1


def test_the_encoder_prefers_hints_the_partner_reads_and_the_interceptor_cannot_place() -> None:
    history = {"1": ["light"], "2": ["wave"], "3": ["wheel"], "4": []}
    v = view("encoder", None, history, ["1-2-3"], code="1-2-4")
    obvious = Action.say("hints", "heat", "tide", "feather")  # each next to its slot's past hint
    bob, eve = hint_outcome(INDEX, v, obvious.value)
    assert bob > 0.5 and eve > 0.3
    obs = Observation("decrypto", 0, "hints", v, ())
    judge = EmbeddingJudge(INDEX)
    # Same partner reading, but slot 1 hinted from an unseen side ("dawn" is off "light"): Eve is left guessing.
    subtle = Action.say("hints", "dawn", "tide", "feather")
    assert hint_outcome(INDEX, v, subtle.value)[1] < eve
    assert text_score(INDEX, judge, obs, subtle) > text_score(INDEX, judge, obs, obvious)

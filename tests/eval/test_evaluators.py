"""Evaluators: label probabilities equal a hand computation on the tiny random model; specs; failures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from games.base import rng
from models.eval.evaluators import EmbeddingEvaluator, LLMEvaluator, resolve, softmax
from models.eval.instances import Instance
from models.eval.prompts import prompt
from models.types import InferenceError
from models.worker.embedding_backend import embedder_for
from tests.eval.conftest import Down

INST = Instance(game="chameleon", category="Fruits", candidates=("Apple", "Banana", "Cherry", "Grape", "Lemon", "Pear"),
                secret="Lemon", message="sour")
MESSAGES = ("sour", "sweet", "garden", "kitchen", "juicy", "market")


def by_hand(model: Any, tokenizer: Any, messages: Any, labels: Any) -> list[float]:
    """Chat template, one plain forward, softmax over the label tokens at the last position."""
    text = tokenizer.apply_chat_template([m.to_json() for m in messages], add_generation_prompt=True, tokenize=False)
    ids = tokenizer(text, add_special_tokens=False, return_tensors="pt")["input_ids"]
    label_ids = [tokenizer(text + lab, add_special_tokens=False)["input_ids"][-1] for lab in labels]
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, -1].float()
    return torch.softmax(logits[label_ids], dim=-1).tolist()


def shuffled(n: int, *salt: object) -> list[int]:
    idx = list(range(n))
    rng(0, *salt).shuffle(idx)
    return idx




async def test_chameleon_probabilities_equal_a_hand_computation(client: Any, tiny_model: Any, tiny_tokenizer: Any) -> None:
    got = await LLMEvaluator(client, "llm:tiny", permutations=1, calibrate=False).chameleon(INST)
    assert not got.failed
    perm = shuffled(6, "sneak-chameleon", INST.category, INST.candidates, INST.secret, INST.message)
    labels = "ABCDEF"
    msgs = prompt("chameleon", category="Fruits", candidates=" ".join(f"{labels[i]}) {INST.candidates[o]}"
                                                                      for i, o in enumerate(perm)),
                  message="sour", labels="A, B, C, D, E, F")
    shown = by_hand(tiny_model, tiny_tokenizer, msgs, list(labels))
    expected = [0.0] * 6
    for pos, option in enumerate(perm):
        expected[option] = shown[pos]  # the label's probability goes back to the option shown under it
    assert got.probs == pytest.approx(expected, abs=1e-5)


async def test_ally_probabilities_equal_a_hand_computation_and_average_orderings(client: Any, tiny_model: Any,
                                                                                 tiny_tokenizer: Any) -> None:
    ev = LLMEvaluator(client, "llm:tiny", permutations=2, calibrate=False)
    got = await ev.ally(INST, MESSAGES)
    first = shuffled(6, "sneak-ally", INST.category, INST.secret, MESSAGES)
    expected = [0.0] * 6
    for shift in (0, 3):  # two evenly spaced cyclic shifts of the seeded order
        perm = [first[(shift + i) % 6] for i in range(6)]
        listing = " ".join(f"{'ABCDEF'[i]}) message {i}: {MESSAGES[o]}" for i, o in enumerate(perm))
        msgs = prompt("ally", category="Fruits", candidates=", ".join(INST.candidates), secret="Lemon",
                      messages=listing, labels="A, B, C, D, E, F")
        shown = by_hand(tiny_model, tiny_tokenizer, msgs, list("ABCDEF"))
        for pos, option in enumerate(perm):
            expected[option] += shown[pos] / 2
    assert got.probs == pytest.approx(expected, abs=1e-5)
    assert ev.settings["permutations"] == 2


async def test_the_chameleons_candidate_order_is_drawn_per_instance_and_debiased_by_default(client: Any) -> None:
    import dataclasses

    ev = LLMEvaluator(client, "llm:tiny")
    assert ev.settings["permutations"] == 2 and ev.settings["calibrate"] is True  # as the players' choices
    firsts = set()
    for message in ("sour", "yellow", "citrus", "tart", "peel", "zest"):
        got = await ev.chameleon(dataclasses.replace(INST, message=message))
        firsts.add(tuple(got.extra["orderings"][0]))
    assert len(firsts) > 1  # one card, several messages: the secret does not sit under one label every time


async def test_a_failing_model_is_a_counted_failure_not_a_crash() -> None:

    j = await LLMEvaluator(Down(), "llm:down").chameleon(INST)
    assert j.failed and "worker down" in (j.error or "") and j.probs == ()


def test_embedding_evaluator_is_a_tempered_softmax_of_cosines() -> None:
    emb = embedder_for("minilm")
    ev = EmbeddingEvaluator(emb, "embed:minilm", t_cham=0.05, t_ally=0.1)
    cand = np.asarray(emb.embed(list(INST.candidates)), dtype=np.float64)
    msg = np.asarray(emb.embed(["sour"]), dtype=np.float64)[0]
    assert ev.chameleon_now(INST).probs == pytest.approx(list(softmax(cand @ msg, 0.05)), abs=1e-6)
    import dataclasses

    p = ev.chameleon_now(dataclasses.replace(INST, message="citrus")).probs
    assert max(range(6), key=lambda i: p[i]) == INST.candidates.index("Lemon")
    ally = ev.ally_now(INST, MESSAGES).probs
    assert sum(ally) == pytest.approx(1.0) and len(ally) == 6


async def test_specs_resolve_through_the_given_factories_only() -> None:
    asked: list[str] = []

    async def client_for(spec: str) -> Any:
        asked.append(spec)
        raise InferenceError("no models in this test")

    with pytest.raises(InferenceError):
        await resolve("llm:openai:http://host:8000/v1#m?p=3", client_for=client_for, embedder_for=embedder_for)
    assert asked == ["openai:http://host:8000/v1#m"]
    ev = await resolve("embed:minilm?t_cham=0.2", client_for=client_for, embedder_for=embedder_for)
    assert isinstance(ev, EmbeddingEvaluator) and ev.t_cham == 0.2
    for bad in ("nope:x", "llm:default?q=1", "embed:minilm?t_cham=hot"):
        with pytest.raises(ValueError):
            await resolve(bad, client_for=client_for, embedder_for=embedder_for)

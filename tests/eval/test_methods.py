"""CoT and SETS message generation: the reasoning prompt and its reading, SETS's sampling, verification,
correction and choice with a scripted model (worked by hand), and both methods on the tiny llama."""

from __future__ import annotations

import json
from typing import Any

import pytest

from models.eval.bench import make_generator
from models.eval.generators import prompting
from models.eval.instances import Instance
from models.eval.methods import MethodGenerator, cot_messages
from models.types import GenerateRequest, GenerateResult, ScoreRequest, ScoreResult

INST = Instance(game="bench", category="Fruit", candidates=("apple", "pear", "plum"), secret="pear", message="")


class Scripted:
    """Samples by seed; the verifier likes messages by a table; the corrector answers one fixed message."""

    model_id = "scripted"

    def __init__(self, samples: dict[int, str], liked: dict[str, float], fixed: str = "bell shaped") -> None:
        self.samples = samples
        self.liked = liked
        self.fixed = fixed
        self.requests: list[GenerateRequest] = []

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        self.requests.append(req)
        last = req.messages[-1].content
        if "judged weak" in last:
            return GenerateResult(f"{self.fixed}</message>", "scripted")
        if "First think briefly" in last:
            return GenerateResult("It is shaped like a bell. <message>bell shaped fruit</message>", "scripted")
        return GenerateResult(self.samples[req.seed or 0], "scripted")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        message = req.messages[-1].content.split("Message: ")[1].split("\n")[0]
        p = self.liked.get(message, 0.1)
        return ScoreResult((p, 1 - p), "scripted")

    async def aclose(self) -> None:
        return None


async def test_cot_asks_for_reasoning_and_reads_the_message_after_it() -> None:
    model = Scripted({}, {})
    gen = MethodGenerator(model, "llm:s?method=cot", "cot")
    out = await gen(INST)
    assert out.message == "bell shaped fruit" and "shaped like a bell" in out.raw
    req = model.requests[0]
    assert req.prefill == "" and req.temperature == 0.0  # the reasoning comes first, greedy
    assert "Secret word: pear" in cot_messages(INST)[-1].content


async def test_sets_samples_verifies_corrects_and_takes_the_majority_of_the_verified() -> None:
    # Samples: "green" twice, "juicy", "sweet". The verifier: green 0.6 (verified), juicy 0.3, sweet 0.2, and the
    # correction of both weak ones, "bell shaped", 0.9. Finals: green, bell shaped, green, bell shaped: all verified,
    # two votes each; the tie goes to the message sampled first. The best self-score (bell shaped, 0.9) does not win.
    model = Scripted({0: "green</message>", 1: "juicy</message>", 2: "green</message>", 3: "sweet</message>"},
                     {"green": 0.6, "juicy": 0.3, "sweet": 0.2, "bell shaped": 0.9})
    out = await MethodGenerator(model, "llm:s?method=sets", "sets")(INST)
    audit = json.loads(out.raw)
    assert audit["sampled"] == ["green", "juicy", "green", "sweet"]
    assert [(c["sampled"], c["final"], c["verified"], [st["message"] for st in c["steps"]]) for c in audit["candidates"]] == [
        ("green", "green", True, ["green"]), ("juicy", "bell shaped", True, ["juicy", "bell shaped"]),
        ("green", "green", True, ["green"]), ("sweet", "bell shaped", True, ["sweet", "bell shaped"])]
    assert audit["votes"] == {"green": 2, "bell shaped": 2} and audit["vote_over"] == "verified"
    assert out.message == "green" and audit["chosen"] == "green"
    assert [r.temperature for r in model.requests[:1]] == [0.8]
    samples = [r for r in model.requests if "judged weak" not in r.messages[-1].content]
    assert [r.seed for r in samples] == [0, 1, 2, 3] and {r.temperature for r in samples} == {0.8}
    # The majority among the verified: a weak message whose correction stays weak has no vote while any is verified.
    model = Scripted({0: "juicy</message>", 1: "green</message>", 2: "juicy</message>", 3: "green</message>"},
                     {"green": 0.7, "juicy": 0.3, "bell shaped": 0.2})
    out = await MethodGenerator(model, "llm:s?method=sets", "sets")(INST)
    audit = json.loads(out.raw)
    assert out.message == "green" and audit["votes"] == {"green": 2}
    assert [c["verified"] for c in audit["candidates"]] == [False, True, False, True]
    # None verified: the vote is over every final message (here "bell shaped", the correction of each sample).
    model = Scripted({0: "juicy</message>", 1: "green</message>", 2: "sweet</message>", 3: "juicy</message>"},
                     {"bell shaped": 0.2})
    out = await MethodGenerator(model, "llm:s?method=sets", "sets")(INST)
    audit = json.loads(out.raw)
    assert out.message == "bell shaped" and audit["vote_over"] == "all (none verified)" and audit["votes"] == {"bell shaped": 4}
    # Each distinct message is verified and corrected once, however often it is sampled.
    corrections = [r for r in model.requests if "judged weak" in r.messages[-1].content]
    assert len(corrections) == 3


async def test_generators_are_zero_shot_unless_the_spec_asks_for_one_example() -> None:
    async def client_for(name: str) -> Any:
        return model

    model = Scripted({i: "green</message>" for i in range(4)}, {"green": 0.9})
    for spec, shots in (("llm:s", 0), ("llm:s?shots=1", 1), ("llm:s?method=cot", 0), ("llm:s?method=sets&shots=1", 1)):
        model.requests.clear()
        gen = await make_generator(spec, refine=False, client_for=client_for, index=None, seed=0)  # type: ignore[arg-type]
        await gen(INST)
        roles = [m.role for m in model.requests[0].messages]
        assert roles == (["system", "user", "assistant", "user"] if shots else ["system", "user"]), spec
        assert ("Board game pieces" in model.requests[0].messages[1].content) == bool(shots)
    with pytest.raises(ValueError, match="shots must be 0 .* or 1"):
        await make_generator("llm:s?shots=3", refine=False, client_for=client_for, index=None, seed=0)  # type: ignore[arg-type]
    assert prompting("llm:s").startswith("zero-shot") and prompting("llm:s?shots=1").startswith("one-shot")
    assert prompting("embed:minilm").startswith("no prompt")


async def test_sets_with_no_usable_sample_is_a_counted_failure() -> None:
    model = Scripted({i: "moves in an L</message>" for i in range(4)}, {})  # a copy of the worked example
    out = await MethodGenerator(model, "llm:s?method=sets", "sets")(INST)
    assert out.message is None and json.loads(out.raw)["candidates"] == [] and json.loads(out.raw)["sampled"] == [None] * 4


async def test_make_generator_reads_the_method_and_refuses_an_unknown_one() -> None:
    async def client_for(name: str) -> Any:
        return Scripted({}, {})

    gen = await make_generator("llm:x?method=cot", refine=False, client_for=client_for, index=None,  # type: ignore[arg-type]
                               seed=0)
    assert isinstance(gen, MethodGenerator) and gen.method == "cot" and gen.spec == "llm:x?method=cot"
    with pytest.raises(ValueError, match="one of zero-shot, cot, sets, not 'tot'"):
        await make_generator("llm:x?method=tot", refine=False, client_for=client_for, index=None,  # type: ignore[arg-type]
                             seed=0)
    with pytest.raises(ValueError, match="RMR"):
        await make_generator("llm:x?method=sets", refine=True, client_for=client_for, index=None,  # type: ignore[arg-type]
                             seed=0)



async def test_an_embedding_generator_draws_from_its_own_models_vocabulary() -> None:
    from models.embeddings import VocabIndex
    from models.eval.generators import EmbedGenerator
    from models.worker.embedding_backend import embedder_for

    async def client_for(name: str) -> Any:
        raise AssertionError("an embedding generator needs no language model")

    bundled = VocabIndex(embedder_for("minilm"))  # lazy: nothing is embedded by these checks
    plain = await make_generator("embed:minilm", refine=False, client_for=client_for, index=bundled, seed=0,
                                 embedder_for=embedder_for)
    assoc = await make_generator("embed:assoc?k=3", refine=False, client_for=client_for, index=bundled, seed=0,
                                 embedder_for=embedder_for)
    assert isinstance(plain, EmbedGenerator) and plain.index is bundled
    assert isinstance(assoc, EmbedGenerator) and assoc.k == 3
    assert assoc.index is not bundled and assoc.index.embedder is embedder_for("assoc")
    with pytest.raises(ValueError, match="embed:assoc cannot generate here; use embed:minilm"):
        await make_generator("embed:assoc", refine=False, client_for=client_for, index=bundled, seed=0)

async def test_both_methods_run_on_the_tiny_llama(client: Any) -> None:
    for method in ("cot", "sets"):
        out = await MethodGenerator(client, f"llm:tiny?method={method}", method, samples=2)(INST)
        # random weights rarely write the format: a message or a counted failure, never an exception
        assert out.message is None or 1 <= len(out.message.split()) <= 5
        assert out.raw

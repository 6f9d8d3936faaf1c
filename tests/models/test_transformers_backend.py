"""The transformers backend against hand computations on the same model: label scoring,
log-likelihood scoring and greedy generation, with and without prefix KV reuse."""

from __future__ import annotations

import pytest
import torch

from models.types import GenerateRequest, GenerateResult, Message, ScoreRequest, ScoreResult, ScoringMode
from models.worker.transformers_backend import TransformersBackend

RULES = (
    "You are playing Decrypto as the interceptor. Four secret keywords are numbered 1 to 4. "
    "Each turn the encoder gives three hints in code order. Answer with the letter of the code you believe."
)
LABELS = ("A", "B", "C", "D")


def turn(i: int, rules: str = RULES) -> tuple[Message, ...]:
    return (
        Message("system", rules),
        Message("user", f"Turn {i}: hints were ocean, bark, {['hot', 'cold', 'wet', 'dry'][i % 4]}. A) 1-2-3 B) 2-3-4 C) 4-1-2 D) 3-4-1"),
    )


def prompt_ids(tok, messages) -> list[int]:
    text = tok.apply_chat_template([m.to_json() for m in messages], add_generation_prompt=True, tokenize=False)
    return list(tok(text, add_special_tokens=False)["input_ids"])


@torch.inference_mode()
def hand_label_probs(model, tok, messages, labels) -> list[float]:
    ids = prompt_ids(tok, messages)
    logits = model(input_ids=torch.tensor([ids])).logits[0, -1].float()
    label_ids = [tok(lab, add_special_tokens=False)["input_ids"][0] for lab in labels]
    return torch.softmax(logits[label_ids], dim=-1).tolist()


def ok(r):
    assert not isinstance(r, Exception), r
    return r


def test_label_scoring_matches_hand_computation(backend: TransformersBackend, tiny_model, tiny_tokenizer):
    reqs = [ScoreRequest(turn(i), LABELS) for i in range(3)]
    results = backend.score_batch(reqs)
    for req, res in zip(reqs, results, strict=False):
        res = ok(res)
        assert isinstance(res, ScoreResult)
        expected = hand_label_probs(tiny_model, tiny_tokenizer, req.messages, LABELS)
        assert res.probs == pytest.approx(expected, abs=1e-4)
        assert sum(res.probs) == pytest.approx(1.0, abs=1e-6)
        assert res.prompt_tokens == len(prompt_ids(tiny_tokenizer, req.messages))


def test_prefix_reuse_gives_same_probabilities(backend: TransformersBackend, backend_nocache, tiny_model, tiny_tokenizer):
    first = ok(backend.score_batch([ScoreRequest(turn(0), LABELS)])[0])
    assert first.cached_tokens == 0
    # Later turns share the rules: they start from the stored prefix.
    later = backend.score_batch([ScoreRequest(turn(i), LABELS) for i in (1, 2, 3)])
    plain = backend_nocache.score_batch([ScoreRequest(turn(i), LABELS) for i in (1, 2, 3)])
    rules_len = len(tiny_tokenizer(
        tiny_tokenizer.apply_chat_template([{"role": "system", "content": RULES}], tokenize=False),
        add_special_tokens=False,
    )["input_ids"])
    for i, (a, b) in zip((1, 2, 3), zip(later, plain, strict=False), strict=False):
        a, b = ok(a), ok(b)
        assert a.cached_tokens == rules_len > 20
        assert b.cached_tokens == 0
        assert a.probs == pytest.approx(b.probs, abs=1e-4)
        assert a.probs == pytest.approx(hand_label_probs(tiny_model, tiny_tokenizer, turn(i), LABELS), abs=1e-4)
    assert backend.prefix_cache.stats().hits >= 3


def test_mixed_batch_of_hits_and_misses_with_padding(backend: TransformersBackend, tiny_model, tiny_tokenizer):
    backend.score_batch([ScoreRequest(turn(0), LABELS)])
    other_rules = "A different game: Who is the spy? Vote for the player whose description seems odd. " * 2
    reqs = [
        ScoreRequest(turn(1), LABELS),
        ScoreRequest((Message("user", "Short?"),), ("A", "B")),
        ScoreRequest(turn(2, other_rules), LABELS[:3]),
        ScoreRequest(turn(3), ("B", "A")),
        ScoreRequest(turn(4, other_rules), LABELS[:3]),
    ]
    for req, res in zip(reqs, backend.score_batch(reqs), strict=False):
        assert ok(res).probs == pytest.approx(hand_label_probs(tiny_model, tiny_tokenizer, req.messages, req.labels), abs=1e-4)


def test_bad_label_sets_are_refused_alone(backend: TransformersBackend):
    reqs = [
        ScoreRequest(turn(0), ("A", "Zyzzogeton")),
        ScoreRequest(turn(0), ("A", "B", "A")),
        ScoreRequest(turn(0), LABELS),
        ScoreRequest(turn(0), ("A", "")),
    ]
    multi, dup, good, empty = backend.score_batch(reqs)
    assert isinstance(multi, ValueError) and "'Zyzzogeton' is" in str(multi) and "tokens" in str(multi)
    assert isinstance(dup, ValueError) and "distinct" in str(dup)
    assert isinstance(empty, ValueError)
    assert isinstance(good, ScoreResult)
    with pytest.raises(ValueError, match="tokens"):
        backend.label_token_ids(("Zyzzogeton",))


def test_label_convention_follows_the_template(backend: TransformersBackend, tiny_tokenizer):
    # ChatML leaves a newline before the assistant's first token, so labels are scored bare.
    ids = backend.label_token_ids(("A", "B"))
    assert ids == (tiny_tokenizer("A", add_special_tokens=False)["input_ids"][0], tiny_tokenizer("B", add_special_tokens=False)["input_ids"][0])


@torch.inference_mode()
def hand_loglik(model, tok, messages, options) -> list[float]:
    ids = prompt_ids(tok, messages)
    text = tok.apply_chat_template([m.to_json() for m in messages], add_generation_prompt=True, tokenize=False)
    sums = []
    for o in options:
        full = list(tok(text + o, add_special_tokens=False)["input_ids"])
        assert full[: len(ids)] == ids
        logp = torch.log_softmax(model(input_ids=torch.tensor([full])).logits[0].float(), dim=-1)
        sums.append(sum(float(logp[p - 1, full[p]]) for p in range(len(ids), len(full))))
    return sums


@pytest.mark.parametrize("warm", [False, True])
def test_loglik_matches_hand_computation(backend: TransformersBackend, tiny_model, tiny_tokenizer, warm):
    if warm:
        backend.score_batch([ScoreRequest(turn(0), LABELS)])
    options = ("ocean waves", "tree", "a very long answer about the weather", "dry")
    req = ScoreRequest(turn(5), options, mode=ScoringMode.LOGLIK)
    res = ok(backend.score_batch([req])[0])
    expected = hand_loglik(tiny_model, tiny_tokenizer, req.messages, options)
    assert res.extra["loglik"] == pytest.approx(expected, abs=1e-3)
    probs = torch.softmax(torch.tensor(expected, dtype=torch.float64), dim=-1).tolist()
    assert res.probs == pytest.approx(probs, abs=1e-4)
    assert (res.cached_tokens > 0) == warm


def test_unknown_mode_fails_alone(backend: TransformersBackend):
    bad, good = backend.score_batch([ScoreRequest(turn(0), LABELS, mode="nope"), ScoreRequest(turn(0), LABELS)])  # type: ignore[arg-type]  # an unknown mode on purpose
    assert isinstance(bad, ValueError)
    assert isinstance(good, ScoreResult)


@torch.inference_mode()
def hand_greedy(model, tok, messages, n) -> str:
    ids = torch.tensor([prompt_ids(tok, messages)])
    out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False)
    return tok.decode(out[0, ids.shape[1] :], skip_special_tokens=True)


def test_greedy_generation_matches_model_generate(backend: TransformersBackend, tiny_model, tiny_tokenizer):
    reqs = [GenerateRequest(turn(i), max_tokens=12) for i in range(3)]
    cold = [ok(r) for r in backend.generate_batch(reqs[:1])]
    warm = [ok(r) for r in backend.generate_batch(reqs)]  # 1, 2 hit the stored rules prefix; batched together
    assert cold[0].cached_tokens == 0 and warm[1].cached_tokens > 0
    for req, res in zip(reqs, warm, strict=False):
        assert isinstance(res, GenerateResult)
        assert res.text == hand_greedy(tiny_model, tiny_tokenizer, req.messages, 12)
        assert 0 < res.completion_tokens <= 12
    assert cold[0].text == warm[0].text


def test_greedy_generation_padded_batch_without_cache(backend_nocache: TransformersBackend, tiny_model, tiny_tokenizer):
    reqs = [GenerateRequest((Message("user", "Hi" + " there" * k),), max_tokens=8) for k in (0, 5, 17)]
    for req, res in zip(reqs, backend_nocache.generate_batch(reqs), strict=False):
        assert ok(res).text == hand_greedy(tiny_model, tiny_tokenizer, req.messages, 8)


def test_stop_strings_truncate(backend: TransformersBackend):
    full = ok(backend.generate_batch([GenerateRequest(turn(1), max_tokens=16)])[0]).text
    assert len(full) > 4
    stop = full[2:4]
    cut = ok(backend.generate_batch([GenerateRequest(turn(1), max_tokens=16, stop=(stop,))])[0])
    assert cut.text == full[: full.find(stop)]
    assert stop not in cut.text


def test_seeded_sampling_is_reproducible(backend: TransformersBackend):
    req = GenerateRequest(turn(1), max_tokens=10, temperature=1.5, seed=7)
    a, b = (ok(r).text for r in backend.generate_batch([req, req]))
    c = ok(backend.generate_batch([req])[0]).text
    assert a == b == c
    others = {ok(backend.generate_batch([GenerateRequest(turn(1), max_tokens=10, temperature=1.5, seed=s)])[0]).text for s in range(5)}
    assert len(others) > 1


def test_bad_generate_request_fails_alone(backend: TransformersBackend):
    bad, good = backend.generate_batch([GenerateRequest(turn(0), max_tokens=0), GenerateRequest(turn(0), max_tokens=3)])
    assert isinstance(bad, ValueError)
    assert isinstance(good, GenerateResult)


def test_prefix_cache_is_bounded(tiny_model, tiny_tokenizer):
    b = TransformersBackend(tiny_model, tiny_tokenizer, model_id="t", prefix_cache_size=2, min_prefix_tokens=8)
    for k in range(4):
        ok(b.score_batch([ScoreRequest(turn(0, f"Rules of game number {k}. " * 4), LABELS)])[0])
    st = b.prefix_cache.stats()
    assert st.entries == 2 and st.evictions == 2


@pytest.mark.real_model
def test_real_model_scores_and_generates():
    b = TransformersBackend.load("default")
    q = (Message("system", "Answer with a single letter."), Message("user", "What colour is the sky on a clear day? A) green B) blue C) red"))
    res = ok(b.score_batch([ScoreRequest(q, ("A", "B", "C"))])[0])
    assert sum(res.probs) == pytest.approx(1.0, abs=1e-5)
    assert all(0.0 <= p <= 1.0 for p in res.probs)
    assert 0.0 < res.extra["label_mass"] <= 1.0
    gen = ok(b.generate_batch([GenerateRequest(q, max_tokens=8)])[0])
    assert gen.text.strip() and gen.completion_tokens > 0


def test_prompt_over_the_context_is_refused_alone(backend: TransformersBackend):
    huge = (Message("user", "word " * (backend.max_context + 10)),)
    bad, good = backend.score_batch([ScoreRequest(huge, LABELS), ScoreRequest(turn(0), LABELS)])
    assert isinstance(bad, ValueError) and "at most" in str(bad)
    assert isinstance(good, ScoreResult)
    (gbad,) = backend.generate_batch([GenerateRequest(huge, max_tokens=2)])
    assert isinstance(gbad, ValueError)


def test_count_tokens_matches_the_prompt(backend: TransformersBackend, tiny_tokenizer):
    assert backend.count_tokens(turn(2)) == len(prompt_ids(tiny_tokenizer, turn(2)))


@pytest.mark.real_model
def test_gguf_loads_without_accelerate_to_the_same_weights():
    from models.worker import default_model

    path = default_model.gguf_path()
    manual = default_model.load_gguf_model(path, use_accelerate=False)
    converted = TransformersBackend.load("default").model
    ids = torch.tensor([[1, 9690, 198, 42976, 1535, 30, 2]])
    with torch.inference_mode():
        assert torch.equal(manual(input_ids=ids).logits, converted(input_ids=ids).logits)
    assert manual.hf_quantizer is None


def test_a_model_without_a_chat_template_is_prompted_with_a_plain_transcript(tiny_model, tiny_tokenizer, caplog):
    import copy
    import logging

    from models.worker.transformers_backend import PLAIN_CHAT_TEMPLATE, with_chat_template

    bare = copy.deepcopy(tiny_tokenizer)
    bare.chat_template = None  # a base model's tokenizer (Gemma 3 270M's GGUF ships none)
    with caplog.at_level(logging.WARNING, logger="models.worker.transformers_backend"):
        tok = with_chat_template(bare, "base-model")
    assert tok.chat_template == PLAIN_CHAT_TEMPLATE
    assert [r.getMessage() for r in caplog.records] == [
        "model base-model has no chat template; prompting it with a plain User:/Assistant: transcript"]
    b = TransformersBackend(tiny_model, tok, model_id="base-model", device="cpu")
    text = b._template((Message("system", "Be brief."), Message("user", "Which one?")), True)
    assert text == f"{tok.bos_token}Be brief.\n\nUser: Which one?\nAssistant:"
    # The reply follows "Assistant:" without whitespace, so labels are scored with a leading space.
    assert b.label_token_ids(("A", "B")) == tuple(tok(" " + x, add_special_tokens=False)["input_ids"][0] for x in "AB")
    assert isinstance(b.score_batch([ScoreRequest(turn(0), LABELS)])[0], ScoreResult)
    # A tokenizer with its own template keeps it, silently.
    caplog.clear()
    assert with_chat_template(tiny_tokenizer, "chat-model").chat_template != PLAIN_CHAT_TEMPLATE
    assert not caplog.records


@pytest.mark.real_model
def test_a_gguf_file_is_dequantized_once_into_the_cache(tmp_path):
    from models.worker import default_model

    src = tmp_path / "files" / "small.gguf"
    src.parent.mkdir()
    src.symlink_to(default_model.gguf_path())
    cache = tmp_path / "cache"
    folder = default_model.ensure_converted(cache, gguf=src)
    assert folder.parent == cache and folder.name.startswith("SmolLM2-135M-Instruct.Q4_1-")
    marker = folder / ".hushtable-complete"
    first = marker.stat().st_mtime_ns
    assert default_model.ensure_converted(cache, gguf=src) == folder and marker.stat().st_mtime_ns == first
    loaded = TransformersBackend.load(str(src), cache_dir=cache)
    assert loaded.model_id == "small" and sorted(p.name for p in cache.iterdir()) == [folder.name]
    ids = torch.tensor([[1, 9690, 198, 42976, 1535, 30, 2]])
    with torch.inference_mode():
        assert torch.equal(loaded.model(input_ids=ids).logits, TransformersBackend.load("default").model(input_ids=ids).logits)


def test_a_second_backend_over_a_placed_model_leaves_it_where_it_is(tiny_tokenizer):
    # The benchmark builds a no-reuse twin over the loaded model; with the device left out it once
    # moved the model back to the CPU under the first backend (on a GPU: "index is on cuda:0,
    # different from other tensors on cpu"). A model on the meta device stands in for a GPU here:
    # moving it to the CPU fails loudly, so staying put is observable without one.
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tiny_tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1)
    with torch.device("meta"):
        model = LlamaForCausalLM(config)
    twin = TransformersBackend(model, tiny_tokenizer, model_id="twin", prefix_cache=False)
    assert twin.device.type == "meta"
    assert {p.device.type for p in twin.model.parameters()} == {"meta"}
    # Naming a device still moves it (here: back from a real CPU model to the CPU, a no-op).
    cpu = LlamaForCausalLM(config)
    assert TransformersBackend(cpu, tiny_tokenizer, model_id="cpu", device="cpu").device.type == "cpu"

"""Fixtures for the inference tests: a tiny random-weight llama with the bundled SmolLM2 tokenizer.

The tokenizer (and its chat template) is read straight from the bundled GGUF
file, so nothing is downloaded and nothing is written to the user's cache. The
model is built from a config at test time: 2 layers, hidden size 64, the
tokenizer's full vocabulary. Its weights are drawn with a wide initializer so
the logits are far from uniform and greedy choices are not near-ties.
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from models.worker.default_model import gguf_path
from models.worker.transformers_backend import TransformersBackend


@pytest.fixture(scope="session")
def tiny_tokenizer():
    path = gguf_path()
    return AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


@pytest.fixture(scope="session")
def tiny_model(tiny_tokenizer):
    torch.manual_seed(1234)
    config = LlamaConfig(
        vocab_size=len(tiny_tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        initializer_range=0.2,
        bos_token_id=tiny_tokenizer.bos_token_id,
        eos_token_id=tiny_tokenizer.eos_token_id,
        pad_token_id=tiny_tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config).eval()
    return model


@pytest.fixture
def backend(tiny_model, tiny_tokenizer) -> TransformersBackend:
    """A fresh backend (empty prefix cache) over the shared tiny model."""
    return TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny-llama", min_prefix_tokens=8)


@pytest.fixture
def backend_nocache(tiny_model, tiny_tokenizer) -> TransformersBackend:
    return TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny-llama", prefix_cache=False)

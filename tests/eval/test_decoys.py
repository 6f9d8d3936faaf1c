"""Decoys are made from the card alone and never name or contain the secret (or any card word)."""

from __future__ import annotations

from typing import Any

import pytest

from games import decks
from models.embeddings import overlaps
from models.eval.decoys import DEFAULT_DECOYS, EmbeddingDecoys, FixedDecoys, LLMDecoys, parse_decoys, pick
from models.worker.batcher import Batcher
from models.worker.embedding_backend import embedder_for
from models.worker.transformers_backend import TransformersBackend
from tests.eval.conftest import Down


@pytest.fixture(scope="module")
def embedding_decoys() -> EmbeddingDecoys:
    return EmbeddingDecoys(embedder_for("minilm"))


def test_embedding_decoys_never_contain_a_card_word(embedding_decoys: EmbeddingDecoys) -> None:
    for category, words in decks.cards()[::8]:  # every eighth card: a spread of topics, in seconds
        pool = embedding_decoys.pool_now(category, words)
        assert len(pool) >= DEFAULT_DECOYS + 3
        for secret in words:
            chosen = pick(pool, "some message", DEFAULT_DECOYS)
            assert not any(overlaps(d, secret) for d in chosen), (category, secret, chosen)
            assert not any(overlaps(d, category) for d in chosen)


def test_decoys_are_cached_per_card_and_avoid_the_message(embedding_decoys: EmbeddingDecoys) -> None:
    category, words = decks.cards()[3]
    pool = embedding_decoys.pool_now(category, words[:12])
    assert embedding_decoys.pool_now(category, words[:12]) is pool  # computed once per card
    chosen = pick(pool, pool[0], DEFAULT_DECOYS)  # a message equal to the top decoy
    assert pool[0] not in chosen and chosen == tuple(pool[1 : 1 + DEFAULT_DECOYS])


async def test_fixed_decoys_drop_terms_that_touch_the_card() -> None:
    fixed = FixedDecoys(["red fruit", "kitchen", "garden", "sweet", "snack", "market", "picnic"])
    pool = await fixed.pool("Fruits", ["Apple", "Banana", "Fruit salad"])
    assert "red fruit" not in pool and len(pool) == 6  # shares "fruit" with the category
    with pytest.raises(ValueError):
        pick(pool[:3], "anything", DEFAULT_DECOYS)  # too few: refused, not padded


def test_parse_decoys_reads_tagged_terms_only() -> None:
    text = "Sure!\n<decoy>outdoor fun</decoy>\n<decoy> healthy </decoy>\n<decoy>a b c d e f</decoy>\nnoise"
    assert parse_decoys(text) == ["outdoor fun", "healthy"]


async def test_llm_decoys_are_filtered_and_topped_up(tiny_model: Any, tiny_tokenizer: Any,
                                                     embedding_decoys: EmbeddingDecoys) -> None:
    backend = TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny-llama")
    batcher = Batcher(backend)
    await batcher.start()
    try:
        strategy = LLMDecoys(batcher, embedding_decoys, spec="llm:tiny", rounds=1)
        category, words = decks.cards()[0]
        pool = await strategy.pool(category, words[:12])
        assert len(pool) >= DEFAULT_DECOYS
        assert not any(overlaps(d, w) for d in pool for w in (*words[:12], category))
        assert await strategy.pool(category, words[:12]) is pool
    finally:
        await batcher.aclose()


async def test_llm_decoys_fall_back_when_the_model_fails(embedding_decoys: EmbeddingDecoys) -> None:

    strategy = LLMDecoys(Down(), embedding_decoys, spec="llm:down")
    category, words = decks.cards()[1]
    pool = await strategy.pool(category, words[:12])
    assert strategy.failures == 1 and len(pool) >= DEFAULT_DECOYS

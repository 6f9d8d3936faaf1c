"""Fixtures for the SNEAK tests: the tiny random-weight llama of tests/models, and a real SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from models.types import GenerateRequest, GenerateResult, InferenceError, ScoreRequest, ScoreResult
from models.worker.batcher import Batcher
from models.worker.transformers_backend import TransformersBackend
from storage.store import Store
from tests.models.conftest import tiny_model, tiny_tokenizer  # noqa: F401  (shared session fixtures)


class Down:
    """An inference client whose worker is down: every call raises InferenceError, as HttpClient does."""

    model_id = "down"

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        raise InferenceError("worker down")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise InferenceError("worker down")

    async def aclose(self) -> None:
        return None


@pytest.fixture
async def client(tiny_model: Any, tiny_tokenizer: Any) -> AsyncIterator[Batcher]:  # noqa: F811
    """The worker's batcher over the tiny random llama (fresh prefix cache per test)."""
    batcher = Batcher(TransformersBackend(tiny_model, tiny_tokenizer, model_id="tiny-llama", min_prefix_tokens=8))
    await batcher.start()
    yield batcher
    await batcher.aclose()


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    st = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        yield st
    finally:
        await st.aclose()

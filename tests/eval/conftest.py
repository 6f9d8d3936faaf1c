"""Fixtures for the SNEAK tests: the tiny random-weight llama of tests/models, and a real SQLite store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage.store import Store
from tests.models.conftest import tiny_model, tiny_tokenizer  # noqa: F401  (shared session fixtures)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    st = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'log.db'}")
    try:
        yield st
    finally:
        await st.aclose()

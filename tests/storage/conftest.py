"""What several storage tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from storage.store import Store
from tests.bot.core import crash_worker
from tests.postgres import PostgresServer
from tests.storage.test_backends import Probe


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[Store]:
    """A Store on the test's database: a SQLite file, then PostgreSQL (``db_url``)."""
    st = await Store.open(db_url)
    try:
        yield st
    finally:
        await st.aclose()


@pytest.fixture(scope="session")
def crash_reference(postgres_server: PostgresServer) -> Iterator[str]:
    """A database holding the crash harness's scripted games played once by one process, never
    killed: the reference log the kill tests compare against (it is the same every time, so it
    is played once per run, not once per test)."""
    url = postgres_server.create_database()
    probe = Probe(url)
    try:
        assert crash_worker.run(url, probe.actions)
    finally:
        probe.close()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)

"""Fixtures every room may use: a real PostgreSQL server (see tests/postgres.py) and a database
URL parametrised over SQLite and PostgreSQL, so one test runs against both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests.postgres import PostgresServer, disabled_reason, start_server

# Hypothesis keeps its example database in .venv like the other tools' caches: a test run leaves
# nothing beside the checkout's own files.
set_hypothesis_home_dir(str(Path(__file__).resolve().parents[1] / ".venv" / ".hypothesis"))

BACKENDS = ("sqlite", "postgres")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole run; fails (never skips) when it cannot start."""
    reason = disabled_reason()
    if reason:
        pytest.skip(reason)
    server = start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A fresh, empty database on the test server, dropped afterwards."""
    url = postgres_server.create_database()
    try:
        yield url
    finally:
        postgres_server.drop_database(url)


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty database: a SQLite file, then a PostgreSQL database (the test runs once on each)."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'log.db'}"
    return str(request.getfixturevalue("pg_url"))

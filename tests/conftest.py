"""Fixtures every room may use: a real PostgreSQL server (see tests/postgres.py) and a database
URL parametrised over SQLite and PostgreSQL, so one test runs against both.

Deals drawn at random are reproducible: a table started without a seed (a member's Start button)
draws its deal from the run's seed and the test's id, and a bot process a test starts through
``tests.seeds.bot_env`` deals from ``HUSHTABLE_DEAL_SEED`` drawn the same way. The seed is printed at
the top of the run and under every failure; ``HUSHTABLE_TEST_SEED=<seed>`` runs every test with the
same deals again."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Generator, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from filelock import FileLock
from hypothesis.configuration import set_hypothesis_home_dir

from bot.settings import default_model_cache
from models.worker import default_model
from tests import seeds
from tests.postgres import PostgresServer, disabled_reason, start_server
from tests.seeds import RUN_SEED, SEED_ENV

# Hypothesis keeps its example database in .venv like the other tools' caches: a test run leaves
# nothing beside the checkout's own files.
set_hypothesis_home_dir(str(Path(__file__).resolve().parents[1] / ".venv" / ".hypothesis"))

# A test that loads the bundled model without naming a cache converts it where the settings' default
# points (under make test: .hushtable, through XDG_CACHE_HOME), never into the user's home.
default_model.DEFAULT_CACHE_DIR = default_model_cache()

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ("sqlite", "postgres")


def pytest_report_header() -> str:
    return f"random deals: {SEED_ENV}={RUN_SEED} reproduces them"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        child = seeds.given()
        dealt = "" if child is None else f" (the bot processes it started dealt from {seeds.DEAL_SEED_ENV}={child})"
        report.sections.append(("random deals", f"rerun with {SEED_ENV}={RUN_SEED}{dealt}"))


@pytest.fixture(autouse=True)
def deal_seeds(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table or tournament started without a seed draws it from the run's seed and this test's id."""
    from bot.core import lobby
    from bot.tournaments import manage

    seeds.begin_test(request.node.nodeid)
    draw = SimpleNamespace(randbits=seeds.draw(request.node.nodeid).getrandbits)
    monkeypatch.setattr(lobby, "pysecrets", draw)
    monkeypatch.setattr(manage, "secrets", draw)


@pytest.fixture(autouse=True)
def held_secrets_end_with_the_test() -> Iterator[None]:
    """The secrets a test's games hold in the process's log masker are let go when the test ends: a game a
    test leaves running would otherwise mask its words (and their forms: "time" hides "timed") in the log
    lines of whatever test the same process runs next."""
    from bot.ops.masking import MASKER

    before = MASKER.owners()
    yield
    for owner in MASKER.owners() - before:
        MASKER.release(owner)


@pytest.fixture(scope="session")
def warm_caches(request: pytest.FixtureRequest) -> None:
    """The vocabulary matrices and the converted model every bot a test starts reads (``tests/warm.py``),
    filled once per test run before the first test that needs them: one test process fills them while
    the others wait at the lock, instead of each bot embedding the same words until it is stopped."""
    cache = default_model_cache()
    cache.mkdir(parents=True, exist_ok=True)
    run = str(request.getfixturevalue("testrun_uid")) if request.config.pluginmanager.has_plugin("xdist") else ""
    done = cache / f".warm-{run}" if run else None
    with FileLock(str(cache / ".warm.lock")):
        if done is not None and done.exists():  # another test process of this run filled them
            return
        proc = subprocess.run([sys.executable, "-m", "tests.warm"], cwd=ROOT, capture_output=True, text=True,
                              check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.returncode == 0, f"filling the caches failed:\n{proc.stderr[-3000:]}"
        for old in cache.glob(".warm-*"):  # earlier runs' marks
            old.unlink(missing_ok=True)
        if done is not None:
            done.touch()


@pytest.fixture(autouse=True)
def _warm_for_real_models(request: pytest.FixtureRequest) -> None:
    """Tests of the bundled models read the filled caches too."""
    if request.node.get_closest_marker("real_model") is not None:
        request.getfixturevalue("warm_caches")


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

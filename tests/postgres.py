"""A real PostgreSQL server for the tests, started by pytest itself (nothing to start outside it).

``pgserver`` ships PostgreSQL binaries in a wheel and starts a private server in a
folder of ours, listening on a Unix socket there; as root it runs the server as
its own ``pgserver`` system user. Each test gets a fresh database on that server.

Environment:
- ``HUSHTABLE_TEST_POSTGRES=off`` skips the Postgres runs, with that reason shown;
  nothing else skips them: a server that cannot start fails the tests loudly.
- ``HUSHTABLE_TEST_POSTGRES_URL=postgresql://user:pw@host/db`` uses that server
  instead (an admin database on it: the tests create and drop their own databases).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import URL, make_url

DISABLE_ENV = "HUSHTABLE_TEST_POSTGRES"
URL_ENV = "HUSHTABLE_TEST_POSTGRES_URL"


class PostgresUnavailable(RuntimeError):
    """The test server could not be started (the tests that need it fail with this)."""


def disabled_reason() -> str | None:
    """Why Postgres runs are skipped, when an operator said so explicitly; else None."""
    value = os.environ.get(DISABLE_ENV, "").strip().lower()
    if value in ("0", "off", "no", "false", "disabled"):
        return f"PostgreSQL runs disabled by {DISABLE_ENV}={os.environ[DISABLE_ENV]}"
    return None


@dataclass
class PostgresServer:
    """A running server: ``admin`` is a URL to its maintenance database."""

    admin: URL
    _handle: Any = None
    _folder: str | None = None
    _names: itertools.count[int] = itertools.count(1)

    def url_for(self, database: str) -> str:
        """An async SQLAlchemy URL for one database on this server."""
        url: str = self.admin.set(drivername="postgresql+asyncpg", database=database).render_as_string(hide_password=False)
        return url

    async def _admin(self, sql: str) -> None:
        import asyncpg

        a = self.admin
        kw: dict[str, Any] = {"user": a.username, "password": a.password, "database": a.database or "postgres",
                              "host": a.query.get("host") or a.host or "localhost"}
        if a.port:
            kw["port"] = a.port
        conn = await asyncpg.connect(**kw)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    def _run_admin(self, sql: str) -> None:
        # On a thread of its own: callers may be inside a running event loop (an async test).
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, self._admin(sql)).result()

    def create_database(self) -> str:
        """A new empty database; returns its async URL."""
        name = f"hush_{os.getpid()}_{next(self._names)}"
        self._run_admin(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def drop_database(self, url: str) -> None:
        name = make_url(url).database
        self._run_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cleanup()
            self._handle = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def start_server() -> PostgresServer:
    """Start pgserver in a short temporary folder (Unix socket paths are limited to ~100 bytes)."""
    external = os.environ.get(URL_ENV)
    if external:
        return PostgresServer(make_url(external))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns that XDG_RUNTIME_DIR is unset (CI, root)
            import pgserver
    except ImportError as exc:  # the dev extra was not installed
        raise PostgresUnavailable(f"pgserver is not installed ({exc}); `pip install -e '.[dev]'`, or set "
                                  f"{DISABLE_ENV}=off to skip the PostgreSQL runs") from exc
    folder = tempfile.mkdtemp(prefix="hushpg-")
    os.chmod(folder, 0o755)  # as root, the server runs as the pgserver user and must reach its data folder
    try:
        handle = pgserver.get_server(folder, cleanup_mode="stop")  # type: ignore[attr-defined]
    except Exception as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise PostgresUnavailable(f"could not start PostgreSQL with pgserver in {folder}: {exc}") from exc
    admin = make_url(handle.get_uri())
    return PostgresServer(admin, handle, folder)

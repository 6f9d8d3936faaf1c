"""Engines and migrations: how a database URL becomes an async engine, and the schema its newest revision.

``plan_engine`` normalises a URL for asyncio (``sqlite:///x.db`` gets aiosqlite,
``postgresql://`` gets asyncpg) and picks per-backend options without connecting;
``make_engine`` builds the engine and, on SQLite, installs the pragmas and the
transaction hooks described in ``storage.store``; ``make_turn_engine`` gives a
SQLite file a plain synchronous engine for the turn log's group commits
(``storage.turnlog``). ``alembic_config`` and ``head_revision`` drive the
migrations in ``storage/migrations`` without an alembic.ini.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

import sqlalchemy as sa
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import event as sa_event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import StaticPool

T = TypeVar("T")

MIGRATIONS_DIR = Path(__file__).parent / "migrations"

BUSY_TIMEOUT_MS = 5000  # how long a write waits for another process's write to the same SQLite file

SQLITE_PRAGMAS: tuple[str, ...] = (
    # First: every later statement, the switch to WAL included (it reads the file's header), waits
    # on another process's lock instead of failing at once with "database is locked".
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    # Freed space is zeroed: an erased member's words must not stay behind in free pages or in
    # the unused room of a page (storage.people).
    "PRAGMA secure_delete=ON",
)

# Execution option that marks the write engine; the "begin" hook reads it.
WRITE_OPTION = "hushtable_write"

# The async driver used when a URL names only the backend ("sqlite:///x.db").
_DEFAULT_ASYNC_DRIVER = {"sqlite": "aiosqlite", "postgresql": "asyncpg", "mysql": "aiomysql"}
# Drivers that cannot run under asyncio: refused with a sentence rather than a driver traceback.
_SYNC_DRIVERS = {"pysqlite", "psycopg2", "pg8000", "pymysql", "mysqldb"}



@dataclass(frozen=True, slots=True)
class EnginePlan:
    """How a URL becomes an engine; computed without connecting (or importing the driver)."""

    url: URL
    backend: str
    in_memory: bool
    engine_kwargs: Mapping[str, Any]

    @property
    def is_sqlite(self) -> bool:
        return self.backend == "sqlite"

    @property
    def sqlite_file(self) -> Path | None:
        """The file of a SQLite database (None for in-memory and server databases). A SQLite URI
        (``sqlite+aiosqlite:///file:/p/x.db?mode=ro&uri=true``) names the file after ``file:``."""
        if not self.is_sqlite or self.in_memory or not self.url.database:
            return None
        return Path(sqlite_uri_path(self.url.database, self.url.query)).expanduser()


def _is_uri(query: Mapping[str, Any]) -> bool:
    return str(query.get("uri", "")).lower() in ("true", "1", "yes")


def sqlite_uri_path(database: str, query: Mapping[str, Any]) -> str:
    """The file path a SQLite database name stands for: itself, or for a URI (``uri=true``) the path after ``file:``."""
    if _is_uri(query) and database.startswith("file:"):
        from urllib.parse import unquote, urlsplit

        return unquote(urlsplit(database).path)
    return database


class BadDatabaseURL(ValueError):
    """A database URL that cannot be read; the message says what to write (and holds no password)."""


def plan_engine(url: str | URL) -> EnginePlan:
    """Normalise a database URL for asyncio and pick the engine options for its backend.

    ``sqlite:///x.db`` becomes ``sqlite+aiosqlite:///x.db`` and ``postgresql://``
    becomes ``postgresql+asyncpg://``; a synchronous driver named explicitly is
    refused with a ValueError, as is a port that is not a number.
    """
    try:
        u = make_url(url)
    except ValueError:  # SQLAlchemy's int() of the port: its own message names no URL part
        raise BadDatabaseURL("the database URL's port must be a number, as in postgresql+asyncpg://host:5432/db") from None
    backend = u.get_backend_name()
    if "+" in u.drivername:
        driver = u.drivername.split("+", 1)[1]
        if driver in _SYNC_DRIVERS:
            raise ValueError(
                f"{u.drivername} is a synchronous driver; use an async one such as "
                f"{backend}+{_DEFAULT_ASYNC_DRIVER.get(backend, '<async driver>')}"
            )
    else:
        default = _DEFAULT_ASYNC_DRIVER.get(backend)
        if default is None:
            raise ValueError(f"no default async driver for {backend!r}: name one, as in {backend}+<driver>://")
        u = u.set(drivername=f"{backend}+{default}")
    # A statement's values (a secret word in a private message, a person's clue) stay out of an error's
    # text, which may be logged or shown: SQLAlchemy's errors then name the statement only.
    kwargs: dict[str, Any] = {"hide_parameters": True}
    in_memory = False
    if backend == "sqlite":
        db = u.database or ""
        in_memory = sqlite_uri_path(db, u.query) in ("", ":memory:") or u.query.get("mode") == "memory"
        if in_memory:
            # Every new connection to :memory: is a new, empty database: share one.
            kwargs["poolclass"] = StaticPool
    else:
        # Server databases drop idle connections; check before use.
        kwargs["pool_pre_ping"] = True
    return EnginePlan(url=u, backend=backend, in_memory=in_memory, engine_kwargs=kwargs)


# What a Database that runs its own checkpoints (``storage.checkpoint``) adds on a SQLite file.
OWN_CHECKPOINTS_PRAGMA = "PRAGMA wal_autocheckpoint=0"


def _install_sqlite_hooks(engine: sa.Engine, *, own_checkpoints: bool = False) -> None:
    pragmas = (*SQLITE_PRAGMAS, OWN_CHECKPOINTS_PRAGMA) if own_checkpoints else SQLITE_PRAGMAS

    @sa_event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The sqlite3 driver begins transactions lazily (not before SELECT or DDL);
        # turn that off so the "begin" hook below decides, as SQLAlchemy documents.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        for pragma in pragmas:
            cur.execute(pragma)
        cur.close()

    @sa_event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        # IMMEDIATE takes the write lock up front, so a write transaction that reads
        # first (max seq) never has to upgrade a read snapshot and fail with SQLITE_BUSY.
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(WRITE_OPTION) else "BEGIN")


def make_engine(url: str | URL | EnginePlan, *, own_checkpoints: bool = False) -> AsyncEngine:
    """An async engine for the URL, with the SQLite pragmas and transaction hooks where they apply.

    ``own_checkpoints``: its connections leave WAL checkpoints to the caller (``storage.checkpoint``)."""
    plan = url if isinstance(url, EnginePlan) else plan_engine(url)
    engine = create_async_engine(plan.url, **plan.engine_kwargs)
    if plan.is_sqlite:
        _install_sqlite_hooks(engine.sync_engine, own_checkpoints=own_checkpoints)
    return engine


def make_turn_engine(plan: EnginePlan) -> sa.Engine | None:
    """For a SQLite file, a plain synchronous engine for the turn log's group commits.

    Through aiosqlite every statement is a round trip to its thread (about twenty for one
    turn); a whole group commit on this engine runs at once, on the event loop when the file's
    write lock is free (``write_now``) or in one trip to a worker thread. WAL lets it write
    beside the async engine's readers; the store's write lock keeps writers in line. Its
    commits leave WAL checkpoints to the Database's ``storage.checkpoint.Checkpointer``.
    """
    if not plan.is_sqlite or plan.in_memory:
        return None
    engine = sa.create_engine(plan.url.set(drivername="sqlite+pysqlite"), pool_size=1, max_overflow=0,
                              hide_parameters=True)
    _install_sqlite_hooks(engine, own_checkpoints=True)
    return engine.execution_options(**{WRITE_OPTION: True})


class WriteLockBusy(Exception):
    """Another process holds the SQLite file's write lock (``write_now`` did nothing)."""


def write_now(engine: sa.Engine, fn: Callable[[sa.Connection], T]) -> T:
    """``fn`` in one write transaction on the calling thread, if the SQLite file's write lock is
    free right now; ``WriteLockBusy``, having done nothing, when another process holds it (the
    caller then waits for it in a thread, with the busy timeout).

    For ``make_turn_engine``'s engine, called on the event loop with the store's write lock held:
    a commit in WAL mode with ``synchronous=NORMAL`` and no automatic checkpoint (``storage.checkpoint``)
    is an append to the WAL with no sync, about a millisecond of work, cheaper on the loop than a
    trip to a thread, which with the loop busy waits for the GIL at each of its statements."""
    with engine.connect() as conn:
        raw = conn.connection.driver_connection  # the pragma on the driver: through SQLAlchemy it would begin
        assert raw is not None
        raw.execute("PRAGMA busy_timeout=0")
        try:
            trans = conn.begin()  # BEGIN IMMEDIATE (the "begin" hook): takes the write lock or fails now
        except sa.exc.OperationalError as exc:
            code = getattr(exc.orig, "sqlite_errorcode", None)  # extended: SQLITE_BUSY_RECOVERY is busy too
            if code is not None and code & 0xFF == sqlite3.SQLITE_BUSY:
                raise WriteLockBusy from None
            raise
        finally:
            raw.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        with trans:
            return fn(conn)


def out_of_capacity(exc: BaseException) -> bool:
    """Whether ``exc`` says the database could not take the work now, not that the work was wrong: no pooled
    connection came free within the pool's timeout, or a SQLite file stayed locked by another writer past the
    busy timeout. A caller answers "busy, try again" for these; anything else is a fault."""
    if isinstance(exc, sa.exc.TimeoutError):  # the pool's checkout timeout ("QueuePool limit ... reached")
        return True
    if isinstance(exc, sa.exc.OperationalError):
        code = getattr(exc.orig, "sqlite_errorcode", None)
        return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return False


def alembic_config(url: str | URL | None = None, *, output_buffer: TextIO | None = None) -> Config:
    """A programmatic alembic Config for storage/migrations (no alembic.ini needed).

    ``output_buffer`` receives the SQL of offline runs (``command.upgrade(cfg, "head", sql=True)``).
    """
    cfg = Config(output_buffer=output_buffer)
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        rendered = plan_engine(url).url.render_as_string(hide_password=False)
        # Config values go through configparser interpolation: escape "%" (URL-encoded passwords).
        cfg.set_main_option("sqlalchemy.url", rendered.replace("%", "%%"))
    return cfg


def head_revision() -> str:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    if len(heads) != 1:
        raise RuntimeError(f"migrations must have exactly one head, found {heads}")
    return heads[0]

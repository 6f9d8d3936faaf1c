"""The database under the log: one engine, its units of work, the schema's revision.

``Database`` is what every repository is handed. It gives out two units of work:
``write()``, one write transaction (committed when the block ends, rolled back on an
error), and ``read()``, one read session. Repositories never open connections of
their own, so every write of a process goes through the same lock:

- writes in this process are serialised by an ``asyncio.Lock`` (it is what makes
  ``max(seq)+1`` safe between coroutines without relying on isolation levels);
- on SQLite the driver's own transaction handling is off and SQLAlchemy emits
  ``BEGIN IMMEDIATE`` for writes (``storage.engine``), so a write holds the file from
  its first read to its commit while readers in WAL mode go on in parallel;
- an in-memory database (``sqlite+aiosqlite://``) lives on one shared connection, so
  reads then take the write lock too.

``write_sync(fn)`` is one write transaction whose statements are a synchronous function. On a
SQLite file it runs whole on a plain sqlite3 engine, the one the turn log's group commits use
(``storage.engine.make_turn_engine``): on the event loop itself while no other process holds the
file's write lock (``storage.engine.write_now``: about a millisecond of work, no sync), in a
worker thread when one does. Through aiosqlite each statement is a trip to the driver's thread
and back through the event loop, the write lock held all the while, so that a busy loop
stretches the lock's hold and every turn queued behind it waits; and a worker thread waits for
the GIL after each statement while the loop runs commands. A long write (``on_loop=False``: an
erasure's batch of games, tens of milliseconds of statements) always runs in the worker thread, so
the tables on the loop go on meanwhile. Elsewhere it runs on the async write engine (``run_sync``).

On a SQLite file no write pays for a WAL checkpoint: the Database's ``Checkpointer`` runs them
in a thread of its own after writes (``storage.checkpoint``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Self, TypeVar

import sqlalchemy as sa
from alembic import command
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import URL
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from storage.checkpoint import Checkpointer
from storage.engine import (
    WRITE_OPTION,
    EnginePlan,
    WriteLockBusy,
    alembic_config,
    head_revision,
    make_engine,
    make_turn_engine,
    plan_engine,
    write_now,
)
from storage.records import DatabaseMissing, DatabaseReadOnly, SchemaOutOfDate, WriteUnknown

T = TypeVar("T")
log = logging.getLogger(__name__)

# Drivers that log every statement with its parameters at DEBUG: rows hold moves and dealt secrets,
# and no log line may carry a secret, so they never log below WARNING.
_CHATTY_DRIVER_LOGGERS = ("aiosqlite", "asyncpg")

MIGRATION_LOCK_KEY = 0x4875_7368_7461_626C  # "Hushtabl": the PostgreSQL advisory lock migrations take


def outcome_unknown(exc: BaseException) -> bool:
    """Whether a failed write may still have committed: the connection to the database was lost,
    perhaps after its COMMIT reached the server. An error the database answered with (a
    constraint, a lock timeout) is not one: that transaction was rolled back."""
    if isinstance(exc, sa.exc.DBAPIError):
        return bool(exc.connection_invalidated)
    return isinstance(exc, OSError)


async def write_once(what: str, write: Callable[[], Awaitable[T]], landed: Callable[[], Awaitable[T | None]],
                     *, unknown: Callable[[], None] | None = None) -> T:
    """Run a write exactly once although the answer to its COMMIT may be lost.

    ``write`` runs one write transaction. When it fails with an unknown outcome
    (``outcome_unknown``), ``landed`` reads back whether that transaction committed after all:
    what the write would have returned when it did (it is answered as written, never written a
    second time), None when it did not, and then the write is tried once more. ``unknown()`` is
    told of each unknown outcome. WriteUnknown (``written`` False) when the second try is lost
    too and nothing was written; ``written`` None when the read-back itself failed."""
    for _ in range(2):
        try:
            return await write()
        except Exception as exc:
            if not outcome_unknown(exc):
                raise
            log.warning("%s: the database's answer was lost (%s); reading back", what, type(exc).__name__)
        if unknown is not None:
            unknown()
        try:
            found = await landed()
        except (sa.exc.DBAPIError, OSError):
            raise WriteUnknown(what, None) from None
        if found is not None:
            return found
    raise WriteUnknown(what, False)


def quiet_driver_logs() -> None:
    for name in _CHATTY_DRIVER_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


class Database:
    """An engine and its units of work. Make one with ``await Database.open(url)`` (or a subclass's
    ``open``); close it with ``aclose()``."""

    def __init__(self, engine: AsyncEngine, plan: EnginePlan) -> None:
        self.engine = engine
        self.plan = plan
        self.writer = engine.execution_options(**{WRITE_OPTION: True})
        self.write_lock = asyncio.Lock()
        # A SQLite file's synchronous write engine (None elsewhere): see ``write_sync``.
        self.sync_writer: sa.Engine | None = make_turn_engine(plan)
        path = plan.sqlite_file
        self.checkpointer: Checkpointer | None = Checkpointer(path) if path is not None else None
        self._sessions = async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)
        # One shared connection (in-memory SQLite) cannot hold a read and a write transaction at once.
        self._read_lock: asyncio.Lock | None = self.write_lock if plan.in_memory else None

    @classmethod
    async def open(cls, url: str | URL, *, create: bool = True, must_exist: bool = False) -> Self:
        """Connect and bring the schema to the newest migration (``create=False``: only check it is);
        a schema already at the newest one is only read, so opening takes no write lock.

        ``must_exist``: a missing SQLite file raises `DatabaseMissing` instead of becoming a new,
        empty log (commands that read a log, such as ``export`` or ``doctor``, use it)."""
        plan = plan_engine(url)
        quiet_driver_logs()
        path = plan.sqlite_file  # a SQLite URI's file is the path after "file:"
        if path is not None:
            if must_exist and not path.is_file():
                raise DatabaseMissing(f"no database at {path} (set HUSHTABLE_DATABASE_URL or pass --database)")
            path.parent.mkdir(parents=True, exist_ok=True)
        db = cls(make_engine(plan, own_checkpoints=path is not None), plan)
        try:
            # The revision is read first, and only a schema behind the code takes the write lock to
            # migrate: a command that only reads (stats, export) never waits on the lock that another
            # process's writes hold (a SQLite file's readers in WAL mode never wait on its writer),
            # so it does not fail with "database is locked" when a long write outlasts the busy timeout.
            current, head = await db.revision(), head_revision()
            if current != head:
                if not create:
                    raise SchemaOutOfDate(f"database is at revision {current}, code expects {head}; run migrations")
                await db.migrate()
        except BaseException:
            await db.engine.dispose()
            raise
        return db

    def wrote(self) -> None:
        """Told after each committed write (the turn log's groups too): schedules a WAL checkpoint."""
        if self.checkpointer is not None:
            self.checkpointer.wrote()

    async def aclose(self) -> None:
        if self.checkpointer is not None:
            await self.checkpointer.aclose()
        if self.sync_writer is not None:
            self.sync_writer.dispose()
        await self.engine.dispose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ units of work

    @contextlib.asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One write transaction: committed when the block ends, rolled back on an error."""
        async with self.write_lock:
            async with self.writer.begin() as conn:
                yield conn
        self.wrote()

    async def write_sync(self, fn: Callable[[sa.Connection], T], *, on_loop: bool = True) -> T:
        """One write transaction made of ``fn``'s statements: committed when it returns, rolled back
        when it raises (see the module's docstring for where it runs; ``on_loop=False`` for a long one)."""
        async with self.write_lock:
            engine = self.sync_writer
            if engine is None:
                async with self.writer.begin() as conn:
                    result = await conn.run_sync(fn)
                self.wrote()
                return result

            if on_loop:
                try:
                    result = write_now(engine, fn)  # on the loop when SQLite's write lock is free
                except WriteLockBusy:
                    pass
                else:
                    self.wrote()
                    return result

            def transaction() -> T:
                with engine.begin() as conn:
                    return fn(conn)

            done = asyncio.ensure_future(asyncio.to_thread(transaction))
            try:
                result = await asyncio.shield(done)
            except asyncio.CancelledError:
                # The transaction goes on in its thread: the lock is held until it is over, so that
                # no other write of this process starts beside it.
                await asyncio.wait({done})
                raise
            self.wrote()
            return result

    @contextlib.asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncSession]:
        """One read session; the rows it hands out are detached (changing them changes nothing)."""
        async with self._read_lock or contextlib.nullcontext():
            async with self._sessions() as session:
                yield session

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        """One read-only Core connection, for a statement that needs no ORM rows."""
        async with self._read_lock or contextlib.nullcontext():
            async with self.engine.connect() as conn:
                yield conn

    # ------------------------------------------------------------------ schema

    async def migrate(self, revision: str = "head") -> None:
        """Run ``alembic upgrade`` on this database's own engine and transaction (idempotent)."""
        cfg = alembic_config(self.plan.url)

        def _upgrade(sync_conn: sa.Connection) -> None:
            cfg.attributes["connection"] = sync_conn
            command.upgrade(cfg, revision)

        async with self.write() as conn:
            if conn.dialect.name == "postgresql":
                # Several processes starting at once on one database migrate one after the other
                # (the lock ends with this transaction); the later ones find the schema current.
                await conn.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK_KEY})
            await conn.run_sync(_upgrade)

    async def revision(self) -> str | None:
        """The alembic revision the database is at (None when never migrated)."""

        def _current(sync_conn: sa.Connection) -> str | None:
            return MigrationContext.configure(sync_conn).get_current_revision()

        async with self.connect() as conn:
            return await conn.run_sync(_current)

    async def check_writable(self) -> None:
        """Raise DatabaseReadOnly with a clear sentence when the database refuses writes."""
        try:
            async with self.write() as conn:
                await conn.execute(sa.text("UPDATE alembic_version SET version_num = version_num"))
        except sa.exc.OperationalError as exc:
            text = str(exc).lower()
            if "readonly" in text or "read-only" in text or "read only" in text:
                raise DatabaseReadOnly(
                    f"the database {self.plan.url.render_as_string(hide_password=True)} is read-only: "
                    "Hushtable must write every move; fix the file's permissions or the database role") from None
            raise

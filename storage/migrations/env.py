"""Alembic environment for the game log, configured programmatically (no alembic.ini).

Two ways in:
- ``storage.store.Store.open`` runs ``command.upgrade`` inside ``run_sync`` and
  hands its own connection in ``config.attributes["connection"]``, so the
  migration shares the store's engine, pragmas and transaction;
- ``python -m storage.migrations`` passes only ``sqlalchemy.url``; an async
  engine is then made here for the duration of the command.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from storage.tables import metadata

config = context.config
target_metadata = metadata


def _configure(connection: Connection | None = None, url: str | None = None) -> None:
    context.configure(
        connection=connection,
        url=url,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=True,
        compare_type=True,
        literal_binds=connection is None,
    )


def _run(connection: Connection) -> None:
    _configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()


async def _run_async(url: str) -> None:
    from storage.engine import make_engine  # late: engine imports alembic config helpers

    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_run)
    finally:
        await engine.dispose()


def run_migrations_offline() -> None:
    _configure(url=config.get_main_option("sqlalchemy.url"))
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no connection and no sqlalchemy.url: use storage.engine.alembic_config(url)")
    asyncio.run(_run_async(url))


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()

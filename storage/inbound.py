"""Inbound claims: the platform events already handled, so a redelivered one writes nothing.

Every claim in the code goes through ``claim_keys``: the turn log's group commit
claims a group's keys with it, and every other write (a lobby edit, a start, a join)
through ``claim``, its one-key form, inside the caller's own write transaction. One
``INSERT ... ON CONFLICT DO NOTHING RETURNING key`` instead of a select then an
insert: the database decides, so two processes claiming one key cannot both win.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from storage.database import Database
from storage.tables import InboundRow, table_of, utcnow

_inbound = table_of(InboundRow)

# One statement per dialect, built once: executed with the rows as parameters (executemany with
# RETURNING), it is compiled once and found in SQLAlchemy's cache after that, where a statement
# with the rows in its VALUES is built and compiled again for every group.
_CLAIM = {
    name: insert(_inbound).on_conflict_do_nothing(index_elements=[_inbound.c.key]).returning(_inbound.c.key)
    for name, insert in (("postgresql", pg_insert), ("sqlite", sqlite_insert))
}


def claim_keys(conn: sa.Connection, claims: Sequence[tuple[str, int | None]], now: datetime) -> set[str]:
    """Claim ``(key, game_id)`` pairs inside the caller's write transaction; returns the keys this
    call claimed (a key seen before, or twice in ``claims``, is claimed once, by its first pair)."""
    first: dict[str, int | None] = {}
    for key, game_id in claims:
        first.setdefault(key, game_id)
    if not first:
        return set()
    rows = [{"key": k, "game_id": g, "created_at": now} for k, g in first.items()]
    claim_stmt = _CLAIM.get(conn.dialect.name)
    if claim_stmt is not None:
        return set(conn.execute(claim_stmt, rows).scalars())
    # Other backends: the plain way, under the write lock.
    seen = set(conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key.in_(list(first)))).scalars())
    fresh = [r for r in rows if r["key"] not in seen]
    if fresh:
        conn.execute(sa.insert(_inbound), fresh)
    return {k for k in first if k not in seen}


async def claim(conn: AsyncConnection, key: str, game_id: int | None) -> bool:
    """Claim one key inside the caller's write transaction; False (nothing written) when seen before."""
    return key in await conn.run_sync(claim_keys, [(key, game_id)], utcnow())


async def point_at(conn: AsyncConnection, key: str, game_id: int) -> None:
    """Tie a key claimed before its game existed (the command that created it) to that game."""
    await conn.execute(sa.update(_inbound).where(_inbound.c.key == key).values(game_id=game_id))


def release_keys(conn: sa.Connection, keys: Sequence[str]) -> None:
    """Give back keys this transaction claimed for turns it then refused (they stay unhandled)."""
    if keys:
        conn.execute(sa.delete(_inbound).where(_inbound.c.key.in_(sorted(set(keys)))))


def seen_keys(conn: sa.Connection, keys: Sequence[str]) -> set[str]:
    """Which of these keys were claimed before (reads only)."""
    if not keys:
        return set()
    return set(conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key.in_(sorted(set(keys))))).scalars())


class InboundClaims:
    """The repository of inbound claims made outside a game write."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def claim_inbound(self, key: str, game_id: int | None = None) -> bool:
        """Record a platform event handled without a turn (join, leave, lobby edits); True when new."""
        async with self._db.write() as conn:
            return await claim(conn, key, game_id)

    async def inbound_seen(self, key: str) -> bool:
        """True when this inbound key was claimed (by a turn or ``claim_inbound``). Reads only."""
        async with self._db.connect() as conn:
            return bool(await conn.run_sync(seen_keys, [key]))

"""The outbox: messages of a turn, logged in the turn's own transaction and sent from there.

A turn's messages (its events rendered for the channel and for each seat, and notes such as
"ran out of time") are rows of ``outbox`` written by the turn log together with the turn,
under the same fence (``storage.turnlog``): a message exists exactly when its turn does, and
only a process that held the game wrote it. The holder sends them and marks them sent; a
holder that dies (or is paused) before marking leaves them to the next holder, which sends
what is unsent on taking the table over. So each message is sent at least once, and its id
is the key a platform (or a reader of the log) can tell a repeat by.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, select

from storage.database import Database
from storage.records import OutboxRecord
from storage.tables import OutboxRow, table_of, utcnow

_outbox = table_of(OutboxRow)


def outbox_values(records: Sequence[OutboxRecord], *, game_id: int, action_seq: int,
                  now: datetime) -> list[dict[str, Any]]:
    """The rows of one turn's messages, in their order."""
    return [{"id": r.id, "game_id": game_id, "action_seq": action_seq, "pos": i, "seat": r.seat,
             "body": dict(r.body), "created_at": now, "sent_at": None} for i, r in enumerate(records)]


def mark_sent_in(conn: sa.Connection, ids: Sequence[str]) -> int:
    """Mark messages sent inside the caller's transaction (once: a repeat changes nothing);
    returns how many were marked now.

    On a server database a message another writer is marking right now (its row locked by that
    writer's open transaction) is skipped, not waited for: during a takeover the old holder and
    the new one may mark the same messages in group commits that carry several batches in any
    order, and waiting would let the two deadlock (the server then rolls one group back, turns
    and all). If that writer's transaction fails, the message is sent again under its key, as
    the outbox allows."""
    unsent = [_outbox.c.id.in_(ids), _outbox.c.sent_at.is_(None)]
    where = unsent
    if conn.dialect.name == "postgresql":
        where = [_outbox.c.id.in_(sa.select(_outbox.c.id).where(*unsent).with_for_update(skip_locked=True))]
    res = conn.execute(sa.update(_outbox).where(*where).values(sent_at=utcnow()))
    return int(res.rowcount)


class OutboxRepository:
    """Unsent messages of games, and the mark that they were sent."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def unsent(self, game_ids: Iterable[int]) -> list[OutboxRow]:
        """Messages of these games not marked sent, in the order their turns made them."""
        ids = sorted(set(game_ids))
        if not ids:
            return []
        async with self._db.read() as s:
            q = (select(OutboxRow).where(col(OutboxRow.game_id).in_(ids), col(OutboxRow.sent_at).is_(None))
                 .order_by(col(OutboxRow.game_id), col(OutboxRow.action_seq), col(OutboxRow.pos)))
            return list((await s.exec(q)).all())



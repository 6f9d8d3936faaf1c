"""Repository functions for the SNEAK human study (the ``annotation_items`` and ``annotations`` tables).

An item is a question (the study's ``Item`` as JSON, ``models/eval/human.py``); an
annotation is one member's answer to it, first stored *served* (no choice) when the
item is shown, so each member has at most one live open item and an answer is always
for the item that member was shown. A shown item is reserved for its member ``RESERVE``
(30 minutes); an answer after that counts only if the item still has room (``serve``).
``serve`` picks, in one write transaction, an
item the member has not seen, from their tenant or the benchmark, not from a game
they sat in, still short of its annotations (answered ones and those served within
``RESERVE``), the most advanced first so items complete. Nothing is ever deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from storage.ports import UnitsOfWork
from storage.tables import AnnotationItemRow, AnnotationRow, SeatRow, table_of, utcnow

_items = table_of(AnnotationItemRow)
_answers = table_of(AnnotationRow)
_seats = table_of(SeatRow)

RESERVE = timedelta(minutes=30)  # a shown item holds its place this long before others may take it


@dataclass(frozen=True, slots=True)
class NewItem:
    key: str
    task: str
    source: str
    game_id: int | None
    tenant: str
    item: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Served:
    key: str
    item: dict[str, Any]
    fresh: bool  # newly shown (False: the member's open item, shown again)
    lapsed: bool = False  # the member's earlier item waited past RESERVE and others completed it


async def add_items(store: UnitsOfWork, items: Sequence[NewItem]) -> int:
    """Insert the items whose key is not stored yet; how many were inserted."""
    if not items:
        return 0
    async with store.write() as conn:
        have = {r[0] for r in (await conn.execute(sa.select(_items.c.key).where(
            _items.c.key.in_(sorted({i.key for i in items}))))).all()}
        fresh = {i.key: i for i in items if i.key not in have}
        if fresh:
            now = utcnow()
            await conn.execute(sa.insert(_items), [
                {"key": i.key, "task": i.task, "source": i.source, "game_id": i.game_id, "tenant": i.tenant,
                 "item": i.item, "created_at": now} for i in fresh.values()])
        return len(fresh)


def _taken(cutoff: Any) -> Any:
    """Answers and live reservations per item: what counts against its ``per_item``."""
    return (sa.select(_answers.c.item_key, sa.func.count().label("n"))
            .where(sa.or_(_answers.c.choice.is_not(None), _answers.c.served_at >= cutoff))
            .group_by(_answers.c.item_key).subquery())


async def serve(store: UnitsOfWork, annotator: str, tenant: str, *, per_item: int,
                tasks: Iterable[str] | None = None, now: datetime | None = None) -> Served | None:
    """The member's open item, or a new one for them (None: nothing left they may judge).

    An open item is the member's for ``RESERVE``. Past that, others may be served it; when the member
    comes back it is theirs again (reserved anew) if it is still short of ``per_item``, else it is left
    as shown and never answered, and the member gets a new item (``Served.lapsed``).
    """
    at = now or utcnow()
    cutoff = at - RESERVE
    async with store.write() as conn:
        lapsed = False
        opens = (await conn.execute(
            sa.select(_answers.c.id, _answers.c.item_key, _items.c.item, _answers.c.served_at)
            .join(_items, _items.c.key == _answers.c.item_key)
            .where(_answers.c.annotator == annotator, _answers.c.choice.is_(None))
            .order_by(sa.desc(_answers.c.served_at), sa.desc(_answers.c.id)))).all()
        for row_id, key, item, served_at in opens:
            if served_at >= cutoff:
                return Served(key, dict(item), False)
            others = (await conn.execute(sa.select(sa.func.count()).where(
                _answers.c.item_key == key, _answers.c.id != row_id,
                sa.or_(_answers.c.choice.is_not(None), _answers.c.served_at >= cutoff)))).scalar_one()
            if others < per_item:
                await conn.execute(sa.update(_answers).where(_answers.c.id == row_id).values(served_at=at))
                return Served(key, dict(item), False)
            lapsed = True
        taken = _taken(cutoff)
        seen = sa.select(_answers.c.item_key).where(_answers.c.annotator == annotator)
        played = sa.select(_seats.c.game_id).where(_seats.c.user_key == annotator)
        q = (sa.select(_items.c.key, _items.c.item, sa.func.coalesce(taken.c.n, 0).label("n"))
             .outerjoin(taken, taken.c.item_key == _items.c.key)
             .where(_items.c.tenant.in_([tenant, ""]), _items.c.key.not_in(seen),
                    sa.or_(_items.c.game_id.is_(None), _items.c.game_id.not_in(played)),
                    sa.func.coalesce(taken.c.n, 0) < per_item))
        if tasks is not None:
            q = q.where(_items.c.task.in_(sorted(set(tasks))))
        row = (await conn.execute(q.order_by(sa.desc("n"), _items.c.created_at, _items.c.key).limit(1))).first()
        if row is None:
            return None
        await conn.execute(sa.insert(_answers).values(item_key=row[0], annotator=annotator, tenant=tenant,
                                                      served_at=at))
        return Served(row[0], dict(row[1]), True, lapsed)


async def answer(store: UnitsOfWork, annotator: str, choice: int, correct: bool | None, *,
                 now: datetime | None = None) -> str | None:
    """Record the member's answer to their open item while it is reserved for them; the item's key, or None
    when they have none (``serve`` first: it reserves a returning member's item again when there is room)."""
    cutoff = (now or utcnow()) - RESERVE
    async with store.write() as conn:
        open_ = (await conn.execute(sa.select(_answers.c.id, _answers.c.item_key).where(
            _answers.c.annotator == annotator, _answers.c.choice.is_(None), _answers.c.served_at >= cutoff)
            .order_by(sa.desc(_answers.c.served_at), sa.desc(_answers.c.id)))).first()
        if open_ is None:
            return None
        await conn.execute(sa.update(_answers).where(_answers.c.id == open_[0]).values(
            choice=choice, correct=correct, answered_at=now or utcnow()))
        return str(open_[1])


async def record(store: UnitsOfWork, annotator: str) -> list[bool]:
    """The member's answers with a right one so far, oldest first (right or not; ratings are not counted)."""
    async with store.read() as s:
        conn = await s.connection()
        rows = (await conn.execute(sa.select(_answers.c.correct).where(
            _answers.c.annotator == annotator, _answers.c.choice.is_not(None),
            _answers.c.correct.is_not(None)).order_by(_answers.c.answered_at,
                                                                                      _answers.c.id))).all()
    return [bool(r[0]) for r in rows]


async def answered(store: UnitsOfWork, annotator: str) -> int:
    """How many items the member has answered (every task)."""
    async with store.read() as s:
        conn = await s.connection()
        return int((await conn.execute(sa.select(sa.func.count()).where(
            _answers.c.annotator == annotator, _answers.c.choice.is_not(None)))).scalar_one())


async def votes_of(store: UnitsOfWork, task: str) -> list[tuple[str, str, int]]:
    """(item key, annotator, choice) of every answer to an item of ``task``, in answer order."""
    async with store.read() as s:
        conn = await s.connection()
        rows = (await conn.execute(
            sa.select(_answers.c.item_key, _answers.c.annotator, _answers.c.choice)
            .join(_items, _items.c.key == _answers.c.item_key)
            .where(_items.c.task == task, _answers.c.choice.is_not(None)).order_by(_answers.c.id))).all()
    return [(str(k), str(a), int(c)) for k, a, c in rows]


async def study(store: UnitsOfWork) -> tuple[list[dict[str, Any]], dict[str, list[int]]]:
    """Every item (as JSON) and the answered choices per item key, for the report."""
    async with store.read() as s:
        conn = await s.connection()
        items = [dict(r[0]) for r in (await conn.execute(sa.select(_items.c.item).order_by(_items.c.key))).all()]
        votes: dict[str, list[int]] = {}
        for key, choice in (await conn.execute(sa.select(_answers.c.item_key, _answers.c.choice).where(
                _answers.c.choice.is_not(None)).order_by(_answers.c.id))).all():
            votes.setdefault(str(key), []).append(int(choice))
    return items, votes

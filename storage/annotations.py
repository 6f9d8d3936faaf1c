"""Repository functions for the SNEAK human study (the ``annotation_items`` and ``annotations`` tables).

An item is a question (the study's ``Item`` as JSON, ``models/eval/human.py``); an
annotation is one member's answer to it, first stored *served* (no choice) when the
item is shown, so each member has at most one live open item and an answer is always
for the item that member was shown. A shown item is reserved for its member ``RESERVE``
(30 minutes); an answer after that counts only if the item still has room (``serve``).
``serve`` picks, in one write transaction, an item within the member's ``Scope``
(a benchmark item, or a logged clue of their own tenant's game whose channel they can
read; a game from before tenants only at the operator's CLI), never from a game they
sat in or hosted (a spectated table's host watched it), never a member's clue whose
author's words may not go into research now (``consent``: the item's ``author`` against
``members``, in the same query), never an item they saw, and
never the other role of a clue they saw (the ally item shows the secret the chameleon
item asks for), still short of its annotations (answered ones and those served within
``RESERVE``). It prefers the task the member has answered less (each member's answers
stay balanced between the roles), then an item already in progress, the most advanced
first so items complete, then a fresh one. Both lookups are bounded: in-progress items
come from the live answers, fresh ones from an index walk that stops at the first
match, so a call costs the same at 60,000 games as at 60 (``bench/judge.py``). Nothing
is ever deleted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, select

from storage.people import ERASED_PREFIX
from storage.ports import UnitsOfWork
from storage.tables import (
    ActionRow,
    AnnotationItemRow,
    AnnotationRow,
    EvaluationRow,
    GameRow,
    GameStatus,
    MemberRow,
    SeatKind,
    SeatRow,
    table_of,
    utcnow,
)

_items = table_of(AnnotationItemRow)
_answers = table_of(AnnotationRow)
_seats = table_of(SeatRow)
_games = table_of(GameRow)
_evals = table_of(EvaluationRow)
_members = table_of(MemberRow)

CONSENT_MODES = ("opt-in", "notice", "off")  # HUSHTABLE_RESEARCH_CONSENT's values (bot/settings.py)

RESERVE = timedelta(minutes=30)  # a shown item holds its place this long before others may take it


@dataclass(frozen=True, slots=True)
class NewItem:
    key: str
    task: str
    source: str
    game_id: int | None
    tenant: str
    item: dict[str, Any]
    author: str | None = None  # the member whose seat made the logged move; None: an AI seat's, or no game


@dataclass(frozen=True, slots=True)
class Served:
    key: str
    item: dict[str, Any]
    fresh: bool  # newly shown (False: the member's open item, shown again)
    lapsed: bool = False  # the member's earlier item waited past RESERVE and others completed it


@dataclass(frozen=True, slots=True)
class Scope:
    """Which logged clues a member may be shown: their tenant's games in channels they can read.

    ``tenant`` None (a direct message, a workspace unknown): benchmark items only. ``channels``: the
    channel ids the member can read, as the platform says (a game's place is its channel or
    ``channel/thread``; its channel decides); None reads every channel of the tenant and is for the
    operator's CLI alone, as is ``operator``: games from before tenants (tenant "") too."""

    tenant: str | None
    channels: frozenset[str] | None = frozenset()
    operator: bool = False


def sibling(key: str) -> str | None:
    """The other role's item of a logged or benchmark clue (``...:ally`` <-> ``...:chameleon``); None for others."""
    for a, b in ((":ally", ":chameleon"), (":chameleon", ":ally")):
        if key.endswith(a):
            return key[: -len(a)] + b
    return None


def clue_of(key: str) -> str:
    """The clue an item asks about (its key without the role)."""
    for role in (":ally", ":chameleon"):
        if key.endswith(role):
            return key[: -len(role)]
    return key


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
                 "item": i.item, "created_at": now, "author": i.author} for i in fresh.values()])
        return len(fresh)


def _channel(dialect: str) -> Any:
    """A game's channel, from its place (``channel`` or ``channel/thread``), in the database's own words."""
    if dialect == "postgresql":
        return sa.func.split_part(_games.c.place, "/", 1)
    padded = _games.c.place + "/"
    return sa.func.substr(padded, 1, sa.func.instr(padded, "/") - 1)


def _readable(scope: Scope, dialect: str) -> Any:
    """A logged item's game is in a channel the member reads (a thread follows its channel)."""
    if scope.channels is None:
        return sa.true()
    return _channel(dialect).in_(sorted(scope.channels)) if scope.channels else sa.false()


def _consented(consent: str) -> Any:
    """The items whose author's words may go into research under ``HUSHTABLE_RESEARCH_CONSENT``, as a
    condition read at serve time (a member's ``research off`` hides their clues at once): an AI seat's
    clue always; opt-in, a member who said yes; notice, all but one who said no; off, everyone. One
    primary-key lookup in ``members`` per candidate item. An erased member's clue never: its words are
    stand-ins by then, nobody's to judge."""
    ai = _items.c.author.is_(None)
    kept = sa.not_(_items.c.author.startswith(ERASED_PREFIX))
    if consent == "off":
        return sa.or_(ai, kept)
    said = sa.select(_members.c.user_key).where(_members.c.user_key == _items.c.author)
    if consent == "notice":
        return sa.or_(ai, sa.and_(kept, sa.not_(said.where(_members.c.research.is_(False)).exists())))
    return sa.or_(ai, said.where(_members.c.research.is_(True)).exists())


def _in_scope(scope: Scope, dialect: str) -> Any:
    """The items a member of ``scope`` may be shown, as a condition (items joined to their game)."""
    bench = _items.c.game_id.is_(None)  # benchmark and DEEP items: every tenant's members
    if scope.tenant is None:
        return bench
    tenants = [scope.tenant, ""] if scope.operator else [scope.tenant]
    return sa.or_(bench, sa.and_(_items.c.game_id.is_not(None), _items.c.tenant.in_(tenants), _readable(scope, dialect)))


async def serve(store: UnitsOfWork, annotator: str, scope: Scope, *, per_item: int, consent: str = "opt-in",
                tasks: Iterable[str] | None = None, now: datetime | None = None) -> Served | None:
    """The member's open item, or a new one for them (None: nothing left they may judge).

    ``consent`` (``HUSHTABLE_RESEARCH_CONSENT``): a logged clue is served only while its author's words may
    go into research (``_consented``); an open item whose author has since said no is left unanswered.

    An open item is the member's for ``RESERVE``. Past that, others may be served it; when the member
    comes back it is theirs again (reserved anew) if it is still short of ``per_item``, else it is left
    as shown and never answered, and the member gets a new item (``Served.lapsed``).
    """
    if consent not in CONSENT_MODES:
        raise ValueError(f"research consent must be one of {', '.join(CONSENT_MODES)}")
    at = now or utcnow()
    cutoff = at - RESERVE
    consented = _consented(consent)
    async with store.write() as conn:
        lapsed = False
        opens = (await conn.execute(
            sa.select(_answers.c.id, _answers.c.item_key, _items.c.item, _answers.c.served_at)
            .join(_items, _items.c.key == _answers.c.item_key)
            .where(_answers.c.annotator == annotator, _answers.c.choice.is_(None), consented)
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
        mine = (await conn.execute(sa.select(_answers.c.item_key, _items.c.task)
                                   .join(_items, _items.c.key == _answers.c.item_key)
                                   .where(_answers.c.annotator == annotator))).all()
        # Never an item seen, nor the other role of a clue seen: the ally item shows the secret the
        # chameleon item asks for, and the chameleon item's message is the ally item's answer.
        blocked = sorted({k for key, _ in mine for k in (key, sibling(key)) if k is not None})
        done: dict[str, int] = {}
        for _, task in mine:
            done[task] = done.get(task, 0) + 1
        played = sa.select(_seats.c.game_id).where(_seats.c.user_key == annotator)
        # Never a game the member sat in, nor one they hosted (the host of an AI table watched it).
        unwatched = sa.or_(_items.c.game_id.is_(None),
                           sa.and_(_items.c.game_id.not_in(played), _games.c.host != annotator))
        allowed = sa.and_(_in_scope(scope, conn.dialect.name), _items.c.key.not_in(blocked), unwatched, consented)
        wanted = sorted(set(tasks)) if tasks is not None else None
        if wanted is not None:
            allowed = sa.and_(allowed, _items.c.task.in_(wanted))
        live = sa.or_(_answers.c.choice.is_not(None), _answers.c.served_at >= cutoff)
        busy = sa.select(_answers.c.id).where(_answers.c.item_key == _items.c.key, live).exists()
        # Fresh items are served in key order, so the highest key with an answer is about where fresh ones
        # start: walk from there to the end, then from the start (an index range each, stopping at a match).
        frontier = (await conn.execute(sa.select(sa.func.max(_answers.c.item_key)))).scalar_one() or ""
        homes = ([scope.tenant] if scope.tenant else []) + ["" if scope.tenant != "" else None]
        # The task this member has answered least first, so their answers stay balanced between the roles.
        roles = [t for t in ("ally", "chameleon") if wanted is None or t in wanted]
        order: list[str | None] = [*sorted(roles, key=lambda t: (done.get(t, 0), t)), None]  # None: any task
        pick = None
        for task in order:
            of_task = _items.c.task == task if task is not None else sa.true()
            # An item already in progress (few: they come from the live answers), the most advanced first.
            taken = (sa.select(_answers.c.item_key, sa.func.count().label("n")).where(live)
                     .group_by(_answers.c.item_key).having(sa.func.count() < per_item).subquery())
            pick = (await conn.execute(
                sa.select(_items.c.key, _items.c.item).select_from(taken)
                .join(_items, _items.c.key == taken.c.item_key).outerjoin(_games, _games.c.id == _items.c.game_id)
                .where(allowed, of_task)
                .order_by(sa.desc(taken.c.n), _items.c.created_at, _items.c.key).limit(1))).first()
            if pick is not None:
                break
            for home in homes:
                if home is None:
                    continue
                for span in (_items.c.key > frontier, _items.c.key <= frontier):
                    pick = (await conn.execute(
                        sa.select(_items.c.key, _items.c.item).outerjoin(_games, _games.c.id == _items.c.game_id)
                        .where(_items.c.tenant == home, of_task, span, allowed, sa.not_(busy))
                        .order_by(_items.c.tenant, _items.c.task, _items.c.key).limit(1))).first()
                    if pick is not None:
                        break
                if pick is not None:
                    break
            if pick is not None:
                break
        if pick is None:
            return None
        await conn.execute(sa.insert(_answers).values(item_key=pick[0], annotator=annotator, tenant=scope.tenant or "",
                                                      served_at=at))
        return Served(pick[0], dict(pick[1]), True, lapsed)


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


@dataclass(frozen=True, slots=True)
class Scored:
    """Evaluations not yet turned into items: the rows, each game's tenant, the mark to ask from next, and
    each scored move's author by (game, action seq): the member whose seat made it, None for an AI seat."""

    rows: list[EvaluationRow]
    tenants: dict[int, str]
    mark: int
    authors: dict[tuple[int, int], str | None] = field(default_factory=dict)


async def scored_since(store: UnitsOfWork, mark: int | None, evaluators: Sequence[str],
                       game_ids: Sequence[int] | None = None) -> Scored:
    """The stored evaluations of finished games that may be new items, without re-reading the whole log.

    ``mark`` None (a process's first look): those of games that have no item yet, up to the highest
    evaluation id, in one anti-join; else those with an id above ``mark`` (the primary key's range).
    ``game_ids``: those games' evaluations only (a game just scored), the mark unchanged."""
    async with store.read() as s:
        top = int((await s.exec(sa.select(sa.func.coalesce(sa.func.max(_evals.c.id), 0)))).scalar_one())  # type: ignore[call-overload]
        if game_ids is None and mark is not None and top <= mark:
            return Scored([], {}, mark)  # nothing stored since: the usual turn asks no more
        q = (select(EvaluationRow, col(GameRow.tenant), col(SeatRow.kind), col(SeatRow.user_key))
             .join(GameRow, col(GameRow.id) == col(EvaluationRow.game_id))
             .outerjoin(ActionRow, sa.and_(col(ActionRow.game_id) == col(EvaluationRow.game_id),
                                           col(ActionRow.seq) == col(EvaluationRow.action_seq)))
             .outerjoin(SeatRow, sa.and_(col(SeatRow.game_id) == col(ActionRow.game_id), col(SeatRow.seat) == col(ActionRow.seat)))
             .where(col(GameRow.status) == GameStatus.FINISHED, col(EvaluationRow.evaluator).in_(sorted(set(evaluators)))))
        if game_ids is not None:
            q, top = q.where(col(EvaluationRow.game_id).in_(sorted(set(game_ids)))), mark or 0
        elif mark is None:
            has = sa.select(_items.c.game_id).where(_items.c.game_id.is_not(None))
            q = q.where(col(EvaluationRow.id) <= top, col(EvaluationRow.game_id).not_in(has))
        else:
            q = q.where(col(EvaluationRow.id) > mark, col(EvaluationRow.id) <= top)
        found = (await s.exec(q.order_by(col(EvaluationRow.game_id), col(EvaluationRow.action_seq),
                                          col(EvaluationRow.part), col(EvaluationRow.id)))).all()
    return Scored([r for r, *_ in found], {r.game_id: str(t or "") for r, t, *_ in found}, top,
                  {(r.game_id, r.action_seq): str(who) if kind == SeatKind.HUMAN and who is not None else None
                   for r, _, kind, who in found})


async def shown(store: UnitsOfWork) -> dict[str, list[str]]:
    """Every member's items shown (answered or not), in the order they were served: the study's audit."""
    async with store.read() as s:
        conn = await s.connection()
        rows = (await conn.execute(sa.select(_answers.c.annotator, _answers.c.item_key)
                                   .order_by(_answers.c.served_at, _answers.c.id))).all()
    out: dict[str, list[str]] = {}
    for who, key in rows:
        out.setdefault(str(who), []).append(str(key))
    return out


@dataclass(frozen=True, slots=True)
class Answered:
    """One answer, for the study's audit: who, which item, of which game (None: benchmark), which task."""

    annotator: str
    key: str
    game_id: int | None
    task: str


async def audit(store: UnitsOfWork) -> tuple[list[Answered], dict[int, set[str]]]:
    """Every answer given, and for each game an answer is about, who sat in it or hosted it."""
    async with store.read() as s:
        conn = await s.connection()
        rows = (await conn.execute(
            sa.select(_answers.c.annotator, _answers.c.item_key, _items.c.game_id, _items.c.task)
            .join(_items, _items.c.key == _answers.c.item_key).where(_answers.c.choice.is_not(None))
            .order_by(_answers.c.id))).all()
        answered = [Answered(str(a), str(k), None if g is None else int(g), str(t)) for a, k, g, t in rows]
        ids = sorted({a.game_id for a in answered if a.game_id is not None})
        watchers: dict[int, set[str]] = {g: set() for g in ids}
        for start in range(0, len(ids), 500):  # bounded IN lists
            part = ids[start:start + 500]
            for g, who in (await conn.execute(sa.select(_seats.c.game_id, _seats.c.user_key).where(
                    _seats.c.game_id.in_(part), _seats.c.user_key.is_not(None)))).all():
                watchers[int(g)].add(str(who))
            for g, who in (await conn.execute(sa.select(_games.c.id, _games.c.host).where(_games.c.id.in_(part)))).all():
                watchers[int(g)].add(str(who))
    return answered, watchers

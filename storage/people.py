"""People's words and their rights, the store's side: one member's data read out, their erasure
written, their research choice, the privacy notice shown once, and the audit of it all.

A member is their user key (``"discord:<id>"``, ``"slack:<team>:<id>"``... as seats store it).
What the log holds about a member: their seats (user key, display name), the games they host,
the actions they made (``actor``), the words they wrote (text actions, and every row derived
from them: events, the outbox's messages, agent prompts, SNEAK evaluations and study items),
their study answers, their research choice and notices, tournaments they created.

Erasure (``erase_games``, ``erase_member``) unlinks the user key from seats, hosts, actors
and study items' authors (a fresh ``erased:<hex>`` per game, so nothing links the erased seats across games
or to an earlier export's pseudonym),
replaces the display name with ``ERASED_NAME``, writes the redacted actions and events the
caller planned (``GameErasure``: the engine-side plan, made by ``bot.core.redact``, since the
store knows no game) and scrubs every derived row of that game with a ``Scrubber`` (a JSON
column is read as its stored text and decoded only when ``Scrubber.may_hold`` finds something to
replace in it). A batch of games is one write transaction (``erase_games``), each statement run
once for the whole batch; on a server database the games' rows are locked first (the turn log
takes the same lock), so a process writing beside it waits. A game that has not ended is left
alone: the member's erasure is recorded as pending (``pending_erasures``) and finished when it ends.

On SQLite every connection runs with ``secure_delete`` (``storage.engine.SQLITE_PRAGMAS``) and
``truncate_wal`` checkpoints the WAL into the file and truncates it, so no old copy of a page
stays behind. On PostgreSQL ``vacuum_tables`` removes the dead row versions of the tables the
erasure touched.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, TypeVar

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from storage.engine import EnginePlan
from storage.tables import (
    ENDED,
    ActionRow,
    AgentCallRow,
    AnnotationItemRow,
    AnnotationRow,
    EvaluationRow,
    EventRow,
    GameRow,
    GameStatus,
    MemberRow,
    OutboxRow,
    PendingErasureRow,
    PrivacyAuditRow,
    PrivacyNoticeRow,
    SeatRow,
    TextExpiryRow,
    TournamentRow,
    table_of,
    utcnow,
)

T = TypeVar("T")

__all__ = ["AuditEntry", "audit", "audit_log", "notice_due", "research_choices", "set_research"]

ERASED_NAME = "erased member"
ERASED_PREFIX = "erased:"
MEMBER_SCHEMA = "hushtable.member/1"

_games = table_of(GameRow)
_seats = table_of(SeatRow)
_actions = table_of(ActionRow)
_events = table_of(EventRow)
_outbox = table_of(OutboxRow)
_calls = table_of(AgentCallRow)
_evals = table_of(EvaluationRow)
_items = table_of(AnnotationItemRow)
_answers = table_of(AnnotationRow)
_members = table_of(MemberRow)
_notices = table_of(PrivacyNoticeRow)
_pending = table_of(PendingErasureRow)
_audit = table_of(PrivacyAuditRow)
_tournaments = table_of(TournamentRow)
_expiry = table_of(TextExpiryRow)

# The tables an erasure rewrites (PostgreSQL vacuums them afterwards).
ERASURE_TABLES: tuple[str, ...] = (
    "games", "seats", "actions", "events", "outbox", "agent_calls", "evaluations", "annotation_items",
    "annotations", "members", "privacy_notices", "pending_erasures", "privacy_audit", "tournaments", "text_expiry",
)

# A member's choices, notices and the audit live beside (storage/choices.py); callers reach them here.
from storage.choices import AuditEntry, audit, audit_log, notice_due, research_choices, set_research  # noqa: E402

_KEY = re.compile(r"^[a-z][a-z0-9_-]*:\S+$")


class Database(Protocol):
    """What these functions need of ``storage.database.Database``: its units of work, and the engine
    and plan under them (for the clean-up after an erasure)."""

    plan: EnginePlan
    engine: AsyncEngine

    def write(self) -> AbstractAsyncContextManager[AsyncConnection]: ...

    async def write_sync(self, fn: Callable[[sa.Connection], T], *, on_loop: bool = True) -> T: ...

    def connect(self) -> AbstractAsyncContextManager[AsyncConnection]: ...


class BadMember(ValueError):
    """A member named in a form the log does not use (one sentence)."""


def parse_member(text: str) -> str:
    """``PLATFORM:ID`` as the log keys members (``discord:123``); BadMember with a sentence otherwise."""
    key = text.strip()
    if not _KEY.match(key) or key.startswith(ERASED_PREFIX):
        raise BadMember(f"--member {text!r}: give a member as PLATFORM:ID, as in discord:123456789 or slack:T0123:U0456")
    return key


def raw_id(key: str) -> str:
    """The platform's own id inside a user key (what mentions and lobbies carry): ``discord:12`` → ``12``."""
    return key.rsplit(":", 1)[-1]


class Scrubber:
    """Replaces given strings in any JSON value: an exact string, or the string as whole words
    inside a longer one (case-insensitive). Longer strings first, so a phrase wins over its words."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        table: dict[str, str] = {}
        for old, new in pairs:
            if old.strip() and old.casefold() not in table:
                table[old.casefold()] = new
        self._table = table
        olds = sorted(table, key=len, reverse=True)
        self._re = re.compile("|".join(rf"(?<!\w){re.escape(o)}(?!\w)" for o in olds), re.IGNORECASE) if olds else None
        # The strings as stored JSON text spells them (quotes and backslashes escaped), for ``may_hold``;
        # only for ASCII strings, whose case ASCII text folds as the regex does.
        self._stored = re.compile("|".join(re.escape(json.dumps(o)[1:-1]) for o in olds), re.IGNORECASE) \
            if olds and all(o.isascii() for o in olds) else None

    def __bool__(self) -> bool:
        return self._re is not None

    def text(self, s: str) -> str:
        if self._re is None:
            return s
        return self._re.sub(lambda m: self._table[m.group(0).casefold()], s)

    def json(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(v) for v in value]
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.json(v) for k, v in value.items()}
        return value

    def may_hold(self, stored: str) -> bool:
        """Whether JSON text as a database stores it may hold a string this scrubber replaces: False
        only when none is in it, so a row can be passed over without decoding it. Text outside ASCII
        or with ``\\u`` escapes is always decoded (a case-blind match there may be a letter outside
        ASCII, such as the Kelvin sign for ``k``)."""
        if self._re is None:
            return False
        if self._stored is None or not stored.isascii() or "\\u" in stored:
            return True
        return self._stored.search(stored) is not None


@dataclass(frozen=True, slots=True)
class GameErasure:
    """What erasing one member changes in one game, planned by the caller: the actions' new values
    and the events' new data by seq, and the written texts to scrub from every derived row."""

    game_id: int
    actions: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    events: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    texts: tuple[tuple[str, str], ...] = ()  # (what the member wrote, what replaces it)
    replays: bool = True  # False: the redacted game no longer replays to its stored outcome
    result: Mapping[str, Any] | None = None  # the stored result rewritten (its details quote texts); None: scrubbed


@dataclass(frozen=True, slots=True)
class MemberGame:
    game_id: int
    status: GameStatus


async def member_games(db: Database, key: str) -> list[MemberGame]:
    """Every game where the member sits, hosts, acted or waits in the lobby, by id."""
    like = f"%{raw_id(key)}%"
    async with db.connect() as conn:
        q = sa.select(_games.c.id, _games.c.status).where(sa.or_(
            _games.c.host == key,
            _games.c.id.in_(sa.select(_seats.c.game_id).where(_seats.c.user_key == key)),
            _games.c.id.in_(sa.select(_actions.c.game_id).where(_actions.c.actor == key)),
            # A lobby holds its roster as JSON ({"platform", "user_id", "name"}).
            sa.and_(_games.c.status == GameStatus.LOBBY, sa.cast(_games.c.lobby, sa.Text).like(like)),
        )).order_by(_games.c.id)
        return [MemberGame(int(g), GameStatus(s)) for g, s in (await conn.execute(q)).all()]


def _iso(ts: datetime | None) -> str | None:
    return ts.isoformat() if ts is not None else None


async def member_data(db: Database, key: str) -> dict[str, Any]:
    """Everything the log holds about one member, as one JSON object (``MEMBER_SCHEMA``): their
    games (with their seats, their own actions and texts, the stored result), study answers, the study's
    items made from their moves (with how many answers each holds, not whose), research choice, notices
    shown, tournaments created. Nothing of other people's words."""
    mine = await member_games(db, key)
    ids = [g.game_id for g in mine]
    async with db.connect() as conn:
        games = {r.id: r for r in (await conn.execute(sa.select(_games).where(_games.c.id.in_(ids)))).all()} if ids else {}
        seats = (await conn.execute(sa.select(_seats).where(_seats.c.user_key == key)
                                    .order_by(_seats.c.game_id, _seats.c.seat))).all()
        my_seats: dict[int, set[int]] = {}
        for s in seats:
            my_seats.setdefault(int(s.game_id), set()).add(int(s.seat))
        acts = (await conn.execute(sa.select(_actions).where(sa.or_(
            _actions.c.actor == key,
            sa.and_(_actions.c.game_id.in_(list(my_seats)), _actions.c.source == "human")))
            .order_by(_actions.c.game_id, _actions.c.seq))).all() if ids else []
        answers = (await conn.execute(
            sa.select(_answers, _items.c.task).join(_items, _items.c.key == _answers.c.item_key)
            .where(_answers.c.annotator == key).order_by(_answers.c.id))).all()
        given = sa.select(sa.func.count()).where(_answers.c.item_key == _items.c.key, _answers.c.choice.is_not(None))
        authored = (await conn.execute(
            sa.select(_items.c.key, _items.c.task, _items.c.game_id, _items.c.item, _items.c.created_at,
                      given.scalar_subquery().label("answers"))
            .where(_items.c.author == key).order_by(_items.c.key))).all()
        member = (await conn.execute(sa.select(_members).where(_members.c.user_key == key))).first()
        notices = (await conn.execute(sa.select(_notices).where(_notices.c.user_key == key)
                                      .order_by(_notices.c.tenant))).all()
        tourneys = (await conn.execute(sa.select(_tournaments.c.id, _tournaments.c.name)
                                       .where(_tournaments.c.created_by == key).order_by(_tournaments.c.id))).all()
    out_games = []
    for gid in ids:
        g = games[gid]
        seats_here = my_seats.get(gid, set())
        out_games.append({
            "id": gid, "game": g.game, "variant": g.variant, "status": str(g.status), "tenant": g.tenant,
            "platform": g.platform, "place": g.place, "place_name": g.place_name, "host": g.host == key,
            "created_at": _iso(g.created_at), "started_at": _iso(g.started_at), "finished_at": _iso(g.finished_at),
            "result": g.result,
            "seats": [{"seat": s.seat, "kind": str(s.kind), "display_name": s.display_name}
                      for s in seats if int(s.game_id) == gid],
            "actions": [{"seq": a.seq, "seat": a.seat, "kind": a.kind, "value": list(a.value), "source": str(a.source),
                         "created_at": _iso(a.created_at)}
                        for a in acts if int(a.game_id) == gid and (a.actor == key or a.seat in seats_here)],
        })
    return {
        "schema": MEMBER_SCHEMA,
        "member": key,
        "games": out_games,
        "study_answers": [{"item": a.item_key, "task": a.task, "choice": a.choice, "correct": a.correct,
                           "served_at": _iso(a.served_at), "answered_at": _iso(a.answered_at)} for a in answers],
        "study_items_from_my_moves": [{"item": i.key, "task": i.task, "game": i.game_id, "question": i.item,
                                       "created_at": _iso(i.created_at), "answers": int(i.answers)} for i in authored],
        "research_consent": None if member is None else member.research,
        "privacy_notices": [{"tenant": n.tenant, "shown_at": _iso(n.shown_at)} for n in notices],
        "tournaments_created": [{"id": t.id, "name": t.name} for t in tourneys],
    }


# --------------------------------------------------------------------------- erasure


def unlink_key() -> str:
    """A fresh key for an erased member's seats in one game: links to nothing, not even their other games."""
    return ERASED_PREFIX + secrets.token_hex(8)


def identity_pairs(key: str, names: Iterable[str], unlinked: str) -> list[tuple[str, str]]:
    """What stands for the member in free text: their key, their platform id, their display names."""
    pairs = [(key, unlinked), (raw_id(key), unlinked.removeprefix(ERASED_PREFIX))]
    pairs += [(n, ERASED_NAME) for n in names if n.strip() and n != ERASED_NAME]
    return pairs


@dataclass(frozen=True, slots=True)
class ErasedGames:
    rows: int  # rows changed
    running: tuple[int, ...]  # games found not ended, left whole (the erasure waits for them)


async def erase_games(db: Database, key: str, plans: Sequence[GameErasure]) -> ErasedGames:
    """Erase the member from ended (or broken) games in one write transaction, each statement for all of them
    at once (their rows locked first on a server database): one commit and a dozen statements
    instead of a commit and a dozen statements per game."""

    def run(conn: sa.Connection) -> ErasedGames:
        return _erase_games(conn, key, plans)

    return await db.write_sync(run, on_loop=False)  # tens of milliseconds of statements: off the event loop


# Per-game updates of an erasure, built once, run as one executemany for a batch of games.
_UNLINK_SEATS = sa.update(_seats).where(_seats.c.game_id == sa.bindparam("g"), _seats.c.user_key == sa.bindparam("k")) \
    .values(user_key=sa.bindparam("u"), display_name=ERASED_NAME)
_UNLINK_ACTOR = sa.update(_actions).where(_actions.c.game_id == sa.bindparam("g"), _actions.c.actor == sa.bindparam("k")) \
    .values(actor=sa.bindparam("u"))
_UNLINK_HOST = sa.update(_games).where(_games.c.id == sa.bindparam("g"), _games.c.host == sa.bindparam("k")) \
    .values(host=sa.bindparam("u"))
_UNLINK_AUTHOR = sa.update(_items).where(_items.c.game_id == sa.bindparam("g"), _items.c.author == sa.bindparam("k")) \
    .values(author=sa.bindparam("u"))
_SET_RESULT = sa.update(_games).where(_games.c.id == sa.bindparam("g")).values(result=sa.bindparam("r", type_=sa.JSON))


def _erase_games(conn: sa.Connection, key: str, plans: Sequence[GameErasure]) -> ErasedGames:
    ids = sorted({p.game_id for p in plans})
    if not ids:
        return ErasedGames(0, ())
    q = sa.select(_games.c.id, _games.c.status, _games.c.lobby).where(_games.c.id.in_(ids)).order_by(_games.c.id)
    if conn.dialect.name != "sqlite":
        q = q.with_for_update()
    found = {int(g): (GameStatus(status), lobby) for g, status, lobby in conn.execute(q).all()}
    running = tuple(g for g in ids if g in found and found[g][0] not in (*ENDED, GameStatus.BROKEN))
    todo = [p for p in plans if p.game_id in found and p.game_id not in running]  # a game gone: nothing to erase
    if not todo:
        return ErasedGames(0, running)
    names: dict[int, list[str]] = {}
    for g, name in conn.execute(sa.select(_seats.c.game_id, _seats.c.display_name).where(
            _seats.c.game_id.in_([p.game_id for p in todo]), _seats.c.user_key == key)).all():
        names.setdefault(int(g), []).append(str(name))
    unlinked = {p.game_id: unlink_key() for p in todo}
    scrubs = {p.game_id: Scrubber([*p.texts, *identity_pairs(key, [*names.get(p.game_id, []),
                                                                   *_lobby_names(found[p.game_id][1], key)],
                                                             unlinked[p.game_id])])
              for p in todo}
    n = _write_plans(conn, todo)
    results = [{"g": p.game_id, "r": dict(p.result)} for p in todo if p.result is not None]
    if results:
        n += conn.execute(_SET_RESULT, results).rowcount
    params = [{"g": g, "k": key, "u": u} for g, u in unlinked.items()]
    n += conn.execute(_UNLINK_SEATS, params).rowcount
    n += conn.execute(_UNLINK_ACTOR, params).rowcount
    n += conn.execute(_UNLINK_HOST, params).rowcount
    n += conn.execute(_UNLINK_AUTHOR, params).rowcount  # their study items: the same unlinked key as their seats
    scrubs = {g: sc for g, sc in scrubs.items() if sc}
    if scrubs:
        n += _rewrite_games(conn, _games, ["lobby", "result"], _games.c.id, scrubs)
        n += _rewrite_games(conn, _events, ["data"], _events.c.game_id, scrubs)
        n += _rewrite_games(conn, _outbox, ["body"], _outbox.c.game_id, scrubs)
        n += _rewrite_games(conn, _calls, ["prompt", "raw_output", "error"], _calls.c.game_id, scrubs)
        n += _rewrite_games(conn, _evals, ["instance", "decoys", "metric"], _evals.c.game_id, scrubs)
        n += _rewrite_games(conn, _items, ["item"], _items.c.game_id, scrubs)
    return ErasedGames(n, running)


def _lobby_names(lobby: Any, key: str) -> list[str]:
    """The display names a lobby's roster gives the member (``{"platform", "user_id", "name"}`` entries)."""
    platform, uid = key.split(":", 1)[0], raw_id(key)
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if str(v.get("user_id", "")) == uid and str(v.get("platform", platform)) == platform and v.get("name"):
                found.append(str(v["name"]))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(lobby)
    return found


async def erase_member(db: Database, key: str, *, pending: bool, requested_by: str) -> int:
    """The member-wide part of an erasure, in one write transaction: study answers removed, research
    choice and notices removed, tournaments they created unlinked, audit rows about them unlinked.
    ``pending``: a game of theirs has not ended, so the request is kept (``pending_erasures``) until
    it has; else any pending request is done and removed. Returns the rows changed."""
    unlinked = unlink_key()
    async with db.write() as conn:
        n = (await conn.execute(sa.delete(_answers).where(_answers.c.annotator == key))).rowcount
        n += (await conn.execute(sa.delete(_members).where(_members.c.user_key == key))).rowcount
        n += (await conn.execute(sa.delete(_notices).where(_notices.c.user_key == key))).rowcount
        n += (await conn.execute(sa.update(_tournaments).where(_tournaments.c.created_by == key)
                                 .values(created_by=unlinked))).rowcount
        n += (await conn.execute(sa.update(_audit).where(_audit.c.subject == key).values(subject=None))).rowcount
        n += (await conn.execute(sa.update(_audit).where(_audit.c.actor == key).values(actor=ERASED_NAME))).rowcount
        have = (await conn.execute(sa.select(_pending.c.user_key).where(_pending.c.user_key == key))).first()
        if pending and have is None:
            await conn.execute(sa.insert(_pending).values(user_key=key, requested_by=requested_by, requested_at=utcnow()))
        elif not pending and have is not None:
            await conn.execute(sa.delete(_pending).where(_pending.c.user_key == key))
        return n


async def expirable_games(db: Database, before: datetime, *, limit: int = 100) -> list[int]:
    """Finished or aborted games that ended before ``before`` and whose text has not been removed yet."""
    async with db.connect() as conn:
        q = (sa.select(_games.c.id).where(_games.c.status.in_([str(s) for s in ENDED]), _games.c.finished_at < before,
                                          _games.c.id.not_in(sa.select(_expiry.c.game_id)))
             .order_by(_games.c.id).limit(limit))
        return [int(g) for g in (await conn.execute(q)).scalars()]


async def expire_game(db: Database, plan: GameErasure) -> int:
    """Remove one ended game's free text (the planned actions, events and result, every derived row
    scrubbed) and its private messages, keep its structure, and mark it done; the rows changed."""
    gid = plan.game_id
    scrub = Scrubber(plan.texts)
    def run(conn: sa.Connection) -> int:
        q = sa.select(_games.c.status).where(_games.c.id == gid)
        if conn.dialect.name != "sqlite":
            q = q.with_for_update()
        status = (conn.execute(q)).scalar()
        done = (conn.execute(sa.select(_expiry.c.game_id).where(_expiry.c.game_id == gid))).first()
        if status is None or GameStatus(status) not in ENDED or done is not None:
            return 0
        n = _write_plans(conn, [plan])
        if plan.result is not None:
            n += (conn.execute(sa.update(_games).where(_games.c.id == gid).values(result=dict(plan.result)))).rowcount
        # Private messages go whole; what the table's channel was told is scrubbed like the rest.
        n += (conn.execute(sa.delete(_outbox).where(_outbox.c.game_id == gid, _outbox.c.seat.is_not(None)))).rowcount
        if scrub:
            n += _rewrite(conn, _outbox, ["body"], _outbox.c.game_id == gid, scrub)
            n += _rewrite(conn, _calls, ["prompt", "raw_output", "error"], _calls.c.game_id == gid, scrub)
            n += _rewrite(conn, _evals, ["instance", "decoys", "metric"], _evals.c.game_id == gid, scrub)
            n += _rewrite(conn, _items, ["item"], _items.c.game_id == gid, scrub)
        conn.execute(sa.insert(_expiry).values(game_id=gid, expired_at=utcnow()))
        return n

    return await db.write_sync(run, on_loop=False)  # tens of milliseconds of statements: off the event loop


# Updates by primary key, built once (building one per row cost more than SQLite takes to run it).
_SET_ACTION = sa.update(_actions).where(_actions.c.game_id == sa.bindparam("g"), _actions.c.seq == sa.bindparam("s")) \
    .values(value=sa.bindparam("v", type_=sa.JSON))
_SET_EVENT = sa.update(_events).where(_events.c.game_id == sa.bindparam("g"), _events.c.seq == sa.bindparam("s")) \
    .values(data=sa.bindparam("v", type_=sa.JSON))
_BY_KEY: dict[tuple[str, tuple[str, ...]], sa.Update] = {}


def _write_plans(conn: sa.Connection, plans: Sequence[GameErasure]) -> int:
    """The planned actions' values and events' data, each table in one executemany."""
    n = 0
    acts = [{"g": p.game_id, "s": q, "v": list(v)} for p in plans for q, v in p.actions.items()]
    if acts:
        n += conn.execute(_SET_ACTION, acts).rowcount
    evs = [{"g": p.game_id, "s": q, "v": dict(d)} for p in plans for q, d in p.events.items()]
    if evs:
        n += conn.execute(_SET_EVENT, evs).rowcount
    return n


def _update_by_key(table: sa.Table, cols: Sequence[str]) -> sa.Update:
    key = (table.name, tuple(cols))
    if key not in _BY_KEY:
        pk = list(table.primary_key.columns)
        _BY_KEY[key] = sa.update(table).where(*(c == sa.bindparam(f"k_{c.name}") for c in pk)) \
            .values({c: sa.bindparam(f"v_{c}", type_=table.c[c].type) for c in cols})
    return _BY_KEY[key]


@dataclass(frozen=True, slots=True)
class _Stored:
    text: str | None  # a JSON column's stored text, not decoded (nothing in it to scrub)


def _rewrite(conn: sa.Connection, table: sa.Table, cols: Sequence[str], where: Any, scrub: Scrubber) -> int:
    """Scrub the columns ``cols`` of the rows ``where`` picks (one executemany); how many rows changed."""
    return _scrub_rows(conn, table, cols, where, lambda _row: scrub, None)


def _rewrite_games(conn: sa.Connection, table: sa.Table, cols: Sequence[str], game: sa.Column[Any],
                   scrubs: Mapping[int, Scrubber]) -> int:
    """Scrub the columns ``cols`` of every row of these games, each with its game's Scrubber."""
    return _scrub_rows(conn, table, cols, game.in_(list(scrubs)), lambda row: scrubs[int(row[-1])], game)


def _scrub_rows(conn: sa.Connection, table: sa.Table, cols: Sequence[str], where: Any,
                scrub_of: Callable[[Sequence[Any]], Scrubber], game: sa.Column[Any] | None) -> int:
    """Scrub ``cols`` of the rows ``where`` picks, with ``scrub_of(row)``'s Scrubber, in one executemany.
    JSON columns are read as their stored text and decoded only when the Scrubber finds it may hold
    something to replace (``Scrubber.may_hold``): most rows of a game never quote the member."""
    pk = list(table.primary_key.columns)
    is_json = [isinstance(table.c[c].type, sa.JSON) for c in cols]
    read = [sa.cast(table.c[c], sa.Text) if j else table.c[c] for c, j in zip(cols, is_json, strict=True)]
    rows = conn.execute(sa.select(*pk, *read, *([game] if game is not None else [])).where(where)).all()
    params = []
    for row in rows:
        scrub = scrub_of(row)
        ident, vals = row[: len(pk)], row[len(pk): len(pk) + len(cols)]
        changed, new = False, []
        for val, j in zip(vals, is_json, strict=True):
            if val is None or (j and not scrub.may_hold(val)):
                new.append(_Stored(val) if j else val)
                continue
            old = json.loads(val) if j else val
            out = scrub.json(old)
            changed = changed or out != old
            new.append(out)
        if changed:
            new = [json.loads(v.text) if isinstance(v, _Stored) and v.text is not None else
                   None if isinstance(v, _Stored) else v for v in new]
            params.append({**{f"k_{c.name}": i for c, i in zip(pk, ident, strict=True)},
                           **{f"v_{c}": v for c, v in zip(cols, new, strict=True)}})
    if params:
        conn.execute(_update_by_key(table, cols), params)
    return len(params)


async def any_ended(db: Database, game_ids: Sequence[int]) -> bool:
    """Whether any of these games has ended (finished, aborted or broken) or is gone."""
    async with db.connect() as conn:
        q = sa.select(_games.c.id, _games.c.status).where(_games.c.id.in_(list(game_ids)))
        found = {int(g): GameStatus(s) for g, s in (await conn.execute(q)).all()}
    return any(found.get(g) not in (GameStatus.LOBBY, GameStatus.RUNNING) for g in game_ids)


async def pending_erasures(db: Database) -> list[str]:
    """Members whose erasure waits for a game to end, oldest request first."""
    async with db.connect() as conn:
        return [str(k) for k in (await conn.execute(sa.select(_pending.c.user_key)
                                                     .order_by(_pending.c.requested_at))).scalars()]


def truncate_wal(path: str, *, tries: int = 50, wait_s: float = 0.1) -> bool:
    """Checkpoint a SQLite file's WAL into it and truncate the WAL to nothing, so an old copy of an
    erased page is left in neither. True when done; False when readers kept it busy every try."""
    import time

    conn = sqlite3.connect(path, timeout=5)
    try:
        conn.execute("PRAGMA secure_delete=ON")
        for _ in range(tries):
            busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy == 0:
                return True
            time.sleep(wait_s)
        return False
    finally:
        conn.close()


async def scrub_free_space(db: Database) -> bool:
    """After an erasure: on a SQLite file, the WAL checkpointed and truncated (``truncate_wal``);
    on PostgreSQL, the touched tables vacuumed so their dead row versions go. True when done."""
    path = db.plan.sqlite_file
    if path is not None:
        return await asyncio.to_thread(truncate_wal, str(path))
    if db.plan.backend == "postgresql":
        async with db.engine.connect() as conn:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            for table in ERASURE_TABLES:
                await conn.execute(sa.text(f"VACUUM {table}"))
        return True
    return True

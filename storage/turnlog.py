"""The turn log's group-commit writer: every ``Store.append_turn`` goes through one ``TurnLog``.

Turns that arrive while a write is in progress are committed together in the
next transaction: one writer, few round trips, each turn still all-or-nothing
and answered only once it is durable. A SQLite file commits its groups on a
plain sqlite3 engine, on the event loop when the file's write lock is free and
in a worker thread when another process holds it (``storage.engine.write_now``;
about twenty trips through aiosqlite otherwise); any other database commits
through the store's async write engine.

On a server database (PostgreSQL) several bot processes may write at once: the
games of a group are locked (``SELECT ... FOR UPDATE``) before their last
sequence numbers are read, so ``max(seq) + 1`` is safe across processes too.
SQLite needs no such lock: ``BEGIN IMMEDIATE`` already holds the whole file.

A turn is written once. The table in memory knows which sequence number its next action
takes, and the turn is written at exactly that number: ``(game_id, seq)`` is the actions'
primary key, so the log cannot hold two turns at one place. When a group's COMMIT fails
with an unknown outcome (the connection dropped after COMMIT was sent: it may or may not
have committed), each turn is tried again in a transaction of its own, which first reads
the place it was meant for: a turn already there with this turn's inbound key (or, for a
turn without one, this very action) was this turn's own commit, and it is answered as
logged without writing anything; an inbound key that the lost commit claimed reads the
same way instead of looking like a redelivered event. Another action at that place means
the table in memory is behind its log (``LogAhead``): the caller catches up from the log.

The outbox's "sent" marks (``mark_sent``) ride in the next group's transaction instead of a
write transaction of their own: under load the single writer would otherwise spend a commit on
them every few tenths of a second. When no turn comes within ``MARKS_WAIT_S`` they are written
alone. A mark is only an UPDATE of ``sent_at`` on rows not yet marked, so writing it again (a group
that failed and is retried) changes nothing; a mark lost with a failed group or a crash only means
the message is sent again under the same key, as the outbox already allows (``storage.outbox``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from storage.agentcalls import agent_call_values
from storage.engine import WriteLockBusy, write_now
from storage.inbound import claim_keys, release_keys, seen_keys
from storage.outbox import mark_sent_in, outbox_values
from storage.ownership import Fence, NotOwner, TableLeases, check_fences
from storage.records import (
    ActionRecord,
    AgentCallRecord,
    EventRecord,
    GameNotFound,
    GameStateError,
    LogAhead,
    OutboxRecord,
)
from storage.tables import ActionRow, AgentCallRow, EventRow, GameRow, GameStatus, OutboxRow, table_of, utcnow

log = logging.getLogger(__name__)
_games = table_of(GameRow)
_actions = table_of(ActionRow)
_events = table_of(EventRow)
_agent_calls = table_of(AgentCallRow)
_outbox = table_of(OutboxRow)

# A group's statements, built once (a statement built anew costs more to make and to look up in
# SQLAlchemy's cache than SQLite takes to run it): the games' status and last sequence numbers in
# one round trip, their rows locked first on a server database, and the inserts.
_GIDS: sa.BindParameter[list[int]] = sa.bindparam("gids", expanding=True)
_PROBE = sa.select(
    _games.c.id,
    _games.c.status,
    sa.select(sa.func.max(_actions.c.seq)).where(_actions.c.game_id == _games.c.id).scalar_subquery(),
    sa.select(sa.func.max(_events.c.seq)).where(_events.c.game_id == _games.c.id).scalar_subquery(),
).where(_games.c.id.in_(_GIDS))
_LOCK_GAMES = sa.select(_games.c.id).where(_games.c.id.in_(_GIDS)).order_by(_games.c.id).with_for_update()
_INSERTS = tuple(sa.insert(t) for t in (_actions, _events, _agent_calls, _outbox))

MAX_GROUP = 256  # turns committed in one transaction at most
MARKS_WAIT_S = 0.1  # how long sent marks wait for a group to ride in before they are written alone


@dataclass(slots=True)
class _Marks:
    ids: list[str]
    future: asyncio.Future[int]


@dataclass(slots=True)
class _Turn:
    game_id: int
    action: ActionRecord
    events: tuple[EventRecord, ...]
    inbound_key: str | None
    calls: tuple[AgentCallRecord, ...]
    future: asyncio.Future[bool]
    fence: Fence | None = None
    outbox: tuple[OutboxRecord, ...] = ()
    seq: int | None = None  # the place the table expects this action at; None: the next free one
    recovered: bool = False  # found already committed when written again after an unknown outcome


class TurnLog:
    """Queues turns and commits them in groups.

    ``writer`` is the store's async engine marked for writing; ``engine`` the
    synchronous SQLite engine when there is one (``storage.engine.make_turn_engine``);
    ``lock`` the store's write lock, shared so that no other write of this process
    interleaves with a group; ``wrote`` is told after each group commits (the store's WAL
    checkpoints, ``storage.checkpoint``).
    """

    def __init__(self, writer: AsyncEngine, engine: sa.Engine | None, lock: asyncio.Lock,
                 *, wrote: Callable[[], None] | None = None) -> None:
        self.writer = writer
        self.engine = engine
        self._lock = lock
        self._wrote = wrote
        self._turns: list[_Turn] = []
        self._marks: list[_Marks] = []
        self._flusher: asyncio.Task[None] | None = None
        self._marks_alone: asyncio.Task[None] | None = None
        # Set when several processes share the database: every turn is then logged under this
        # process's hold on its game (``storage.ownership``), or refused.
        self.leases: TableLeases | None = None
        # Group commits that failed (an unknown outcome among them), and turns that such a failure
        # had in fact committed, found by reading back instead of being written a second time.
        self.failed_groups = 0
        self.recovered = 0
        self.on_recovered: Callable[[], None] | None = None  # told of each (the metrics)

    async def append(
        self,
        game_id: int,
        action: ActionRecord,
        events: Sequence[EventRecord],
        inbound_key: str | None,
        agent_calls: Sequence[AgentCallRecord],
        outbox: Sequence[OutboxRecord] = (),
        seq: int | None = None,
    ) -> bool:
        """Queue one turn and wait until its group is durable; False when the inbound key was seen before.

        ``outbox``: the turn's messages, logged with it (``storage.outbox``). ``seq``: the sequence
        number the caller's copy of the game expects for this action; the turn is written there or
        not at all (``LogAhead`` when another action holds it)."""
        fence = None
        if self.leases is not None:
            # Live: a hold whose last confirmed renewal plus the lease has passed (this process was
            # paused) logs nothing, before the database is even asked.
            fence = self.leases.live_fence(game_id)
            if fence is None:
                raise NotOwner(f"game {game_id} is not held by this process (or its hold ran out): no turn logged")
        loop = asyncio.get_running_loop()
        turn = _Turn(game_id, action, tuple(events), inbound_key, tuple(agent_calls), loop.create_future(), fence,
                     tuple(outbox), seq)
        self._turns.append(turn)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        # Shielded: a caller that goes away does not take a half-queued turn with it (and the
        # outcome nobody waits for any more is still collected, not reported as lost).
        turn.future.add_done_callback(_collect)
        return await asyncio.shield(turn.future)

    async def mark_sent(self, ids: Iterable[str]) -> int:
        """Mark outbox messages sent, in the next group's transaction (or alone when no turn comes
        within ``MARKS_WAIT_S``); returns how many were marked now (a repeat changes nothing)."""
        keys = sorted(set(ids))
        if not keys:
            return 0
        loop = asyncio.get_running_loop()
        marks = _Marks(keys, loop.create_future())
        self._marks.append(marks)
        if self._flusher is None or self._flusher.done():
            self._marks_soon()
        marks.future.add_done_callback(_collect)
        return await asyncio.shield(marks.future)

    def _marks_soon(self) -> None:
        if self._marks_alone is None or self._marks_alone.done():
            self._marks_alone = asyncio.get_running_loop().create_task(self._flush_marks_later())

    async def _flush_marks_later(self) -> None:
        await asyncio.sleep(MARKS_WAIT_S)
        if self._marks and (self._flusher is None or self._flusher.done()):
            self._flusher = asyncio.get_running_loop().create_task(self._flush(marks_alone=True))

    async def aclose(self) -> None:
        """Wait for queued turns and marks, then release the SQLite engine."""
        while True:
            pending = [t for t in (self._marks_alone, self._flusher) if t is not None and not t.done()]
            if not pending:
                break
            await asyncio.gather(*pending, return_exceptions=True)
        if self.engine is not None:
            self.engine.dispose()

    async def _flush(self, marks_alone: bool = False) -> None:
        while self._turns or (marks_alone and self._marks):
            batch, self._turns = self._turns[:MAX_GROUP], self._turns[MAX_GROUP:]
            marks, self._marks = self._marks, []
            try:
                await self._write(batch, marks)
            except Exception as exc:
                if marks:
                    # The marks alone, apart from the turns that may be at fault; failing again,
                    # their caller keeps them for a later try.
                    try:
                        await self._write([], marks)
                    except Exception:  # noqa: BLE001 - delivered to the marks' caller
                        for m in marks:
                            if not m.future.done():
                                m.future.set_exception(exc)
                if not batch:
                    continue
                # The group failed as a whole (an integrity error, or a connection lost, perhaps
                # after its COMMIT was sent): retry one by one so only the turn at fault sees its
                # error; a turn that did commit is read back there, never written twice.
                self.failed_groups += 1
                # The server's SQLSTATE says what it was (40P01 a deadlock, 57P01 a session ended by a
                # takeover); the message itself may quote a row.
                log.warning("a group of %s turn(s) failed (%s %s); each is tried again alone", len(batch),
                            type(exc).__name__, getattr(getattr(exc, "orig", None), "sqlstate", None) or "")
                for turn in batch:
                    if turn.future.done():
                        continue
                    try:
                        await self._write([turn], [])
                        if turn.recovered:
                            self.recovered += 1
                            if self.on_recovered is not None:
                                self.on_recovered()
                    except Exception as exc:  # noqa: BLE001 - delivered to its own caller
                        if not turn.future.done():
                            turn.future.set_exception(exc)
        if self._marks:  # came in during the last group: they wait for the next one a moment
            self._marks_soon()

    async def _write(self, batch: Sequence[_Turn], marks: Sequence[_Marks]) -> None:
        ids = [m.ids for m in marks]

        def group(conn: sa.Connection) -> tuple[list[tuple[_Turn, bool | Exception]], list[int]]:
            outcome = write_turns(conn, batch) if batch else []
            return outcome, [mark_sent_in(conn, keys) for keys in ids]

        if self.engine is not None:
            engine = self.engine

            def commit() -> tuple[list[tuple[_Turn, bool | Exception]], list[int]]:
                with engine.begin() as conn:
                    return group(conn)

            async with self._lock:
                # On the loop when SQLite's write lock is free (``storage.engine.write_now``), else
                # in a thread that waits for the other process's write.
                try:
                    outcome, marked = write_now(engine, group)
                except WriteLockBusy:
                    outcome, marked = await asyncio.to_thread(commit)
        else:
            async with self._lock:
                async with self.writer.begin() as conn:
                    outcome, marked = await conn.run_sync(group)
        if self._wrote is not None:
            self._wrote()
        for m, n in zip(marks, marked, strict=True):
            if not m.future.done():
                m.future.set_result(n)
        for t, res in outcome:  # committed: now answer
            if t.future.done():
                continue
            if isinstance(res, Exception):
                t.future.set_exception(res)
            else:
                t.future.set_result(res)


def _collect(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def write_turns(conn: sa.Connection, batch: Sequence[_Turn]) -> list[tuple[_Turn, bool | Exception]]:
    """One transaction for a group of turns (synchronous: on the loop, in a thread, or under run_sync)."""
    now = utcnow()
    gids = sorted({t.game_id for t in batch})
    if conn.dialect.name != "sqlite":
        # Another process may be writing the same games: take their rows first, in id order
        # (no deadlock between two groups), so the seq lookups below cannot race.
        conn.execute(_LOCK_GAMES, {"gids": gids})
    # One round trip for every game's status and last sequence numbers.
    status: dict[int, str] = {}
    last_action: dict[int, int | None] = {}
    last_event: dict[int, int | None] = {}
    for gid, st, la, le in conn.execute(_PROBE, {"gids": gids}).all():
        status[gid], last_action[gid], last_event[gid] = st, la, le
    # A turn made under a hold that moved on (another process took the game over) is refused.
    fenced = check_fences(conn, {t.game_id: t.fence for t in batch if t.fence is not None})
    running = [t for t in batch if status.get(t.game_id) == GameStatus.RUNNING and t.game_id not in fenced]
    # A turn whose place is already taken is read back, not written: its own earlier commit (an
    # unknown outcome), or a sign that this copy of the game is behind its log.
    placed = [t for t in running if t.seq is not None and t.seq <= (last_action.get(t.game_id) or 0)]
    logged = _actions_at(conn, [(t.game_id, t.seq) for t in placed if t.seq is not None])
    placed_ids = {id(t) for t in placed}
    writing = [t for t in running if id(t) not in placed_ids]
    writing_ids = {id(t) for t in writing}
    # The keys of turns that may be logged are claimed through the one claim path, in one
    # statement; a turn that cannot be logged claims nothing, but its key may still be a
    # redelivery of a turn logged before (the last turn of a game that is now over).
    claimed = claim_keys(conn, [(t.inbound_key, t.game_id) for t in writing if t.inbound_key is not None], now)
    refused = [t.inbound_key for t in batch if t.inbound_key is not None and id(t) not in writing_ids]
    seen = seen_keys(conn, refused) | {k for k in refused if k in claimed}
    taken: set[str] = set()
    unclaim: list[str] = []
    outcome: list[tuple[_Turn, bool | Exception]] = []
    action_rows: list[dict[str, Any]] = []
    event_rows: list[dict[str, Any]] = []
    call_rows: list[dict[str, Any]] = []
    outbox_rows: list[dict[str, Any]] = []
    for t in batch:
        st = status.get(t.game_id)
        if st != GameStatus.RUNNING or t.game_id in fenced:
            if t.inbound_key is not None and t.inbound_key in seen:
                outcome.append((t, False))
            elif t.game_id in fenced:
                outcome.append((t, NotOwner(f"game {t.game_id} was taken over by another process: turn not logged")))
            elif st is None:
                outcome.append((t, GameNotFound(t.game_id)))
            else:
                outcome.append((t, GameStateError(f"game {t.game_id} is {st}, not running: no turn can be logged")))
            continue
        if id(t) in placed_ids:
            assert t.seq is not None
            there = logged.get((t.game_id, t.seq))
            if there is not None and _is_this_turn(there, t):
                t.recovered = True
                outcome.append((t, True))
            elif t.inbound_key is not None and t.inbound_key in seen:
                outcome.append((t, False))  # a redelivered event, logged at an earlier place
            else:
                outcome.append((t, LogAhead(t.game_id, t.seq)))
            continue
        seq = (last_action.get(t.game_id) or 0) + 1
        if t.seq is not None and t.seq != seq:
            # The copy in memory is ahead of the log: a bug, never a reason to write at another place.
            if t.inbound_key is not None and t.inbound_key in claimed and t.inbound_key not in taken:
                unclaim.append(t.inbound_key)
            outcome.append((t, GameStateError(f"game {t.game_id} expected action {t.seq} but its log is at {seq - 1}")))
            continue
        if t.inbound_key is not None:
            if t.inbound_key not in claimed or t.inbound_key in taken:
                outcome.append((t, False))  # handled before, or earlier in this group
                continue
            taken.add(t.inbound_key)
        last_action[t.game_id] = seq
        a = t.action
        action_rows.append({"game_id": t.game_id, "seq": seq, "seat": a.seat, "kind": a.kind,
                            "value": list(a.value), "source": a.source, "actor": a.actor,
                            "inbound_id": t.inbound_key, "created_at": now})
        first = (last_event.get(t.game_id) or 0) + 1
        event_rows.extend({"game_id": t.game_id, "seq": first + i, "action_seq": seq, "kind": e.kind,
                           "data": dict(e.data), "audience": e.audience_json, "created_at": now}
                          for i, e in enumerate(t.events))
        last_event[t.game_id] = first + len(t.events) - 1
        call_rows.extend(agent_call_values(c, game_id=t.game_id, action_seq=seq, now=now) for c in t.calls)
        outbox_rows.extend(outbox_values(t.outbox, game_id=t.game_id, action_seq=seq, now=now))
        outcome.append((t, True))
    if unclaim:
        release_keys(conn, unclaim)
    for insert, rows in zip(_INSERTS, (action_rows, event_rows, call_rows, outbox_rows), strict=True):
        if rows:
            conn.execute(insert, rows)
    return outcome


def _actions_at(conn: sa.Connection, places: Sequence[tuple[int, int]]) -> dict[tuple[int, int], sa.Row[Any]]:
    """The logged actions at these (game, seq) places, by place."""
    if not places:
        return {}
    q = sa.select(_actions).where(sa.tuple_(_actions.c.game_id, _actions.c.seq).in_(list(places)))
    return {(int(r.game_id), int(r.seq)): r for r in conn.execute(q)}


def _is_this_turn(row: sa.Row[Any], t: _Turn) -> bool:
    """Whether the action logged at a turn's place is that turn: its inbound key when it has one
    (one platform event is one move), else the same seat, action, source and actor."""
    if t.inbound_key is not None:
        return bool(row.inbound_id == t.inbound_key)
    a = t.action
    return bool(row.inbound_id is None and row.seat == a.seat and row.kind == a.kind
                and list(row.value) == list(a.value) and row.source == a.source and row.actor == a.actor)

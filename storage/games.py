"""The games aggregate: a game's lifecycle (lobby, start, turns, end, announcement) and its log.

One method per question or write, each write one unit of work (``Database.write``).
A write that answers a platform event claims the event's inbound key in the same
transaction (``storage.inbound.claim``), so a redelivered event writes nothing.
Turns go through the group-commit writer (``storage.turnlog.TurnLog``). Sequence
numbers of actions and events run 1.. per game and are taken from ``max(seq)``
inside the write transaction, so they survive restarts and other processes.

Rows handed out are detached SQLModel objects; changing them changes nothing in
the database.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from storage.database import Database, write_once
from storage.deadlines import cancel_pending, cancel_pending_in
from storage.inbound import claim, claim_keys, point_at
from storage.ownership import Fence, NotOwner, TableLeases, db_now, guard_in
from storage.records import (
    ActionActor,
    ActionRecord,
    AgentCallRecord,
    EventRecord,
    GameLog,
    GameNotFound,
    GameStateError,
    OutboxRecord,
    SeatRecord,
)
from storage.tables import (
    ENDED,
    ActionRow,
    ActionSource,
    EventRow,
    GameRow,
    GameStatus,
    InboundRow,
    SeatRow,
    TableLeaseRow,
    inserted_id,
    table_of,
    utcnow,
)
from storage.turnlog import TurnLog

_games = table_of(GameRow)
_seats = table_of(SeatRow)
_events = table_of(EventRow)
_actions = table_of(ActionRow)
_leases = table_of(TableLeaseRow)
_inbound = table_of(InboundRow)
T = TypeVar("T")


def _status_list(status: GameStatus | Iterable[GameStatus]) -> list[GameStatus]:
    """One status or several, as members (a member's string is accepted; any other string is a ValueError)."""
    return [GameStatus(status)] if isinstance(status, str) else [GameStatus(s) for s in status]


class GameRepository:
    """Games, their frozen rosters, actions and events."""

    def __init__(self, db: Database, turns: TurnLog) -> None:
        self._db = db
        self._turns = turns
        # This process's hold on the games it drives, when several processes share the database.
        self.leases: TableLeases | None = None
        # Told of each lobby or lifecycle write whose COMMIT answer was lost (the metrics).
        self.on_unknown: Callable[[], None] | None = None

    async def create_game(
        self,
        *,
        game: str,
        variant: str,
        config: Mapping[str, Any],
        platform: str,
        place: str,
        place_name: str,
        host: str,
        lobby: Mapping[str, Any],
        inbound_key: str | None = None,
        tenant: str = "",
    ) -> int | None:
        """A new game in the lobby; returns its id, or None (writing nothing) when
        ``inbound_key`` was seen before. The key is written in the same transaction."""
        values = {
            "tenant": tenant,
            "game": game,
            "variant": variant,
            "config": dict(config),
            "platform": platform,
            "place": place,
            "place_name": place_name,
            "host": host,
            "status": GameStatus.LOBBY,
            "lobby": dict(lobby),
            "created_at": utcnow(),
            "rules_version": "",
        }
        async def write() -> int | None:
            async with self._db.write() as conn:
                # The key is claimed before the game exists (so a repeat writes nothing), then pointed at it.
                if inbound_key is not None and not await claim(conn, inbound_key, None):
                    return None
                res = await conn.execute(sa.insert(_games).values(values))
                game_id = inserted_id(res)
                if inbound_key is not None:
                    await point_at(conn, inbound_key, game_id)
                return game_id

        async def landed() -> int | None:
            # The game this very write made: its key points at it, or (no key) its row carries the
            # instant this call stamped on it.
            async with self._db.connect() as conn:
                if inbound_key is not None:
                    found = (await conn.execute(sa.select(_inbound.c.game_id)
                                                .where(_inbound.c.key == inbound_key))).scalar()
                else:
                    found = (await conn.execute(sa.select(_games.c.id).where(
                        _games.c.platform == platform, _games.c.place == place, _games.c.host == host,
                        _games.c.created_at == values["created_at"]))).scalar()
            return None if found is None else int(found)

        return await self._once("create a game", write, landed)

    async def _once(self, what: str, write: Callable[[], Awaitable[T]],
                    landed: Callable[[], Awaitable[T | None]]) -> T:
        """A lobby or lifecycle write exactly once, when the answer to its COMMIT is lost
        (``storage.database.write_once``): read back, then written again only if it did not land."""
        return await write_once(what, write, landed, unknown=self.on_unknown)

    async def update_lobby(
        self,
        game_id: int,
        lobby: Mapping[str, Any],
        *,
        config: Mapping[str, Any] | None = None,
        variant: str | None = None,
        inbound_key: str | None = None,
        host: str | None = None,
        running: bool = False,
    ) -> bool:
        """Replace the lobby (and optionally config, variant and host) of a game still in the lobby;
        with ``running`` of a running game instead (its deadline lives in the lobby).

        With ``inbound_key`` the edit and the key are written in one transaction: False,
        and nothing written, when the key was seen before (a redelivered command).
        """
        values: dict[str, Any] = {"lobby": dict(lobby)}
        if config is not None:
            values["config"] = dict(config)
        if variant is not None:
            values["variant"] = variant
        if host is not None:
            values["host"] = host
        status = GameStatus.RUNNING if running else GameStatus.LOBBY

        async def write() -> bool:
            async with self._db.write() as conn:
                if inbound_key is not None and not await claim(conn, inbound_key, game_id):
                    return False
                res = await conn.execute(
                    sa.update(_games)
                    .where(_games.c.id == game_id, _games.c.status == status)
                    .values(values)
                )
                if res.rowcount != 1:
                    await _raise_status(conn, game_id, "edit the lobby of")
            return True

        async def landed() -> bool | None:
            # The lost transaction claimed the key (a key seen before returns before the COMMIT), so
            # a claimed key is this edit; an edit without one is there when the row reads as written.
            async with self._db.connect() as conn:
                if inbound_key is not None:
                    return True if await _key_seen(conn, inbound_key) else None
                cols = [getattr(_games.c, k) for k in values]
                row = (await conn.execute(sa.select(*cols).where(_games.c.id == game_id))).first()
            return True if row is not None and dict(zip(values, row, strict=True)) == values else None

        return await self._once(f"edit the lobby of game {game_id}", write, landed)

    async def running_games_of(self, user_key: str) -> list[int]:
        """The running games where this member holds a seat, by id."""
        async with self._db.connect() as conn:
            q = (sa.select(_games.c.id).join(_seats, _seats.c.game_id == _games.c.id)
                 .where(_games.c.status == GameStatus.RUNNING, _seats.c.user_key == user_key).order_by(_games.c.id))
            return [int(g) for g in (await conn.execute(q)).scalars()]

    async def mark_broken(self, game_id: int, reason: str) -> None:
        """A running (or lobby) game whose log no longer replays: status broken, with the reason."""

        async def write() -> bool:
            async with self._db.write() as conn:
                await conn.execute(
                    sa.update(_games)
                    .where(_games.c.id == game_id,
                           _games.c.status.in_([GameStatus.LOBBY, GameStatus.RUNNING]))
                    .values(status=GameStatus.BROKEN, status_reason=reason, finished_at=utcnow())
                )
                await cancel_pending(conn, game_id)
            return True

        async def landed() -> bool | None:
            # Broken by this write or an earlier one: either way its deadlines went with it, in the
            # same transaction, and writing it again would change nothing.
            async with self._db.connect() as conn:
                status = (await conn.execute(sa.select(_games.c.status).where(_games.c.id == game_id))).scalar()
            return True if status == GameStatus.BROKEN else None

        await self._once(f"mark game {game_id} broken", write, landed)

    async def count_open_lobbies(self, tenant: str, host: str) -> int:
        """How many lobbies this member hosts in this tenant (the per-user cap)."""
        async with self._db.read() as s:
            q = select(sa.func.count()).select_from(GameRow).where(
                GameRow.tenant == tenant, GameRow.host == host, GameRow.status == GameStatus.LOBBY)
            return int((await s.exec(q)).one())

    async def start_game(
        self,
        game_id: int,
        *,
        seed: int,
        config: Mapping[str, Any],
        seats: Sequence[SeatRecord],
        events: Sequence[EventRecord],
        rules_version: str,
        inbound_key: str | None = None,
    ) -> None:
        """Lobby → running in one transaction: seed and config fixed, roster frozen, deal events 1..n,
        and the inbound key of the command that started it (a redelivery then finds it)."""
        now = utcnow()
        started = self.leases.clock() if self.leases is not None else 0.0

        async def write() -> bool:
            async with self._db.write() as conn:
                if inbound_key is not None and not await claim(conn, inbound_key, game_id):
                    raise GameStateError(f"cannot start game {game_id}: the command that starts it was already handled")
                res = await conn.execute(
                    sa.update(_games)
                    .where(_games.c.id == game_id, _games.c.status == GameStatus.LOBBY)
                    .values(
                        status=GameStatus.RUNNING,
                        seed=seed,
                        config=dict(config),
                        rules_version=rules_version,
                        started_at=now,
                    )
                )
                if res.rowcount != 1:
                    await _raise_status(conn, game_id, "start")
                if seats:
                    await conn.execute(
                        sa.insert(_seats),
                        [
                            {
                                "game_id": game_id,
                                "seat": s.seat,
                                "kind": s.kind,
                                "user_key": s.user_key,
                                "display_name": s.display_name,
                                "agent_spec": s.agent_spec,
                                "joined_at": now,
                            }
                            for s in seats
                        ],
                    )
                await _insert_events(conn, game_id, events, first_seq=1, action_seq=None, now=now)
                if self.leases is not None:  # whoever starts a game drives it
                    await conn.execute(sa.insert(_leases).values(
                        game_id=game_id, owner=self.leases.owner, token=1,
                        expires_at=db_now(conn.dialect.name, self.leases.ttl)))
            return True

        async def landed() -> bool | None:
            # This start, not another: the instant this call stamped on the row (and its key, claimed
            # in the same transaction).
            async with self._db.connect() as conn:
                started_at = (await conn.execute(sa.select(_games.c.started_at)
                                                 .where(_games.c.id == game_id))).scalar()
                if started_at != now or (inbound_key is not None and not await _key_seen(conn, inbound_key)):
                    return None
            return True

        await self._once(f"start game {game_id}", write, landed)
        if self.leases is not None:
            self.leases.held[game_id] = 1
            self.leases.confirmed(game_id, started)

    async def append_turn(
        self,
        game_id: int,
        *,
        action: ActionRecord,
        events: Sequence[EventRecord],
        inbound_key: str | None,
        agent_calls: Sequence[AgentCallRecord] = (),
        outbox: Sequence[OutboxRecord] = (),
        seq: int | None = None,
    ) -> bool:
        """Log one action with its events, agent calls and the messages it sends (``outbox``),
        all or nothing.

        Returns False, having written nothing, when ``inbound_key`` was seen
        before. Raises GameStateError (writing nothing) when the game is not running.
        ``seq``: the action's place as the caller's copy of the game expects it (written
        there exactly once; ``storage.turnlog.LogAhead`` when the log already holds another
        action there); None takes the next free place.

        Turns that arrive while a write is in progress are committed together in
        the next transaction (group commit): one writer, few round trips, each turn
        still all-or-nothing and answered only once it is durable.
        """
        return await self._turns.append(game_id, action, events, inbound_key, agent_calls, outbox, seq)

    async def finish_game(
        self,
        game_id: int,
        *,
        status: GameStatus,
        result: Mapping[str, Any] | None,
        events: Sequence[EventRecord] = (),
        inbound_key: str | None = None,
    ) -> bool:
        """Save how a game ended (before anyone announces it); pending deadlines are cancelled.

        ``finished`` needs a running game; ``aborted`` also ends a lobby.
        Final events get the next seqs and no action_seq. With ``inbound_key`` (the command that
        ends it) the end and the key are written in one transaction: False, and nothing written,
        when the key was seen before.
        """
        status = GameStatus(status)
        if status not in ENDED:
            raise ValueError(f"a game ends as finished or aborted, not {status}")
        allowed = [GameStatus.RUNNING]
        if status is GameStatus.ABORTED:
            allowed.append(GameStatus.LOBBY)
        now = utcnow()
        fence = self._end_fence(game_id, status)

        def end(conn: sa.Connection) -> bool:
            if fence is not None:
                guard_in(conn, game_id, fence)
            if inbound_key is not None and inbound_key not in claim_keys(conn, [(inbound_key, game_id)], now):
                return False
            res = conn.execute(
                sa.update(_games)
                .where(_games.c.id == game_id, _games.c.status.in_(allowed))
                .values(status=status, result=dict(result) if result is not None else None, finished_at=now)
            )
            if res.rowcount != 1:
                _raise_status_in(conn, game_id, f"mark as {status.value}")
            if events:
                last = conn.execute(sa.select(sa.func.max(_events.c.seq)).where(_events.c.game_id == game_id)).scalar()
                conn.execute(sa.insert(_events), _event_rows(game_id, events, first_seq=(last or 0) + 1,
                                                             action_seq=None, now=now))
            cancel_pending_in(conn, game_id)
            return True

        async def write() -> bool:
            # Every game's end is a write of the one writer: one trip (``Database.write_sync``).
            return await self._db.write_sync(end)

        async def landed() -> bool | None:
            # This end, not another: the status and the instant this call stamped on the row.
            async with self._db.connect() as conn:
                row = (await conn.execute(sa.select(_games.c.status, _games.c.finished_at)
                                          .where(_games.c.id == game_id))).first()
            return True if row is not None and row[0] == status and row[1] == now else None

        return await self._once(f"end game {game_id}", write, landed)

    def _end_fence(self, game_id: int, status: GameStatus) -> Fence | None:
        """The hold a game's end is written under when several processes share the database: a
        finished game only by its live holder; an abort by its holder when it has one here (a
        lobby, or a table another process drives, is aborted as before)."""
        if self.leases is None:
            return None
        fence = self.leases.fence(game_id)
        if fence is None and status is GameStatus.ABORTED:
            return None
        live = self.leases.live_fence(game_id)
        if live is None:
            raise NotOwner(f"game {game_id} is not held by this process (or its hold ran out): its end is not written")
        return live

    async def mark_announced(self, game_id: int) -> bool:
        """True the first time only: whoever gets True posts the result. Where several processes
        share the database, a process that holds the game but whose hold ran out gets False."""
        fence = self.leases.fence(game_id) if self.leases is not None else None
        if fence is not None and self.leases is not None and not self.leases.live(game_id):
            return False
        now = utcnow()

        leases = self.leases

        def mark(conn: sa.Connection) -> bool:
            if fence is not None:
                try:
                    guard_in(conn, game_id, fence)
                except NotOwner:
                    return False
            cond = [_games.c.id == game_id, _games.c.announced_at.is_(None), _games.c.status.in_(list(ENDED))]
            if fence is None and leases is not None:
                # A game another live process holds is its to announce (it ends it, then announces
                # it): only a game whose holder is gone is announced by whoever finds it.
                cond.append(~sa.exists().where(_leases.c.game_id == game_id,
                                               _leases.c.owner != leases.owner,
                                               _leases.c.expires_at > db_now(conn.dialect.name)))
            return conn.execute(sa.update(_games).where(*cond).values(announced_at=now)).rowcount == 1

        async def write() -> bool:
            return await self._db.write_sync(mark)

        async def landed() -> bool | None:
            # This call's mark, by the instant it stamped: written again, it would find the game
            # announced and answer False, and then nobody would post the result. Anything else
            # (unmarked, or marked by another call) is written again, which answers for itself.
            async with self._db.connect() as conn:
                at = (await conn.execute(sa.select(_games.c.announced_at).where(_games.c.id == game_id))).scalar()
            return True if at == now else None

        return await self._once(f"mark game {game_id} announced", write, landed)

    async def unannounced_finished(self) -> list[GameRow]:
        """Ended games (finished or aborted) whose result was saved but never announced."""
        async with self._db.read() as s:
            q = (
                select(GameRow)
                .where(col(GameRow.status).in_(list(ENDED)), col(GameRow.announced_at).is_(None))
                .order_by(col(GameRow.id))
            )
            return list((await s.exec(q)).all())

    # ------------------------------------------------------------------ reading the log

    async def game(self, game_id: int) -> GameRow | None:
        async with self._db.read() as s:
            return await s.get(GameRow, game_id)

    async def load_game(self, game_id: int) -> GameLog:
        """The game's row, frozen roster, actions and events (by seq). Raises GameNotFound."""
        async with self._db.read() as s:
            row = await s.get(GameRow, game_id)
            if row is None:
                raise GameNotFound(game_id)
            return (await self._logs(s, [row]))[0]

    async def load_games(self, game_ids: Sequence[int]) -> list[GameLog]:
        """Several games' logs in four queries (the rows, seats, actions, events), in id order;
        ids with no game are left out."""
        if not game_ids:
            return []
        async with self._db.read() as s:
            q = select(GameRow).where(col(GameRow.id).in_(sorted(set(game_ids)))).order_by(col(GameRow.id))
            return await self._logs(s, list((await s.exec(q)).all()))

    async def unfinished_games(self) -> list[GameLog]:
        """Running games, to be replayed on start-up."""
        async with self._db.read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.RUNNING).order_by(col(GameRow.id))
            rows = list((await s.exec(q)).all())
            return await self._logs(s, rows)

    async def open_lobbies(self, platform: str | None = None, *, tenant: str | None = None) -> list[GameRow]:
        async with self._db.read() as s:
            q = select(GameRow).where(GameRow.status == GameStatus.LOBBY)
            if platform is not None:
                q = q.where(GameRow.platform == platform)
            if tenant is not None:
                q = q.where(GameRow.tenant == tenant)
            return list((await s.exec(q.order_by(col(GameRow.id)))).all())

    async def lobby_at(self, platform: str, place: str) -> GameRow | None:
        """The newest game in the lobby or running at this place, if any."""
        async with self._db.read() as s:
            q = (
                select(GameRow)
                .where(
                    GameRow.platform == platform,
                    GameRow.place == place,
                    col(GameRow.status).in_([GameStatus.LOBBY, GameStatus.RUNNING]),
                )
                .order_by(col(GameRow.id).desc())
                .limit(1)
            )
            return (await s.exec(q)).first()

    async def games(
        self,
        status: GameStatus | Iterable[GameStatus] | None = None,
        game: str | None = None,
        since: datetime | None = None,
        *,
        finished_since: datetime | None = None,
        limit: int | None = None,
        tenant: str | None = None,
    ) -> list[GameRow]:
        """Games by status (one or several), game name, created at or after ``since``, finished at
        or after ``finished_since``, tenant; oldest first."""
        async with self._db.read() as s:
            q = select(GameRow)
            if tenant is not None:
                q = q.where(GameRow.tenant == tenant)
            if status is not None:
                q = q.where(col(GameRow.status).in_(_status_list(status)))
            if game is not None:
                q = q.where(GameRow.game == game)
            if since is not None:
                q = q.where(col(GameRow.created_at) >= since)
            if finished_since is not None:
                q = q.where(col(GameRow.finished_at) >= finished_since)
            q = q.order_by(col(GameRow.id))
            if limit is not None:
                q = q.limit(limit)
            return list((await s.exec(q)).all())

    async def actors(self, game_ids: Iterable[int]) -> dict[tuple[int, int], ActionActor]:
        """Who played each action of these games, by (game id, action seq): one query for all of them."""
        ids = sorted(set(game_ids))
        if not ids:
            return {}
        a = _actions.c
        async with self._db.connect() as conn:
            rows = (await conn.execute(sa.select(a.game_id, a.seq, a.seat, a.source, a.actor).where(a.game_id.in_(ids))))
            return {(gid, seq): ActionActor(seat, ActionSource(source), actor) for gid, seq, seat, source, actor in rows}

    async def _logs(self, s: AsyncSession, rows: list[GameRow]) -> list[GameLog]:
        if not rows:
            return []
        ids = [r.id for r in rows]
        seats: dict[int, list[SeatRow]] = defaultdict(list)
        actions: dict[int, list[ActionRow]] = defaultdict(list)
        events: dict[int, list[EventRow]] = defaultdict(list)
        q_seats = select(SeatRow).where(col(SeatRow.game_id).in_(ids)).order_by(col(SeatRow.game_id), col(SeatRow.seat))
        for seat in (await s.exec(q_seats)).all():
            seats[seat.game_id].append(seat)
        q_actions = (
            select(ActionRow).where(col(ActionRow.game_id).in_(ids)).order_by(col(ActionRow.game_id), col(ActionRow.seq))
        )
        for a in (await s.exec(q_actions)).all():
            actions[a.game_id].append(a)
        q_events = select(EventRow).where(col(EventRow.game_id).in_(ids)).order_by(col(EventRow.game_id), col(EventRow.seq))
        for e in (await s.exec(q_events)).all():
            events[e.game_id].append(e)
        return [GameLog(r, seats[r.id], actions[r.id], events[r.id]) for r in rows if r.id is not None]


def _event_rows(game_id: int, events: Sequence[EventRecord], *, first_seq: int, action_seq: int | None,
                now: datetime) -> list[dict[str, Any]]:
    return [{"game_id": game_id, "seq": first_seq + i, "action_seq": action_seq, "kind": e.kind,
             "data": dict(e.data), "audience": e.audience_json, "created_at": now} for i, e in enumerate(events)]


async def _insert_events(
    conn: AsyncConnection,
    game_id: int,
    events: Sequence[EventRecord],
    *,
    first_seq: int,
    action_seq: int | None,
    now: datetime,
) -> None:
    if not events:
        return
    await conn.execute(sa.insert(_events), _event_rows(game_id, events, first_seq=first_seq, action_seq=action_seq,
                                                       now=now))



async def _key_seen(conn: AsyncConnection, key: str) -> bool:
    return (await conn.execute(sa.select(_inbound.c.key).where(_inbound.c.key == key))).first() is not None


def _raise_status_in(conn: sa.Connection, game_id: int, what: str) -> None:
    status = conn.execute(sa.select(_games.c.status).where(_games.c.id == game_id)).scalar()
    if status is None:
        raise GameNotFound(game_id)
    raise GameStateError(f"cannot {what} game {game_id}: it is {status}")


async def _raise_status(conn: AsyncConnection, game_id: int, what: str) -> None:
    await conn.run_sync(_raise_status_in, game_id, what)


"""Resume after a restart: rebuild running games from the log, re-arm their deadlines, give every
seated member their secrets and the story so far again, and announce results saved but never
announced.

One bad game never stops the others: a game whose log no longer replays, or that fails while
resuming, is marked broken with its reason (``hushtable doctor`` lists them), its channel is
told and is free for a new table, and the next game is resumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Set
from datetime import UTC
from typing import Protocol

import sqlalchemy as sa

from bot.core import render
from bot.core.deadlines import Deadlines
from bot.core.delivery import Delivery
from bot.core.messages import Outgoing
from bot.core.platform import SendFenced
from bot.core.tables import ReplayFailed, Table, place_of, rebuild
from bot.core.turns import Turns
from storage.ownership import NotOwner, TableLeases
from storage.ports import DeadlinePort, GamePort, OutboxPort
from storage.records import GameLog
from storage.tables import GameRow, GameStatus

log = logging.getLogger(__name__)


class ResumeStore(GamePort, DeadlinePort, OutboxPort, Protocol):
    """What resuming uses of the log: running and unannounced games, pending deadlines, and
    which games this process holds when several share the database."""

    @property
    def leases(self) -> TableLeases | None: ...


class Resume:
    def __init__(self, store: ResumeStore, delivery: Delivery, deadlines: Deadlines, turns: Turns,
                 tables: dict[int, Table], opened: Callable[[Table], None]) -> None:
        self.store = store
        self.delivery = delivery
        self.deadlines = deadlines
        self.turns = turns
        self.tables = tables
        self.opened = opened
        # One run at a time: two at once (a start, a supervisor round, a takeover by a command)
        # would both rebuild a game neither had in memory yet, and two copies would drive it.
        self._running = asyncio.Lock()

    async def run(self, lock_for: Callable[[int], asyncio.Lock], handed_back: Set[int] = frozenset()) -> None:
        """Resume every running game this process may drive: all of them on a database of one
        process; on a shared one, those it holds or can take now (nobody holds them, or their
        holder stopped renewing). Idempotent: a table already in memory is left alone.

        ``handed_back``: games a live holder just gave to this process. Nothing restarted, so
        they resume quietly: the members were told and prompted by the holder already."""
        async with self._running:
            await self._run(lock_for, handed_back)

    async def _run(self, lock_for: Callable[[int], asyncio.Lock], handed_back: Set[int]) -> None:
        resumed: list[Table] = []
        due: dict[int, float | None] = {}
        leases = self.store.leases
        if leases is not None:
            await leases.acquire()
        for glog in await self.store.unfinished_games():
            row = glog.row
            if row.id is None or row.id in self.tables or row.platform not in self.delivery.platforms:
                continue
            if leases is not None and row.id not in leases.held:
                continue  # another process drives it
            try:
                table = rebuild(glog)
            except ReplayFailed as exc:
                await self.mark_broken(row, str(exc))
                continue
            except Exception as exc:  # an unknown game, a config that no longer loads
                await self.mark_broken(row, f"it could not be rebuilt ({type(exc).__name__})")
                continue
            table.lock = lock_for(table.game_id)
            due[table.game_id] = first_due(glog)
            self.opened(table)
            resumed.append(table)
        # Deadlines first: a re-prompted human keeps the deadline they already had.
        ids = {t.game_id for t in resumed}
        for d in await self.store.pending_deadlines():
            if d.game_id in ids and d.id is not None:
                self.deadlines.arm(d.id, d.game_id, d.seat, d.due_at)
        for table in resumed:
            try:
                if table.game_id in handed_back:
                    table.prompted = {s for s in table.acting() if not table.seats[s].is_ai}
                    await self.turns.advance(table)
                    continue
                await self._resume(table, due.get(table.game_id))
            except (NotOwner, sa.exc.DBAPIError, OSError) as exc:
                # Not the game's fault: this process's hold ran out (or moved), or the database went
                # away, while it resumed it. It lets the table go from memory; a game it still holds
                # is resumed again by a later round, one it lost by its new holder.
                log.warning("game %s could not be resumed now (%s); tried again later", table.game_id,
                            type(exc).__name__)
                self.tables.pop(table.game_id, None)
                self.deadlines.cancel(table.game_id)
                if isinstance(exc, NotOwner) and self.store.leases is not None:
                    self.store.leases.forget(table.game_id)
            except Exception as exc:
                current = await self.store.game(table.game_id)
                if current is not None:
                    await self.mark_broken(current, f"it failed while resuming ({type(exc).__name__})")
                await self.turns.ended(table, None)
        for ended in await self.store.unannounced_finished():
            if ended.platform in self.delivery.platforms:
                await self._announce(ended)

    async def _resume(self, table: Table, since: float | None) -> None:
        """``since``: when the prompts of the table's state were first due (`first_due`); the
        notice and prompts sent again here may be on the platform already since then."""
        # Messages of turns logged before the table changed hands (or the process restarted) that
        # were never marked sent go out first, the last turn's too: the outbox sends each at least once.
        await self.turns.outbox.resend([table])
        if table.engine.result(table.state) is not None:
            async with table.lock:
                await self.turns.finish(table)
            return
        # Keyed by the state, like the prompts: several restarts (or takeovers) before the next move
        # say it once on a platform that finds or drops a repeat.
        await self.delivery.public(table, Outgoing("The table is back after a restart. Play resumes.",
                                                   key=f"{table.game_id}:{table.seq}:back", maybe_sent_since=since))
        # Secrets again for everyone seated: a deal the platform never delivered (a crash between
        # the deal and the messages) and a console that forgot its private messages both need it.
        for info in table.seats:
            if not info.is_ai:
                await self.delivery.private(table, info, render.private_digest(table, info.seat, history=True))
        # The prompts again too, as sent again: the holder before (a paused one, or this process
        # before a restart) may have sent them already, and a member should see each one once.
        await self.turns.advance(table, since=since)

    async def mark_broken(self, row: GameRow, reason: str) -> None:
        """The game stops for good with its reason; the channel hears it and is free again."""
        assert row.id is not None
        log.error("game %s is broken: %s", row.id, reason)
        await self.store.mark_broken(row.id, reason)
        # Said only while this process may still speak for the game (a paused one stays quiet).
        with contextlib.suppress(SendFenced), self.delivery.fenced(row.id):
            await self.delivery.post(place_of(row), Outgoing(
                f"Game #{row.id} cannot go on: {reason}. It is closed; start a new table whenever you like."))

    async def _announce(self, row: GameRow) -> None:
        assert row.id is not None
        if not await self.store.mark_announced(row.id) or row.status != GameStatus.FINISHED:
            return
        glog = await self.store.load_game(row.id)
        names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
        await self.delivery.post(place_of(row), Outgoing(render.result_text(row.result or {}, names),
                                                         title=f"Game #{row.id} is over", user_text=True))


def first_due(glog: GameLog) -> float | None:
    """When the prompts of a rebuilt table's state were first due (Unix seconds): its last logged
    action's time, or the start's for a game with none yet; None when the log does not say."""
    at = glog.actions[-1].created_at if glog.actions else glog.row.started_at
    if at is None:
        return None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).timestamp()

"""Holding: which tables this process drives when several bot processes share one database.

With one process (SQLite, or PostgreSQL without leases) every table is this process's and
almost nothing here acts. With several (``storage.ownership``): a lease per running game says
which live process drives it; this room renews the leases in a task of its own, takes over the
games of a process that died, lets go of those another process took over, hands a table back to
the process that receives its tenant's commands (``serving.py``), and relays a command for a
table held elsewhere to its holder (``storage.relay``, JSON by ``forward.py``) so the holder
answers it. The supervisor's rounds (repairs of deadlines, unsent messages and stalled seats)
run from here too, as they share the leases' clock.

Its needs are handed in by the service that wires it (the tables in memory, the lock of a game,
how to resume, how to handle a relayed command); it knows nothing of the service itself.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any

from bot.core import forward, intake
from bot.core.commands import Refused
from bot.core.deadlines import Deadlines
from bot.core.messages import Command, Reply
from bot.core.observe import ServiceObserver
from bot.core.platform import Platform
from bot.core.resume import Resume
from bot.core.serving import Served, owner_of
from bot.core.tables import Table
from bot.core.turns import Turns
from bot.settings import Settings
from storage.ownership import NotOwner
from storage.ports import TableStore
from storage.tables import GameStatus

log = logging.getLogger(__name__)

SUPERVISE_EVERY_S = 30.0
RELAY_TIMEOUT_S = 10.0  # how long a command relayed to a table's holder waits for its answer

Handle = Callable[[Command], Awaitable[Reply]]
"""How this process handles a command (the service's ``handle``): a relayed command takes it too."""


class Holding:
    def __init__(self, store: TableStore, settings: Settings, observer: ServiceObserver, tables: dict[int, Table],
                 platforms: Mapping[str, Platform], resume: Resume, turns: Turns, deadlines: Deadlines, *,
                 lock_for: Callable[[int], asyncio.Lock], forget: Callable[[int], None],
                 spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]], handle: Handle) -> None:
        self.store = store
        self.settings = settings
        self.observer = observer
        self.tables = tables
        self.platforms = platforms
        self.resume = resume
        self.turns = turns
        self.deadlines = deadlines
        self.lock_for = lock_for
        self.forget = forget  # memory lets a game go: its table, lock and agents
        self.spawn = spawn
        self.handle = handle
        self.relayed = 0  # commands answered by the process holding their table
        # The tenants whose commands reach this process (several processes on one database); None:
        # what the settings and the attached platforms say (``Served.of_settings``).
        self.served: Served | None = None
        self._supervisor: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ start and stop

    async def join(self) -> None:
        """Before the games resume: listen for relayed commands and say which tenants this process serves."""
        if self.store.relay is not None:
            await self.store.relay.start(self._answer_relayed)
        await self._advertise()

    def run(self) -> None:
        """After the games resumed: the supervisor and (with leases) the renewer, each once."""
        loop = asyncio.get_running_loop()
        if self._supervisor is None or self._supervisor.done():
            self._supervisor = loop.create_task(self._supervise())
        if self.store.leases is not None and (self._renewer is None or self._renewer.done()):
            self._renewer = loop.create_task(self._renew())

    async def stop(self) -> None:
        tasks = [t for t in (self._supervisor, self._renewer) if t is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._supervisor = self._renewer = None

    def live(self, game_id: int) -> bool:
        """May this process still drive (and send for) the game?"""
        leases = self.store.leases
        return leases is None or leases.live(game_id)

    def ended(self, game_id: int) -> None:
        if self.store.leases is not None:
            self.store.leases.forget(game_id)

    # ------------------------------------------------------------------ the supervisor and the renewer

    async def _supervise(self) -> None:
        leases = self.store.leases
        # With several processes on one database the supervisor also takes over the games of a
        # process that died, soon after their leases run out (renewing is the renewer's task).
        every = SUPERVISE_EVERY_S if leases is None else min(SUPERVISE_EVERY_S, leases.ttl.total_seconds() / 4)
        rounds_per_check = max(1, round(SUPERVISE_EVERY_S / every))
        for round_no in itertools.count(1):
            await asyncio.sleep(every)
            if leases is not None:
                try:
                    await self.hold_tables(renew=False)
                except Exception as exc:  # a database hiccup: try again next round
                    log.error("table leases failed: %s", type(exc).__name__)
            if round_no % rounds_per_check:
                continue
            await self.supervise_once()

    async def supervise_once(self) -> None:
        """One repair round: re-arm the pending deadlines of the tables this process drives, send
        what their turns left unsent (``bot.core.outbox``), then nudge tables where a seat owes a move but nothing will make it (``Turns.supervise_once``)."""
        try:
            rearmed = await self.deadlines.rearm([g for g in self.tables if self.live(g)])
            if rearmed:
                log.warning("%s pending deadline(s) had no timer; armed again", rearmed)
                self.observer.deadlines_rearmed(rearmed)
        except Exception as exc:  # the database is away: the next round tries again
            log.error("re-arming deadlines failed: %s", type(exc).__name__)
        try:
            await self.turns.outbox.resend([t for t in self.tables.values() if not t.over])
        except Exception as exc:  # the database is away: the next round tries again
            log.error("sending unsent messages failed: %s", type(exc).__name__)
        try:
            await self.turns.supervise_once()
        except Exception as exc:  # the supervisor itself must outlive any one table
            log.error("supervisor failed: %s", type(exc).__name__)

    async def _renew(self) -> None:
        """Renew this process's leases every third of a lease, in a task of its own, so a hold is
        confirmed twice more before it could run out even when a renewal is slow; a failed renewal
        is tried again sooner. A table whose hold lapsed meanwhile is nudged once it is back."""
        leases = self.store.leases
        assert leases is not None
        lease_s = leases.ttl.total_seconds()
        while True:
            lapsed = {g for g in self.tables if not leases.live(g)}
            try:
                await self._drop_lost(await leases.renew())
                pause = lease_s / 3
            except Exception as exc:  # a database hiccup: sooner than a third of a lease
                log.error("renewing table leases failed: %s", type(exc).__name__)
                pause = lease_s / 10
            else:
                back = [self.tables[g] for g in lapsed if g in self.tables and leases.live(g)]
                for table in back:
                    if not table.over and not table.lock.locked():
                        self.spawn(self.turns.advance(table))
            await asyncio.sleep(pause)

    async def _drop_lost(self, lost: set[int]) -> None:
        """Let go of the tables another process took over: it drives them now."""
        if lost:
            self.observer.lease_moved("lost", len(lost))
        for game_id in lost:
            table = self.tables.get(game_id)
            if table is None:
                continue
            log.warning("game %s was taken over by another process; this one stops driving it", game_id)
            self.drop(game_id, table)

    async def hold_tables(self, *, renew: bool = True) -> None:
        """Renew this process's leases (unless the renewer does), let go of the tables another
        process took over, and resume the running games this process can take (their holder died)."""
        leases = self.store.leases
        if leases is None:
            return
        if self.store.relay is not None:  # listen again if the listening connection was lost
            await self.store.relay.ensure()
        if renew:
            await self._drop_lost(await leases.renew())
        taken = await leases.acquire(renew=False)
        given = await leases.take_given()  # handed back to this process by the one that held them
        if taken or given:
            self.observer.lease_moved("taken", len(taken) + len(given))
        # Reading every running game's log is for a round that took something over (or holds a
        # game not in memory yet), not for each one.
        if taken or given or set(leases.held) - set(self.tables):
            await self.resume.run(self.lock_for, handed_back=set(given))
        await self._hand_back()

    # ------------------------------------------------------------------ tenants and hand-back

    async def _advertise(self) -> None:
        """Tell the other processes which tenants this one serves (its heartbeat row, renewed with
        its leases), so that the tables they took over from it come back without a command."""
        leases = self.store.leases
        if leases is None:
            return
        served = self.served if self.served is not None else Served.of_settings(self.settings, self.platforms)
        leases.serves = served.to_json() if served else None
        if leases.serves is not None:
            await self._drop_lost(await leases.renew())

    async def _hand_back(self) -> None:
        """Give each table of a tenant that another live process serves (and this one does not) back
        to that process: this one took it over while that one was down. Its next round takes it."""
        leases = self.store.leases
        if leases is None:
            return
        me = Served.from_json(leases.serves or {})
        peers: dict[str, dict[str, Any]] | None = None
        for game_id, table in list(self.tables.items()):
            if table.over or not leases.live(game_id) or me.covers(table.tenant):
                continue
            if peers is None:
                peers = await leases.peers()
            to = owner_of(table.tenant, me, peers)
            if to is not None:
                await self._let_go(game_id, to)

    async def _handed_back(self, game_id: int) -> None:
        """Drive a table its live holder just handed over (the lease row already names this process)."""
        leases = self.store.leases
        assert leases is not None
        try:
            await leases.take(game_id)
        except NotOwner:
            return  # taken by another meanwhile (this process was slow past the lease): it drives it
        self.observer.lease_moved("taken", 1)
        await self.resume.run(self.lock_for, handed_back={game_id})

    async def _let_go(self, game_id: int, asker: str) -> bool:
        """Stop driving a table and write its lease over to the process that asked for it."""
        leases, table = self.store.leases, self.tables.get(game_id)
        if leases is None or table is None or table.over:
            return False
        async with table.lock:
            if table.over or self.tables.get(game_id) is not table:
                return False
            self.drop(game_id, table)
            # Messages this process sent are marked so before the next holder looks for unsent ones.
            await self.turns.outbox.flush()
            if not await leases.hand_over(game_id, asker):
                return False
        log.info("game %s handed back to the process that receives its tenant's commands", game_id)
        self.observer.lease_moved("handed_back", 1)
        return True

    def drop(self, game_id: int, table: Table) -> None:
        """Forget a table this process no longer drives (taken over, or handed back)."""
        if table.driver is not None and table.driver is not asyncio.current_task():
            table.driver.cancel()
        self.deadlines.cancel(game_id)
        self.forget(game_id)

    # ------------------------------------------------------------------ commands for tables held elsewhere

    async def reach(self, cmd: Command, game_id: int) -> Reply | None:
        """A command for a running game this process does not drive (several processes share the
        database). None: handle it here (this process drives the game, or took it over because its
        holder's lease ran out). Otherwise the holder's answer: the command is relayed to the live
        holder, which handles it; when the command came from the game's own tenant (this process
        receives that tenant's events: its shard or workspace), the holder also hands the table
        back, so the next command is handled here. A holder that does not answer in time leaves
        one sentence saying the table is moving; nothing was logged, so sending again is safe."""
        leases = self.store.leases
        if leases is None or game_id in self.tables:
            return None
        row = await self.store.game(game_id)
        if row is None or row.status != GameStatus.RUNNING or not intake.reaches(cmd, row.tenant):
            return None  # the command's own path answers these as it always has
        if taken := await leases.acquire([game_id]):
            self.observer.lease_moved("taken", len(taken))
            await self.resume.run(self.lock_for)
        if game_id in self.tables:
            return None
        relay, holder = self.store.relay, await leases.holder(game_id)
        if relay is not None and holder is not None and holder != leases.owner and not forward.RELAYED.get():
            handback = cmd.tenant == row.tenant
            answer = await relay.ask(holder, {"game": game_id, "command": forward.command_json(cmd),
                                              "handback": leases.owner if handback else None},
                                     timeout=RELAY_TIMEOUT_S)
            if answer is not None:
                self.relayed += 1
                self.observer.command_forwarded()
                if answer.get("released"):  # the holder wrote the lease over to this process
                    await self._handed_back(game_id)
                return forward.reply_from(answer["reply"])
        self.observer.command_refused()
        raise Refused("That game is moving to another bot process; send your move again in a few seconds.")

    async def reach_text(self, cmd: Command) -> Reply | None:
        """A reply in direct messages while the member owes an answer at no table of this process:
        relayed to the holder of their one running game elsewhere (with several, the member is asked
        to use the game's own button, as with several games here)."""
        if self.store.leases is None or any(
                t.seat_of(cmd.user) is not None and not t.over for t in self.tables.values()):
            return None
        elsewhere = [g for g in await self.store.running_games_of(cmd.user.key) if g not in self.tables]
        if len(elsewhere) != 1:
            return None
        return await self.reach(cmd, elsewhere[0])

    async def _answer_relayed(self, body: dict[str, Any]) -> dict[str, Any]:
        """Handle a command another process relayed here (it holds no table this one drives), and
        hand the table back when asked once the command is done."""
        game_id = int(body["game"])
        cmd = forward.command_from(body["command"])
        token = forward.RELAYED.set(True)
        try:
            reply = await self.handle(cmd)
        finally:
            forward.RELAYED.reset(token)
        asker = body.get("handback")
        released = isinstance(asker, str) and await self._let_go(game_id, asker)
        return {"reply": forward.reply_json(reply), "released": released}

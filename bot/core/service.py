"""TableService: the one entry point for commands from every platform.

One inbound command makes one trip: typed arguments (bot.core.commands) → the room that
handles its kind (lobby.py for tables, turns.py for moves) → engine.apply → storage append
(one transaction, idempotent on the platform's event id) → events fan out by audience
(delivery.py) → the adapter renders. AI seats re-enter through the same path as humans.
State is never stored twice: running games are rebuilt on start by replaying their log.
This file keeps the wiring, the dispatch, start and stop.
"""

from __future__ import annotations

import asyncio
import gc
import io
import itertools
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

import games as game_registry
from bot.core import commands as c
from bot.core import forward, intake
from bot.core.agents import AgentFactory, AgentRunner
from bot.core.commands import Refused
from bot.core.deadlines import Deadlines
from bot.core.delivery import Delivery
from bot.core.lobby import Lobbies, host_user
from bot.core.messages import Command, CommandKind, Outgoing, Place, Reply
from bot.core.observe import NullObserver, ServiceObserver
from bot.core.platform import Platform
from bot.core.resume import Resume
from bot.core.serving import Served, owner_of
from bot.core.tables import Lobby, LobbySeat, Table
from bot.core.turns import DUPLICATE, Turns
from bot.settings import Settings
from games.base import config_to_dict
from models.agent_names import canonical
from storage.export import Withheld
from storage.ownership import NotOwner
from storage.ports import TableStore
from storage.records import GameLog
from storage.tables import GameStatus, SeatKind

log = logging.getLogger(__name__)

class ExportFilter(Protocol):
    """A research export's filter that audits the export when it is done (``bot.core.privacy.ResearchFilter``)."""

    def __call__(self, log: GameLog) -> Withheld: ...

    async def finish(self, games: int) -> None: ...


FinishListener = Callable[[int, Place, str], Awaitable[Outgoing | None]]
"""Called after a game's result is announced with (game id, the table's place, tenant); an Outgoing
it returns is posted to the table's place."""

# Turns detect redelivery inside their own append; other kinds check before doing anything.
_NO_PRECHECK = frozenset({CommandKind.LIST, CommandKind.STATUS, CommandKind.RULES, CommandKind.SHOW, CommandKind.ACT,
                          CommandKind.EXPORT})
SUPERVISE_EVERY_S = 30.0
# The cyclic collector's thresholds while tables are served (see ``quiet_collector``).
GC_THRESHOLDS = (2_000, 200, 20)
RELAY_TIMEOUT_S = 10.0  # how long a command relayed to a table's holder waits for its answer


class TableService:
    def __init__(self, store: TableStore, *, settings: Settings, agents: AgentFactory,
                 clock: Callable[[], float] = time.time, observer: ServiceObserver | None = None) -> None:
        self.store = store
        self.settings = settings
        self.agents = agents
        self.observer: ServiceObserver = observer or NullObserver()
        self.runner = AgentRunner(agents, timeout_s=settings.ai_timeout_s, retries=settings.ai_retries,
                                  fallback_spec=settings.fallback_agent)
        self.clock = clock
        self.tables: dict[int, Table] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._finish_listeners: list[FinishListener] = []
        # The privacy line a member sees on their first join in a tenant (bot.core.privacy.PrivacyDesk.notice).
        self.join_notice: Callable[[str, str], Awaitable[str | None]] | None = None
        self.export_filter: Callable[[str, str], Awaitable[ExportFilter]] | None = None  # likewise, for exports
        self._ended: dict[int, asyncio.Future[dict[str, Any] | None]] = {}
        self._supervisor: asyncio.Task[None] | None = None
        self._renewer: asyncio.Task[None] | None = None
        self.relayed = 0  # commands answered by the process holding their table
        # The tenants whose commands reach this process (several processes on one database); None:
        # what the settings and the attached platforms say (``Served.of_settings``).
        self.served: Served | None = None
        store.watch_commits(lambda: self.observer.commit_unknown())
        self.delivery = Delivery(self.observer)
        self.delivery.live = self._live
        self.deadlines = Deadlines(store, clock, self.observer)
        self.turns = Turns(store, settings, self.runner, self.delivery, self.deadlines, self.observer, self.tables,
                          self._spawn, self._table_ended)
        self.lobbies = Lobbies(store, settings, self.delivery, self.turns, self.tables, self.lock_for,
                               self.agent_choices, self._table_opened, lambda gid: self._resolve(gid, None))
        self.resume = Resume(store, self.delivery, self.deadlines, self.turns, self.tables, self._table_opened)

    # ------------------------------------------------------------------ lifecycle

    @property
    def platforms(self) -> dict[str, Platform]:
        return self.delivery.platforms

    def attach(self, platform: Platform) -> None:
        self.delivery.attach(platform)

    async def start(self) -> None:
        """Resume what belongs to the attached platforms (see bot.core.resume). Idempotent: an adapter
        calls it once connected; games of platforms not attached yet wait for their adapter's call."""
        quiet_collector()
        await self.store.check_writable()
        if self.store.relay is not None:
            await self.store.relay.start(self._relayed)
        await self._advertise()
        await self.resume.run(self.lock_for)
        loop = asyncio.get_running_loop()
        if self._supervisor is None or self._supervisor.done():
            self._supervisor = loop.create_task(self._supervise())
        if self.store.leases is not None and (self._renewer is None or self._renewer.done()):
            self._renewer = loop.create_task(self._renew())

    async def stop(self) -> None:
        tasks = [*self._tasks, *(t for t in (self._supervisor, self._renewer) if t is not None)]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._supervisor = self._renewer = None
        await self.turns.outbox.stop()
        await self.deadlines.stop()

    def _live(self, game_id: int) -> bool:
        leases = self.store.leases
        return leases is None or leases.live(game_id)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no AI turn or delivery is in flight (for tests and the console)."""
        deadline = time.monotonic() + timeout
        while True:
            busy = [t for t in self._tasks if not t.done()]
            if not busy:
                return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("tables still busy")
            await asyncio.wait(busy, timeout=remaining)

    def lock_for(self, game_id: int) -> asyncio.Lock:
        """The one lock of a game: its lifecycle changes and its turns all hold it."""
        return self._locks.setdefault(game_id, asyncio.Lock())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed: %s", type(task.exception()).__name__)

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
            rearmed = await self.deadlines.rearm([g for g in self.tables if self._live(g)])
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
                        self._spawn(self.turns.advance(table))
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
            self._drop(game_id, table)

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

    async def _reach(self, cmd: Command, game_id: int) -> Reply | None:
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

    async def _relayed(self, body: dict[str, Any]) -> dict[str, Any]:
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
            self._drop(game_id, table)
            # Messages this process sent are marked so before the next holder looks for unsent ones.
            await self.turns.outbox.flush()
            if not await leases.hand_over(game_id, asker):
                return False
        log.info("game %s handed back to the process that receives its tenant's commands", game_id)
        self.observer.lease_moved("handed_back", 1)
        return True

    def _drop(self, game_id: int, table: Table) -> None:
        """Forget a table this process no longer drives (taken over, or handed back)."""
        self.tables.pop(game_id, None)
        if table.driver is not None and table.driver is not asyncio.current_task():
            table.driver.cancel()
        self.deadlines.cancel(game_id)
        self.runner.forget(game_id)
        self._locks.pop(game_id, None)
        self.observer.tables(len(self.tables))

    async def _reach_text(self, cmd: Command) -> Reply | None:
        """A reply in direct messages while the member owes an answer at no table of this process:
        relayed to the holder of their one running game elsewhere (with several, the member is asked
        to use the game's own button, as with several games here)."""
        if self.store.leases is None or any(
                t.seat_of(cmd.user) is not None and not t.over for t in self.tables.values()):
            return None
        elsewhere = [g for g in await self.store.running_games_of(cmd.user.key) if g not in self.tables]
        if len(elsewhere) != 1:
            return None
        return await self._reach(cmd, elsewhere[0])

    def _table_opened(self, table: Table) -> None:
        self.tables[table.game_id] = table
        self.observer.tables(len(self.tables))

    async def _table_ended(self, table: Table, result: dict[str, Any] | None) -> None:
        """A table is over (finished, aborted or broken): memory lets it go, waiters and listeners hear."""
        table.over = True
        self.tables.pop(table.game_id, None)
        if self.store.leases is not None:
            self.store.leases.forget(table.game_id)
        self._locks.pop(table.game_id, None)
        self.runner.forget(table.game_id)
        self.observer.tables(len(self.tables))
        self._resolve(table.game_id, result)
        if result is not None and self._finish_listeners:
            self._spawn(self._run_finish_listeners(table.game_id, table.place, table.tenant))

    # ------------------------------------------------------------------ AI-only tables and finish hooks

    async def open_ai_table(self, *, tenant: str, place: Place, game: str, variant: str | None,
                            options: Mapping[str, Any], agents: Sequence[str], seed: int,
                            spectate: bool = True) -> int:
        """Create, seat and start an AI-only table; seat i is played by ``agents[i]`` (order kept).

        Returns the game id. Raises ValueError (ConfigError for options) with a readable sentence
        for an unknown game, bad options, an agent name outside ``agent_choices()``, a seat count
        the game does not allow or a seed outside 0..2^62. ``spectate=False`` posts nothing.
        """
        try:
            engine = game_registry.get(game)
            opts = c.check_options(options)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        except Refused as exc:
            raise ValueError(str(exc)) from None
        cfg = engine.make_config(variant, **opts)
        allowed = set(self.agent_choices())
        agents = [canonical(a) for a in agents]  # an old name (llm:default) reads as its new one
        unknown = sorted({a for a in agents if a not in allowed})
        if unknown:
            raise ValueError(f"unknown agent(s) {', '.join(unknown)}; choose among {', '.join(sorted(allowed))}")
        lo, hi = engine.seat_range(cfg)
        if not lo <= len(agents) <= hi:
            raise ValueError(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats, not {len(agents)}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < c.MAX_ID:
            raise ValueError("a seed is a whole number between 0 and 2^62")
        host = host_user(place.platform)
        lobby = Lobby(host, tuple(LobbySeat(SeatKind.AI, agent=a) for a in agents), quiet=not spectate)
        gid = await self.store.create_game(
            game=engine.id, variant=cfg.variant, config=config_to_dict(cfg), platform=place.platform,
            place=place.key, place_name="", host=host.key, lobby=lobby.to_json(), tenant=tenant,
        )
        assert gid is not None  # no inbound key: never a duplicate
        async with self.lock_for(gid):
            row = await self.store.game(gid)
            assert row is not None
            await self.lobbies.begin(row, engine, cfg, seed, place, keep_order=True)
        return gid

    async def wait_finished(self, game_id: int) -> dict[str, Any] | None:
        """The stored result of a game once it has ended; None when it was aborted or broke."""
        # Listen before reading: a game that ends while the row is read (its end is committed before
        # its waiters are told) is either seen ended in the row or heard about here. Reading first
        # left a window in which the end was told to nobody and the waiter waited for ever.
        fut = self._ended.get(game_id)
        if fut is None:
            fut = self._ended[game_id] = asyncio.get_running_loop().create_future()
        row = await self.store.game(game_id)  # on an error the future stays: the game's end resolves it
        if row is None:
            if not fut.done() and self._ended.get(game_id) is fut:
                del self._ended[game_id]  # no such game: nothing will ever end it
            raise KeyError(f"no game {game_id}")
        if row.status not in (GameStatus.LOBBY, GameStatus.RUNNING):
            outcome = row.result if row.status == GameStatus.FINISHED else None
            self._resolve(game_id, outcome)  # whoever else waits on this future hears it now
            return outcome
        return await asyncio.shield(fut)

    def add_finish_listener(self, cb: FinishListener) -> None:
        """``cb(game_id, place, tenant)`` runs in the background after each result is announced."""
        self._finish_listeners.append(cb)

    def _resolve(self, game_id: int, result: dict[str, Any] | None) -> None:
        fut = self._ended.pop(game_id, None)
        if fut is not None and not fut.done():
            fut.set_result(result)

    async def _run_finish_listeners(self, game_id: int, place: Place, tenant: str) -> None:
        for cb in list(self._finish_listeners):
            try:
                out = await cb(game_id, place, tenant)
            except Exception as exc:  # one listener's failure never stops the others
                log.error("finish listener failed for game %s: %s", game_id, type(exc).__name__)
                continue
            if out is not None:
                await self.delivery.post(place, out)

    # ------------------------------------------------------------------ helpers for adapters

    def game_choices(self) -> dict[str, tuple[str, ...]]:
        return {gid: g.variants for gid, g in game_registry.registry().items()}

    def agent_choices(self) -> list[str]:
        return self.settings.agent_list

    def rules(self, game: str, variant: str | None = None) -> str:
        engine = game_registry.get(game)
        return engine.rules(engine.make_config(variant))

    def is_admin(self, cmd: Command) -> bool:
        return self.lobbies.is_admin(cmd)

    async def export(self, cmd: Command, fmt: str = "jsonl", game: str | None = None,
                     since: datetime | None = None) -> tuple[str, bytes] | Reply:
        """The ended games of the command's tenant as a file (name, bytes), for its admins only."""
        from storage.export import export_games

        if not self.is_admin(cmd):
            return Reply.error("Only server admins can export game logs.")
        if fmt not in ("jsonl", "csv"):
            return Reply.error("Export format must be jsonl or csv.")
        if game is not None and game not in self.game_choices():
            return Reply.error(f"Unknown game {game[:40]!r}; choose one of {', '.join(sorted(self.game_choices()))}.")
        buf = io.StringIO()
        # Only consenting members' words, and audited (bot.core.privacy.PrivacyDesk.export_filter).
        words = await self.export_filter(cmd.user.key, f"{fmt}, {game or 'every game'}, {cmd.tenant}") \
            if self.export_filter else None
        n = await export_games(self.store, out=buf, fmt="csv" if fmt == "csv" else "jsonl", game=game, since=since,
                               secret=self.settings.export_secret, tenant=cmd.tenant, withhold=words)
        if words is not None:
            await words.finish(n)
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        return f"hushtable-{stamp}.{fmt}", buf.getvalue().encode()

    # ------------------------------------------------------------------ the entry point

    async def handle(self, cmd: Command) -> Reply:
        started = time.perf_counter()
        reply = await self._handle(cmd)
        if reply.duplicate:
            self.observer.duplicate()
        self.observer.command(cmd.kind.value, time.perf_counter() - started, reply.ok)
        return reply

    async def _handle(self, cmd: Command) -> Reply:
        key = f"{cmd.place.platform}:{cmd.inbound_id}" if cmd.inbound_id else None
        if key is not None and cmd.kind not in _NO_PRECHECK and await self.store.inbound_seen(key):
            return Reply(DUPLICATE, duplicate=True)
        try:
            args = c.parse_args(cmd, max_text_chars=self.settings.max_text_chars)
            return await self._dispatch(cmd, args)
        except Refused as exc:
            # A redelivered turn is refused by the rules (it is no longer that seat's turn);
            # the log tells it apart from a real mistake.
            if key is not None and cmd.kind is CommandKind.ACT and await self.store.inbound_seen(key):
                return Reply(DUPLICATE, duplicate=True)
            return Reply.error(str(exc))

    async def _dispatch(self, cmd: Command, a: c.Args) -> Reply:
        lob, play = self.lobbies, self.turns
        match cmd.kind, a:
            case CommandKind.CREATE, c.CreateArgs():
                return await lob.create(cmd, a)
            case CommandKind.JOIN, c.TableRef():
                joined = await lob.join(cmd, a)
                line = await self.join_notice(cmd.tenant, cmd.user.key) if joined.ok and self.join_notice else None
                return replace(joined, text=f"{joined.text}\n{line}") if line else joined
            case CommandKind.LEAVE, c.TableRef():
                return await lob.leave(cmd, a)
            case CommandKind.ADD_AI, c.AddAiArgs():
                return await lob.add_ai(cmd, a)
            case CommandKind.REMOVE_AI, c.RemoveAiArgs():
                return await lob.remove_ai(cmd, a)
            case CommandKind.SET_DEADLINE, c.DeadlineArgs():
                return await lob.set_deadline(cmd, a)
            case CommandKind.START, c.StartArgs():
                return await lob.start(cmd, a)
            case CommandKind.ABORT, c.TableRef():
                return await lob.abort(cmd, a)
            case CommandKind.LIST, _:
                return await lob.list(cmd)
            case CommandKind.STATUS, c.TableRef():
                # A running table held elsewhere answers from its holder, as SHOW and moves do.
                row = await lob.find_row(cmd, a.game_id)
                relayed = await self._reach(cmd, row.id) if row.id is not None else None
                return relayed or await lob.status(cmd, a)
            case CommandKind.RULES, c.RulesArgs():
                return await self._rules(cmd, a)
            case CommandKind.ACT, c.ActArgs():
                return await self._reach(cmd, a.game_id) or await play.act(cmd, a)
            case CommandKind.ACT, c.ReplyTextArgs():
                return await self._reach_text(cmd) or await play.act_by_text(cmd, a)
            case CommandKind.SHOW, c.TableRef():
                relayed = await self._reach(cmd, a.game_id) if a.game_id is not None else None
                return relayed or await play.show(cmd, a)
            case CommandKind.EXPORT, _:
                # A file cannot travel in a Reply: adapters call export() and attach what it returns.
                if not self.is_admin(cmd):
                    raise Refused("Only server admins can export game logs.")
                raise Refused("Use the export command of your platform: the log comes as a file.")
        raise Refused("Unknown command.")  # pragma: no cover - parse_args matches every kind

    async def _rules(self, cmd: Command, a: c.RulesArgs) -> Reply:
        game, variant = a.game, a.variant
        if not game:
            row = await self.lobbies.find_row(cmd, None)
            game, variant = row.game, row.variant
        try:
            return Reply(self.rules(game, variant))
        except (KeyError, ValueError) as exc:
            raise Refused(str(exc.args[0] if exc.args else exc)) from None


def quiet_collector() -> None:
    """Raise the cyclic garbage collector's thresholds to ``GC_THRESHOLDS`` (never lower them).

    Every collection stops the event loop, and what it scans grows with the live tables (their
    states, events, seats, locks, tasks). A full collection scans everything: with 1,000 tables
    about 0.2 s of CPU, and under CPython's defaults (700, 10, 10) the objects of turns in flight,
    promoted before they die, set one off about every 45 s. A young collection scans what was
    allocated since the last one and still lives, which at 1,000 busy tables is mostly the new
    states of the tables that moved meanwhile; as a turn's objects replace the ones they succeed,
    the count that triggers one rises slowly, so a large young threshold (20,000) let a young
    generation gather many tables' states and each young collection take 6-35 ms. A young
    threshold of 2,000 keeps each young collection to about a millisecond. What outlives one (a
    table's state lives until its next move) moves to the middle generation, scanned once per 200
    young collections (about 0.15 s with 1,000 tables), so few objects reach the old generation
    and full collections stay rare (CPython also waits for new old objects a quarter of the old
    generation's size before one)."""
    current = gc.get_threshold()
    gc.set_threshold(*(max(a, b) for a, b in zip(current, GC_THRESHOLDS, strict=True)))

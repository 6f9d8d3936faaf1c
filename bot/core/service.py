"""TableService: the one entry point for commands from every platform.

One inbound command makes one trip: typed arguments (bot.core.commands) → the room that
handles its kind (lobby.py for tables, turns.py for moves) → engine.apply → storage append
(one transaction, idempotent on the platform's event id) → events fan out by audience
(delivery.py) → the adapter renders. AI seats re-enter through the same path as humans.
State is never stored twice: running games are rebuilt on start by replaying their log.
This file keeps the wiring, the dispatch, start and stop; which tables this process drives
beside others is holding.py's, AI-only tables and the end of each table ai_tables.py's.
"""

from __future__ import annotations

import asyncio
import io
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, Protocol

import games as game_registry
from bot.core import commands as c
from bot.core.agents import AgentFactory, AgentRunner
from bot.core.ai_tables import AiTables
from bot.core.collector import quiet_collector
from bot.core.commands import Refused
from bot.core.deadlines import Deadlines
from bot.core.delivery import Delivery
from bot.core.holding import Holding
from bot.core.lobby import Lobbies
from bot.core.messages import Command, CommandKind, Reply
from bot.core.observe import NullObserver, ServiceObserver
from bot.core.platform import Platform
from bot.core.resume import Resume
from bot.core.tables import Table
from bot.core.turns import DUPLICATE, Turns
from bot.settings import Settings
from games.base import Result
from storage.engine import out_of_capacity
from storage.export import Withheld
from storage.ports import TableStore
from storage.records import GameLog

log = logging.getLogger(__name__)

BUSY = "The bot is too busy to take that right now; try again in a moment."
"""The answer to a command the database had no room for (``storage.engine.out_of_capacity``): what was
already saved stays saved, and the same command sent again is taken once."""


class ExportFilter(Protocol):
    """A research export's filter that audits the export when it is done (``bot.core.privacy.ResearchFilter``)."""

    def __call__(self, log: GameLog) -> Withheld: ...

    async def finish(self, games: int) -> None: ...

# Turns detect redelivery inside their own append; other kinds check before doing anything.
_NO_PRECHECK = frozenset({CommandKind.LIST, CommandKind.STATUS, CommandKind.RULES, CommandKind.SHOW, CommandKind.ACT,
                          CommandKind.EXPORT})


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
        # The privacy line a member sees on their first join in a tenant (bot.core.privacy.PrivacyDesk.notice).
        self.join_notice: Callable[[str, str], Awaitable[str | None]] | None = None
        self.export_filter: Callable[[str, str], Awaitable[ExportFilter]] | None = None  # likewise, for exports
        store.watch_commits(lambda: self.observer.commit_unknown())
        self.delivery = Delivery(self.observer)
        self.deadlines = Deadlines(store, clock, self.observer)
        self.turns = Turns(store, settings, self.runner, self.delivery, self.deadlines, self.observer, self.tables,
                           self._spawn, self._table_ended)
        self.lobbies = Lobbies(store, settings, self.delivery, self.turns, self.tables, self.lock_for,
                               self.agent_choices, self._table_opened, lambda gid: self.ai_tables.resolve(gid, None))
        self.resume = Resume(store, self.delivery, self.deadlines, self.turns, self.tables, self._table_opened)
        self.ai_tables = AiTables(store, self.lobbies, self.delivery, agent_choices=self.agent_choices,
                                  lock_for=self.lock_for, spawn=self._spawn)
        self.holding = Holding(store, settings, self.observer, self.tables, self.delivery.platforms, self.resume,
                               self.turns, self.deadlines, lock_for=self.lock_for, forget=self._forget,
                               spawn=self._spawn, handle=self.handle)
        self.delivery.live = self.holding.live

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
        await self.holding.join()
        await self.resume.run(self.lock_for)
        self.holding.run()

    async def stop(self) -> None:
        tasks = list(self._tasks)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        await self.holding.stop()
        await self.turns.outbox.stop()
        await self.deadlines.stop()

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

    def _table_opened(self, table: Table) -> None:
        self.tables[table.game_id] = table
        self.observer.tables(len(self.tables))

    def _forget(self, game_id: int) -> None:
        """Memory lets a game go: its table, its lock, its agents' state."""
        self.tables.pop(game_id, None)
        self._locks.pop(game_id, None)
        self.runner.forget(game_id)
        self.observer.tables(len(self.tables))

    async def _table_ended(self, table: Table, result: Result | None) -> None:
        """A table is over (finished, aborted or broken): memory lets it go, waiters and listeners hear."""
        table.over = True
        self.holding.ended(table.game_id)
        self._forget(table.game_id)
        self.ai_tables.ended(table, result)

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
        try:
            reply = await self._handle(cmd)
        except Exception as exc:
            if not out_of_capacity(exc):
                raise
            # Capacity, not a mistake: every connection busy, or the file locked past the busy timeout.
            log.warning("command %s answered busy: the database had no room for it (%s)", cmd.kind.value, type(exc).__name__)
            reply = Reply.error(BUSY)
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
        lob, play, hold = self.lobbies, self.turns, self.holding
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
                relayed = await hold.reach(cmd, row.id) if row.id is not None else None
                return relayed or await lob.status(cmd, a)
            case CommandKind.RULES, c.RulesArgs():
                return await self._rules(cmd, a)
            case CommandKind.ACT, c.ActArgs():
                return await hold.reach(cmd, a.game_id) or await play.act(cmd, a)
            case CommandKind.ACT, c.ReplyTextArgs():
                return await hold.reach_text(cmd) or await play.act_by_text(cmd, a)
            case CommandKind.SHOW, c.TableRef():
                relayed = await hold.reach(cmd, a.game_id) if a.game_id is not None else None
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

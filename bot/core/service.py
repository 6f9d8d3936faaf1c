"""TableService: the one entry point for commands from every platform.

One inbound command makes one trip: validate → engine.apply → storage append (one
transaction, idempotent on the platform's event id) → events fan out by audience →
the adapter renders. AI seats re-enter through the same path as humans. State is
never stored twice: running games are rebuilt on start by replaying their logged
actions through the engines.
"""

from __future__ import annotations

import asyncio
import logging
import secrets as pysecrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import games as game_registry
from bot.core import codec
from bot.core.agents import AgentFactory, AgentRunner, Outcome
from bot.core.messages import (
    Button,
    Command,
    CommandKind,
    DeliveryFailed,
    Form,
    MessageRef,
    Outgoing,
    Place,
    Reply,
    Style,
    UserRef,
)
from bot.core.observe import NullObserver, ServiceObserver
from bot.core.platform import Platform
from bot.settings import Settings
from games.base import Action, Choice, ConfigError, Event, Game, IllegalAction, Seat, Text, rng
from models.agents.base import CallLog
from storage.store import ActionRecord, AgentCallRecord, EventRecord, SeatRecord, Store

log = logging.getLogger(__name__)

RULES_VERSION = "1"
MAX_SELECT_BUTTONS = 5  # more options than this render as a select menu


@dataclass
class SeatInfo:
    seat: Seat
    kind: str  # "human" | "ai"
    name: str
    user: UserRef | None = None
    agent: str | None = None

    @property
    def is_ai(self) -> bool:
        return self.kind == "ai"


@dataclass
class Table:
    """A running game in memory; everything here can be rebuilt from the log."""

    game_id: int
    engine: Game
    cfg: Any
    seed: int
    seats: list[SeatInfo]
    state: Any
    place: Place
    platform: str
    deadline_s: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    prompted: set[Seat] = field(default_factory=set)
    dm_failed: set[Seat] = field(default_factory=set)
    driver: asyncio.Task | None = None
    over: bool = False
    tenant: str = ""
    quiet: bool = False  # an AI-only table nobody watches: nothing is posted

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.seats]

    def seat_of(self, user: UserRef) -> SeatInfo | None:
        for s in self.seats:
            if s.user is not None and s.user.key == user.key:
                return s
        return None


FinishListener = Callable[[int, Place, str], Awaitable[Outgoing | None]]
"""Called after a game's result is announced with (game id, the table's place, tenant); an Outgoing
it returns is posted to the table's place (contract 6)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _user_json(u: UserRef) -> dict[str, str]:
    return {"platform": u.platform, "user_id": u.user_id, "name": u.name}


def _user_from(raw: dict[str, str]) -> UserRef:
    return UserRef(raw["platform"], raw["user_id"], raw.get("name", ""))


class TableService:
    def __init__(
        self,
        store: Store,
        *,
        settings: Settings,
        agents: AgentFactory,
        clock: Callable[[], float] = time.time,
        observer: ServiceObserver | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.agents = agents
        self.runner = AgentRunner(
            agents, timeout_s=settings.ai_timeout_s, retries=settings.ai_retries, fallback_spec=settings.fallback_agent
        )
        self.clock = clock
        self.platforms: dict[str, Platform] = {}
        self.tables: dict[int, Table] = {}
        self._lobby_locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task] = set()
        self._deadline_tasks: dict[int, asyncio.Task] = {}
        self.observer: ServiceObserver = observer or NullObserver()
        self._finish_listeners: list[FinishListener] = []
        self._ended: dict[int, asyncio.Future[dict[str, Any] | None]] = {}

    # ------------------------------------------------------------------ lifecycle

    def attach(self, platform: Platform) -> None:
        self.platforms[platform.name] = platform

    async def start(self) -> None:
        """Resume what belongs to the attached platforms: rebuild unfinished games from the log,
        re-arm their deadlines, announce results saved but never announced.

        Idempotent: an adapter calls it once it is connected; games of platforms that are
        not attached yet wait for their adapter's call.
        """
        resumed: list[Table] = []
        for glog in await self.store.unfinished_games():
            row = glog.row
            if row.status != "running" or row.id in self.tables or row.platform not in self.platforms:
                continue
            try:
                table = self._rebuild(glog)
            except Exception:
                log.exception("could not rebuild game %s; leaving it untouched", row.id)
                continue
            self.tables[table.game_id] = table
            resumed.append(table)
        # Deadlines first: a re-prompted human keeps the deadline they already had.
        for d in await self.store.pending_deadlines():
            if any(t.game_id == d.game_id for t in resumed):
                self._arm_deadline(d.id, d.game_id, d.seat, d.due_at)
        for table in resumed:
            if self.engine_result(table) is not None:
                async with table.lock:
                    await self._finish(table)
                continue
            await self._post_public(table, Outgoing("The table is back after a restart. Play resumes."))
            await self._advance(table)
        for row in await self.store.unannounced_finished():
            if row.platform in self.platforms:
                await self._announce_row(row)

    async def stop(self) -> None:
        tasks = [*self._tasks, *self._deadline_tasks.values()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
        self._deadline_tasks.clear()

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

    def _spawn(self, coro: Any) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    # ------------------------------------------------------------------ AI-only tables and finish hooks

    async def open_ai_table(
        self,
        *,
        tenant: str,
        place: Place,
        game: str,
        variant: str | None,
        options: Mapping[str, Any],
        agents: Sequence[str],
        seed: int,
        spectate: bool = True,
    ) -> int:
        """Create, seat and start an AI-only table; seat i is played by ``agents[i]`` (order kept).

        Returns the game id. Raises ValueError (ConfigError for options) with a readable sentence
        for an unknown game, bad options, an agent name outside ``agent_choices()``, a seat count
        the game does not allow or a seed outside 0..2^62. ``spectate=False`` posts nothing.
        """
        try:
            engine = game_registry.get(game)
        except KeyError as exc:
            raise ValueError(str(exc.args[0])) from None
        cfg = engine.make_config(variant, **dict(options))
        allowed = set(self.agent_choices())
        unknown = sorted({a for a in agents if a not in allowed})
        if unknown:
            raise ValueError(f"unknown agent(s) {', '.join(unknown)}; choose among {', '.join(sorted(allowed))}")
        lo, hi = engine.seat_range(cfg)
        if not lo <= len(agents) <= hi:
            raise ValueError(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats, not {len(agents)}")
        if not 0 <= seed < 2**62:
            raise ValueError("a seed is a whole number between 0 and 2^62")
        host = UserRef(place.platform, "hushtable", "Hushtable")
        lobby = {"host": _user_json(host), "seats": [{"kind": "ai", "agent": a} for a in agents],
                 "deadline_s": 0.0, "card": None, "thread": None, "quiet": not spectate}
        gid = await self.store.create_game(
            game=engine.id, variant=cfg.variant, config=_cfg_dict(cfg), platform=place.platform, place=place.key,
            place_name="", host=host.key, lobby=lobby, tenant=tenant,
        )
        assert gid is not None  # no inbound key: never a duplicate
        row = await self.store.game(gid)
        await self._begin(row, engine, cfg, seed, place, keep_order=True)
        return gid

    async def wait_finished(self, game_id: int) -> dict[str, Any] | None:
        """The stored result of a game once it has ended; None when it was aborted or broke."""
        row = await self.store.game(game_id)
        if row is None:
            raise KeyError(f"no game {game_id}")
        if row.status == "finished":
            return row.result
        if row.status not in ("lobby", "running"):
            return None
        fut = self._ended.get(game_id)
        if fut is None:
            fut = self._ended[game_id] = asyncio.get_running_loop().create_future()
        return await asyncio.shield(fut)

    def add_finish_listener(self, cb: FinishListener) -> None:
        """``cb(game_id, place, tenant)`` runs in the background after each result is announced."""
        self._finish_listeners.append(cb)

    def _ended_now(self, game_id: int, result: dict[str, Any] | None) -> None:
        fut = self._ended.pop(game_id, None)
        if fut is not None and not fut.done():
            fut.set_result(result)

    async def _run_finish_listeners(self, game_id: int, place: Place, tenant: str) -> None:
        for cb in list(self._finish_listeners):
            try:
                out = await cb(game_id, place, tenant)
            except Exception:
                log.exception("finish listener failed for game %s", game_id)
                continue
            if out is not None:
                await self._safe_post(place, out)

    # ------------------------------------------------------------------ public helpers for adapters

    def game_choices(self) -> dict[str, tuple[str, ...]]:
        return {gid: g.variants for gid, g in game_registry.registry().items()}

    def agent_choices(self) -> list[str]:
        return self.settings.agent_list

    def rules(self, game: str, variant: str | None = None) -> str:
        engine = game_registry.get(game)
        return engine.rules(engine.make_config(variant))

    def is_admin(self, cmd: Command) -> bool:
        return cmd.is_admin or cmd.user.key in self.settings.admins

    async def export(
        self, cmd: Command, fmt: str = "jsonl", game: str | None = None, since: datetime | None = None
    ) -> tuple[str, bytes] | Reply:
        import io

        from storage.export import export_games

        if not self.is_admin(cmd):
            return Reply.error("Only server admins can export game logs.")
        if fmt not in ("jsonl", "csv"):
            return Reply.error("Export format must be jsonl or csv.")
        buf = io.StringIO()
        await export_games(self.store, out=buf, fmt=fmt, game=game, since=since, secret=self.settings.export_secret)
        stamp = _now().strftime("%Y%m%d-%H%M%S")
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
        key = self._inbound_key(cmd)
        # Turns detect redelivery inside their own append; everything else checks first.
        if key is not None and cmd.kind not in _NO_PRECHECK and await self.store.inbound_seen(key):
            return Reply("Already done.", duplicate=True)
        try:
            handler = {
                CommandKind.CREATE: self._create,
                CommandKind.JOIN: self._join,
                CommandKind.LEAVE: self._leave,
                CommandKind.ADD_AI: self._add_ai,
                CommandKind.REMOVE_AI: self._remove_ai,
                CommandKind.SET_DEADLINE: self._set_deadline,
                CommandKind.START: self._start,
                CommandKind.ABORT: self._abort,
                CommandKind.LIST: self._list,
                CommandKind.STATUS: self._status,
                CommandKind.RULES: self._rules,
                CommandKind.ACT: self._act_command,
                CommandKind.SHOW: self._show,
                CommandKind.EXPORT: self._export_command,
            }[cmd.kind]
            return await handler(cmd)
        except _Refused as exc:
            # A redelivered turn is refused by the rules (it is no longer that seat's turn);
            # the log tells it apart from a real mistake.
            if key is not None and cmd.kind is CommandKind.ACT and await self.store.inbound_seen(key):
                return Reply("Already done.", duplicate=True)
            return Reply.error(str(exc))

    def _inbound_key(self, cmd: Command) -> str | None:
        return f"{cmd.place.platform}:{cmd.inbound_id}" if cmd.inbound_id else None

    async def _claim(self, cmd: Command, game_id: int | None = None) -> bool:
        key = self._inbound_key(cmd)
        return key is None or await self.store.claim_inbound(key, game_id)

    # ------------------------------------------------------------------ lobbies

    def _lobby_lock(self, place: Place) -> asyncio.Lock:
        key = f"{place.platform}:{place.key}"
        return self._lobby_locks.setdefault(key, asyncio.Lock())

    async def _find_row(self, cmd: Command) -> Any:
        gid = cmd.args.get("game_id")
        if gid is not None:
            row = await self.store.game(int(gid))
            if row is None or row.platform != cmd.place.platform:
                raise _Refused("There is no such table.")
            return row
        row = await self.store.lobby_at(cmd.place.platform, cmd.place.key)
        if row is None and cmd.place.thread:
            row = await self.store.lobby_at(cmd.place.platform, cmd.place.channel)
        if row is None:
            for t in self.tables.values():
                if t.platform == cmd.place.platform and t.place == cmd.place and not t.over:
                    return await self.store.game(t.game_id)
            raise _Refused("There is no table here. Start one with the play command.")
        return row

    async def _create(self, cmd: Command) -> Reply:
        game_name = str(cmd.args.get("game", ""))
        try:
            engine = game_registry.get(game_name)
        except KeyError as exc:
            raise _Refused(str(exc.args[0])) from None
        options = dict(cmd.args.get("options") or {})
        try:
            cfg = engine.make_config(cmd.args.get("variant") or None, **options)
        except ConfigError as exc:
            raise _Refused(f"Those options don't work: {exc}") from None
        deadline = float(cmd.args.get("deadline_s", self.settings.turn_deadline_s) or 0)
        async with self._lobby_lock(cmd.place):
            existing = await self.store.lobby_at(cmd.place.platform, cmd.place.key)
            if existing is not None:
                raise _Refused("There is already a table here. Join it, or ask its host to abort it.")
            spectate = bool(cmd.args.get("spectate"))  # an AI-only table: the host watches
            lobby = {
                "host": _user_json(cmd.user),
                "seats": [] if spectate else [{"kind": "human", "user": _user_json(cmd.user)}],
                "deadline_s": deadline,
                "card": None,
                "thread": None,
            }
            gid = await self.store.create_game(
                game=engine.id, variant=cfg.variant, config=_cfg_dict(cfg), platform=cmd.place.platform,
                place=cmd.place.key, place_name="", host=cmd.user.key, lobby=lobby,
                inbound_key=self._inbound_key(cmd), tenant=cmd.tenant,
            )
            if gid is None:
                return Reply("Already done.", duplicate=True)
            ref = await self._safe_post(cmd.place, await self._lobby_card(gid))
            if ref is not None:
                lobby["card"] = {"channel": ref.channel, "message_id": ref.message_id}
                await self.store.update_lobby(gid, lobby)
        lo, hi = engine.seat_range(cfg)
        return Reply(f"Table #{gid} for {engine.id} ({cfg.variant}) is open: {lo}-{hi} seats. "
                     "Others can join; add AI seats, then start.")

    async def _lobby_row(self, cmd: Command) -> Any:
        row = await self._find_row(cmd)
        if row.status != "lobby":
            raise _Refused("That table has already started." if row.status == "running" else "That table is closed.")
        return row

    async def _edit_lobby(self, cmd: Command, mutate: Callable[[Any, dict], str]) -> Reply:
        row = await self._find_row(cmd)
        async with self._lobby_lock(Place.from_key(row.platform, row.place)):
            row = await self.store.game(row.id)
            if row.status != "lobby":
                raise _Refused("That table has already started." if row.status == "running" else "That table is closed.")
            lobby = dict(row.lobby)
            text = mutate(row, lobby)
            if not await self.store.update_lobby(row.id, lobby, inbound_key=self._inbound_key(cmd)):
                return Reply("Already done.", duplicate=True)
        await self._refresh_card(row.id)
        return Reply(text)

    def _seat_limits(self, row: Any) -> tuple[int, int]:
        engine = game_registry.get(row.game)
        return engine.seat_range(engine.config_from_dict(row.config))

    async def _join(self, cmd: Command) -> Reply:
        row = await self._find_row(cmd)
        if row.status == "running":
            return await self._rejoin(cmd, row.id)

        def mutate(row: Any, lobby: dict) -> str:
            if any(s.get("user", {}).get("user_id") == cmd.user.user_id for s in lobby["seats"] if s["kind"] == "human"):
                raise _Refused("You are already at this table.")
            if len(lobby["seats"]) >= self._seat_limits(row)[1]:
                raise _Refused("This table is full.")
            lobby["seats"] = [*lobby["seats"], {"kind": "human", "user": _user_json(cmd.user)}]
            return f"You joined table #{row.id}."

        return await self._edit_lobby(cmd, mutate)

    async def _rejoin(self, cmd: Command, game_id: int) -> Reply:
        table = self.tables.get(game_id)
        seat = table.seat_of(cmd.user) if table else None
        if table is None or seat is None:
            raise _Refused("That game has already started; you can watch it in its thread.")
        table.dm_failed.discard(seat.seat)
        table.prompted.discard(seat.seat)
        await self._deliver_private(table, seat, self._private_digest(table, seat.seat))
        await self._advance(table)
        return Reply("Welcome back: your seat and secrets are in your messages.")

    async def _leave(self, cmd: Command) -> Reply:
        row = await self._find_row(cmd)
        if row.status == "running":
            raise _Refused("The game is under way; if you step away, the turn deadline keeps it moving. "
                           "Use join to get your secrets again.")

        def mutate(row: Any, lobby: dict) -> str:
            humans = [s for s in lobby["seats"] if s["kind"] == "human"]
            mine = [s for s in humans if s["user"]["user_id"] == cmd.user.user_id]
            if not mine:
                raise _Refused("You are not at this table.")
            lobby["seats"] = [s for s in lobby["seats"] if s is not mine[0]]
            if lobby["host"]["user_id"] == cmd.user.user_id:
                rest = [s for s in lobby["seats"] if s["kind"] == "human"]
                if rest:
                    lobby["host"] = rest[0]["user"]
            return f"You left table #{row.id}."

        reply = await self._edit_lobby(cmd, mutate)
        row = await self.store.game(row.id)
        if reply.ok and not reply.duplicate and not any(s["kind"] == "human" for s in row.lobby["seats"]):
            await self.store.finish_game(row.id, status="aborted", result=None)
            await self._refresh_card(row.id, closed="Table closed: everyone left.")
        return reply

    async def _add_ai(self, cmd: Command) -> Reply:
        spec = str(cmd.args.get("agent") or self.settings.default_agent)
        count = int(cmd.args.get("count") or 1)
        if not 1 <= count <= 12:
            raise _Refused("Add between 1 and 12 AI seats at a time.")
        try:
            self.agents(spec, 0)
        except (ValueError, KeyError) as exc:
            raise _Refused(f"Unknown AI player {spec!r}: {exc}") from None

        def mutate(row: Any, lobby: dict) -> str:
            room = self._seat_limits(row)[1] - len(lobby["seats"])
            if room <= 0:
                raise _Refused("This table is full.")
            n = min(count, room)
            lobby["seats"] = [*lobby["seats"], *({"kind": "ai", "agent": spec} for _ in range(n))]
            return f"Added {n} AI seat(s) ({spec})."

        return await self._edit_lobby(cmd, mutate)

    async def _remove_ai(self, cmd: Command) -> Reply:
        spec = cmd.args.get("agent")

        def mutate(row: Any, lobby: dict) -> str:
            ais = [i for i, s in enumerate(lobby["seats"]) if s["kind"] == "ai" and (spec is None or s["agent"] == spec)]
            if not ais:
                raise _Refused("There is no such AI seat to remove.")
            lobby["seats"] = [s for i, s in enumerate(lobby["seats"]) if i != ais[-1]]
            return "Removed an AI seat."

        return await self._edit_lobby(cmd, mutate)

    async def _set_deadline(self, cmd: Command) -> Reply:
        try:
            seconds = float(cmd.args.get("seconds", 0))
        except (TypeError, ValueError):
            raise _Refused("The deadline is a number of seconds (0 for none).") from None
        if seconds < 0 or seconds > 7 * 24 * 3600:
            raise _Refused("The deadline must be between 0 (none) and one week.")
        row = await self._find_row(cmd)
        if row.host != cmd.user.key and not self.is_admin(cmd):
            raise _Refused("Only the host can change the turn deadline.")
        if row.status == "running" and row.id in self.tables:
            if not await self._claim(cmd, row.id):
                return Reply("Already done.", duplicate=True)
            self.tables[row.id].deadline_s = seconds
            lobby = dict(row.lobby)
            lobby["deadline_s"] = seconds
            await self.store.update_lobby(row.id, lobby)
            return Reply(f"Turn deadline set to {seconds:g} s from the next prompt on.")

        def mutate(row: Any, lobby: dict) -> str:
            lobby["deadline_s"] = seconds
            return f"Turn deadline set to {seconds:g} s." if seconds else "No turn deadline."

        return await self._edit_lobby(cmd, mutate)

    async def _start(self, cmd: Command) -> Reply:
        row = await self._lobby_row(cmd)
        if row.host != cmd.user.key:
            raise _Refused("Only the host can start the game.")
        place = Place.from_key(row.platform, row.place)
        async with self._lobby_lock(place):
            row = await self.store.game(row.id)
            if row.status != "lobby":
                raise _Refused("That table has already started.")
            engine = game_registry.get(row.game)
            cfg = engine.config_from_dict(row.config)
            lo, hi = engine.seat_range(cfg)
            n = len(row.lobby["seats"])
            if not lo <= n <= hi:
                raise _Refused(f"This game needs {lo}-{hi} seats; there are {n}. Add AI seats or wait for players.")
            seed = cmd.args.get("seed")
            if seed is not None and not (isinstance(seed, int) and 0 <= seed < 2**62):
                raise _Refused("A seed is a whole number between 0 and 2^62.")
            await self._begin(row, engine, cfg, pysecrets.randbits(62) if seed is None else seed, place,
                              inbound_key=self._inbound_key(cmd))
        return Reply(f"Game #{row.id} started.")

    async def _begin(self, row: Any, engine: Game, cfg: Any, seed: int, place: Place,
                     inbound_key: str | None = None, keep_order: bool = False) -> Table:
        # Seating is drawn from the game's seed: roles follow seats, so nobody picks their role.
        # AI-only tables of a tournament keep their order: the tournament swaps seats itself.
        entries = list(row.lobby["seats"])
        if not keep_order:
            rng(seed, "seating").shuffle(entries)
        seats: list[SeatInfo] = []
        for i, e in enumerate(entries):
            if e["kind"] == "human":
                u = _user_from(e["user"])
                seats.append(SeatInfo(i, "human", u.name or u.user_id, user=u))
            else:
                seats.append(SeatInfo(i, "ai", f"AI-{i + 1}", agent=e["agent"]))
        _dedupe_names(seats)
        state, events = engine.new(cfg, len(seats), seed)
        card = row.lobby.get("card")
        anchor = MessageRef(row.platform, card["channel"], card["message_id"]) if card else None
        game_place = place
        platform = self.platforms.get(row.platform)
        if platform is not None and not row.lobby.get("quiet"):
            try:
                game_place = await platform.open_thread(place, f"{engine.id} #{row.id}", anchor)
            except DeliveryFailed:
                log.warning("could not open a thread for game %s; playing in the channel", row.id)
        lobby = dict(row.lobby)
        lobby["thread"] = game_place.thread
        await self.store.update_lobby(row.id, lobby)
        await self.store.start_game(
            row.id, seed=seed, config=_cfg_dict(cfg),
            seats=[SeatRecord(s.seat, s.kind, s.name, user_key=s.user.key if s.user else None, agent_spec=s.agent)
                   for s in seats],
            events=[_event_record(e) for e in events], rules_version=RULES_VERSION, inbound_key=inbound_key,
        )
        table = Table(row.id, engine, cfg, seed, seats, state, game_place, row.platform,
                      float(row.lobby.get("deadline_s") or 0), tenant=row.tenant,
                      quiet=bool(row.lobby.get("quiet")))
        self.tables[row.id] = table
        self.observer.tables(len(self.tables))
        await self._refresh_card(row.id, closed=f"Game #{row.id} is under way.")
        roster = ", ".join(f"{s.name}{' (AI)' if s.is_ai else ''}" for s in seats)
        await self._post_public(table, Outgoing(f"**{engine.id} ({cfg.variant})** begins. Seats: {roster}.",
                                                 title=f"Game #{row.id}"))
        await self._fan_out(table, events)
        await self._advance(table)
        return table

    async def _abort(self, cmd: Command) -> Reply:
        row = await self._find_row(cmd)
        if row.host != cmd.user.key and not self.is_admin(cmd):
            raise _Refused("Only the host or an admin can abort this table.")
        if row.status not in ("lobby", "running"):
            raise _Refused("That table is already closed.")
        if not await self._claim(cmd, row.id):
            return Reply("Already done.", duplicate=True)
        table = self.tables.get(row.id)
        if table is not None:
            async with table.lock:
                table.over = True
                await self.store.finish_game(row.id, status="aborted", result=None)
                await self.store.clear_deadlines(row.id)
            self._cancel_deadlines(row.id)
            await self._post_public(table, Outgoing(f"Game #{row.id} was aborted by {cmd.user.name or 'the host'}."))
            self.tables.pop(row.id, None)
            self.runner.forget(row.id)
            self.observer.tables(len(self.tables))
        else:
            await self.store.finish_game(row.id, status="aborted", result=None)
            await self._refresh_card(row.id, closed="Table closed by the host.")
        self._ended_now(row.id, None)
        return Reply(f"Table #{row.id} aborted.")

    async def _list(self, cmd: Command) -> Reply:
        rows = await self.store.open_lobbies(cmd.place.platform)
        if not rows:
            return Reply("No open tables. Start one with the play command.")
        lines = [f"#{r.id} {r.game} ({r.variant}) in {r.place}: {len(r.lobby['seats'])} seated" for r in rows]
        return Reply("Open tables:\n" + "\n".join(lines))

    async def _status(self, cmd: Command) -> Reply:
        row = await self._find_row(cmd)
        if row.status == "lobby":
            return Reply((await self._lobby_card(row.id)).text)
        table = self.tables.get(row.id)
        if table is None:
            return Reply(f"Game #{row.id} is {row.status}.")
        waiting = ", ".join(table.seats[s].name for s in sorted(table.engine.to_act(table.state))) or "nobody"
        phase = getattr(getattr(table.state, "phase", None), "value", "")
        return Reply(f"Game #{row.id}: {table.engine.id} ({table.cfg.variant}), phase {phase}. Waiting for: {waiting}.")

    async def _rules(self, cmd: Command) -> Reply:
        game = cmd.args.get("game")
        if not game:
            row = await self._find_row(cmd)
            game, variant = row.game, row.variant
        else:
            variant = cmd.args.get("variant")
        try:
            return Reply(self.rules(str(game), variant))
        except (KeyError, ConfigError) as exc:
            raise _Refused(str(exc.args[0] if exc.args else exc)) from None

    async def _lobby_card(self, game_id: int, closed: str | None = None) -> Outgoing:
        row = await self.store.game(game_id)
        engine = game_registry.get(row.game)
        lo, hi = self._seat_limits(row)
        names = []
        for s in row.lobby["seats"]:
            names.append(s["user"].get("name") or s["user"]["user_id"] if s["kind"] == "human" else f"AI ({s['agent']})")
        deadline = row.lobby.get("deadline_s") or 0
        text = (
            f"**{engine.id}** ({row.variant}) table #{game_id}, host {row.lobby['host'].get('name') or row.lobby['host']['user_id']}\n"
            f"Seats ({len(names)}/{lo}-{hi}): {', '.join(names) or '-'}\n"
            f"Turn deadline: {f'{deadline:g} s' if deadline else 'none'}"
        )
        if closed:
            return Outgoing(f"{text}\n{closed}", title=f"{engine.id} table #{game_id}", user_text=True)
        buttons = (
            Button(codec.lobby_id(game_id, "join"), "Join", Style.PRIMARY),
            Button(codec.lobby_id(game_id, "leave"), "Leave"),
            Button(codec.lobby_id(game_id, "ai"), "Add AI"),
            Button(codec.lobby_id(game_id, "start"), "Start", Style.SUCCESS),
            Button(codec.lobby_id(game_id, "abort"), "Abort", Style.DANGER),
        )
        return Outgoing(text, buttons=buttons, title=f"{engine.id} table #{game_id}", user_text=True)

    async def _refresh_card(self, game_id: int, closed: str | None = None) -> None:
        row = await self.store.game(game_id)
        card = row.lobby.get("card") if row and row.lobby else None
        platform = self.platforms.get(row.platform) if row else None
        if not card or platform is None:
            return
        try:
            await platform.edit(MessageRef(row.platform, card["channel"], card["message_id"]),
                                await self._lobby_card(game_id, closed))
        except DeliveryFailed:
            log.warning("could not update the lobby card of game %s", game_id)

    # ------------------------------------------------------------------ acting

    async def _act_command(self, cmd: Command) -> Reply:
        args = cmd.args
        if args.get("game_id") is None:
            return await self._act_by_text(cmd)
        table = self.tables.get(int(args["game_id"]))
        if table is None:
            row = await self.store.game(int(args["game_id"]))
            if row is None:
                raise _Refused("There is no such game.")
            raise _Refused("That game is over." if row.status in ("finished", "aborted") else "That game has not started.")
        seat_no = int(args.get("seat", -1))
        seat = table.seat_of(cmd.user)
        if seat is None:
            raise _Refused("You are not playing in this game.")
        if seat.seat != seat_no:
            raise _Refused("That button belongs to another player's seat.")
        value = args.get("value")
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise _Refused("That answer could not be read.")
        if any(len(v) > self.settings.max_text_chars for v in value):
            raise _Refused(f"Keep each answer under {self.settings.max_text_chars} characters.")
        action = Action(str(args.get("kind", "")), tuple(value))
        return await self.submit(table, seat.seat, action, source="human", actor=cmd.user.key,
                                 inbound_key=self._inbound_key(cmd))

    async def _act_by_text(self, cmd: Command) -> Reply:
        """A DM reply: find the one game where this user owes a text answer."""
        text = str(cmd.args.get("text", "")).strip()
        candidates = []
        for t in self.tables.values():
            s = t.seat_of(cmd.user)
            if s is not None and not t.over and s.seat in t.engine.to_act(t.state):
                spec = t.engine.legal(t.state, s.seat)
                if isinstance(spec, Text):
                    candidates.append((t, s, spec))
        if not candidates:
            raise _Refused("You have no hint, clue or description to give right now.")
        if len(candidates) > 1:
            raise _Refused("You owe answers in several games; use the button in the game's message instead.")
        table, seat, spec = candidates[0]
        parts = [p.strip() for p in text.replace("\n", ";").split(";")] if len(spec.fields) > 1 else [text]
        if len(text) > self.settings.max_text_chars * len(spec.fields):
            raise _Refused(f"Keep each answer under {self.settings.max_text_chars} characters.")
        if len(parts) != len(spec.fields):
            raise _Refused(f"Send {len(spec.fields)} answers separated by ';' ({', '.join(spec.fields)}).")
        return await self.submit(table, seat.seat, Action(spec.kind, tuple(parts)), source="human",
                                 actor=cmd.user.key, inbound_key=self._inbound_key(cmd))

    async def submit(
        self,
        table: Table,
        seat: Seat,
        action: Action,
        *,
        source: str,
        actor: str,
        inbound_key: str | None = None,
        calls: Sequence[CallLog] = (),
    ) -> Reply:
        """Apply one action: validate, log durably, then fan out. Everyone comes through here."""
        async with table.lock:
            if table.over:
                raise _Refused("That game is over.")
            try:
                state, events = table.engine.apply(table.state, seat, action)
            except IllegalAction as exc:
                raise _Refused(str(exc)) from None
            fresh = await self.store.append_turn(
                table.game_id,
                action=ActionRecord(seat, action.kind, list(action.value), source, actor),
                events=[_event_record(e) for e in events],
                inbound_key=inbound_key,
                agent_calls=[_call_record(table.game_id, seat, c) for c in calls],
            )
            if not fresh:
                return Reply("Already done.", duplicate=True)
            self.observer.action(table.engine.id, source)
            for c in calls:
                self.observer.ai_move(c.agent_spec, c.operation, c.latency_ms / 1000, c.fallback)
            table.state = state
            table.prompted.discard(seat)
            if self._has_deadline(table.game_id, seat):
                await self.store.clear_deadlines(table.game_id, seat)
                self._cancel_deadlines(table.game_id, seat)
            await self._fan_out(table, events)
            if self.engine_result(table) is not None:
                await self._finish(table)
        if not table.over:
            await self._advance(table)
        return Reply("Got it.")

    def engine_result(self, table: Table) -> Any:
        return table.engine.result(table.state)

    # ------------------------------------------------------------------ turn loop

    async def _advance(self, table: Table) -> None:
        """Prompt humans who now owe a move, and make sure the AI driver is running."""
        if table.over:
            return
        acting = table.engine.to_act(table.state)
        table.prompted &= set(acting)
        for s in sorted(acting):
            info = table.seats[s]
            if info.is_ai or s in table.prompted:
                continue
            table.prompted.add(s)
            await self._prompt(table, info)
            if table.deadline_s > 0 and not self._has_deadline(table.game_id, s):
                due = self.clock() + table.deadline_s
                did = await self.store.set_deadline(table.game_id, s, datetime.fromtimestamp(due, UTC))
                self._arm_deadline(did, table.game_id, s, datetime.fromtimestamp(due, UTC))
        if any(table.seats[s].is_ai for s in acting) and (table.driver is None or table.driver.done()):
            table.driver = self._spawn(self._drive_ai(table))

    async def _drive_ai(self, table: Table) -> None:
        """Play AI seats one at a time, lowest seat first, so a replayed game takes the same path."""
        while not table.over:
            ai = sorted(s for s in table.engine.to_act(table.state) if table.seats[s].is_ai)
            if not ai:
                return
            seat = ai[0]
            state = table.state
            info = table.seats[seat]
            outcome = await self.runner.decide(table.engine, state, seat, game_id=table.game_id,
                                               spec=info.agent or self.settings.default_agent,
                                               seed=_seat_seed(table, seat))
            if table.state is not state:
                continue  # a human moved meanwhile; decide again on the new state
            try:
                await self.submit(table, seat, outcome.action, source=outcome.source, actor=outcome.actor,
                                  calls=outcome.calls)
            except _Refused as exc:
                log.warning("AI seat %s of game %s was refused: %s", seat, table.game_id, exc)

    async def _prompt(self, table: Table, info: SeatInfo) -> None:
        spec = table.engine.legal(table.state, info.seat)
        if spec is None:
            return
        await self._deliver_private(table, info, self._prompt_message(table, info.seat, spec))
        await self._post_public(table, Outgoing(f"Waiting for {info.name}.", user_text=True), quiet=True)

    def _prompt_message(self, table: Table, seat: Seat, spec: Choice | Text) -> Outgoing:
        title = f"{table.engine.id} #{table.game_id}"
        if isinstance(spec, Choice):
            buttons = tuple(Button(codec.action_id(table.game_id, seat, spec.kind, o.id),
                                   _label(o.label, table.names), Style.PRIMARY) for o in spec.options)
            select = codec.action_id(table.game_id, seat, spec.kind) if len(buttons) > MAX_SELECT_BUTTONS else None
            return Outgoing(_label(spec.prompt, table.names), buttons=buttons, select_id=select, title=title)
        words = "one word" if spec.max_words == 1 else f"up to {spec.max_words} words"
        form = Form(codec.action_id(table.game_id, seat, spec.kind), spec.kind.capitalize(), spec.fields,
                    spec.max_chars, hint=words)
        fields = "; ".join(spec.fields)
        reply_hint = f" Or reply here with {len(spec.fields)} answers separated by ';' ({fields})." \
            if len(spec.fields) > 1 else " Or reply here with your answer."
        return Outgoing(_label(spec.prompt, table.names) + reply_hint, form=form, title=title)

    # ------------------------------------------------------------------ delivery

    async def _fan_out(self, table: Table, events: Sequence[Event]) -> None:
        public = [e for e in events if e.audience.is_public]
        if public:
            await self._post_public(table, _render(table, public))
        for info in table.seats:
            if info.is_ai:
                continue
            private = [e for e in events if not e.audience.is_public and e.audience.includes(info.seat)]
            if private:
                await self._deliver_private(table, info, _render(table, private))

    async def _post_public(self, table: Table, m: Outgoing, quiet: bool = False) -> None:
        if table.quiet:
            return
        if quiet and getattr(self.platforms.get(table.platform), "quiet_waiting", False):
            return
        await self._safe_post(table.place, m)

    async def _safe_post(self, place: Place, m: Outgoing) -> MessageRef | None:
        platform = self.platforms.get(place.platform)
        if platform is None:
            return None
        try:
            return await platform.post(place, m)
        except DeliveryFailed as exc:
            log.warning("could not post to %s: %s", place, exc)
            self.observer.delivery_failed(place.platform)
            return None

    async def _deliver_private(self, table: Table, info: SeatInfo, m: Outgoing) -> None:
        platform = self.platforms.get(table.platform)
        if platform is None or info.user is None:
            return
        if info.seat not in table.dm_failed:
            try:
                await platform.dm(info.user, m)
                return
            except DeliveryFailed:
                self.observer.delivery_failed(table.platform)
                table.dm_failed.add(info.seat)
        # Never the secret itself in the channel: only a button that reveals it to that member.
        notice = Outgoing(
            f"{info.name}, I can't message you privately. Use the button to see your secrets and your turn.",
            buttons=(Button(codec.show_id(table.game_id), "Show my secret", Style.PRIMARY),),
            user_text=True,
        )
        await self._post_public(table, notice)

    def _private_digest(self, table: Table, seat: Seat) -> Outgoing:
        obs = table.engine.observe(table.state, seat)
        private = [e for e in obs.events if not e.audience.is_public]
        text = "\n".join(table.engine.text(e, table.names) for e in private) or "You hold no secrets in this game."
        return Outgoing(f"Your secrets in game #{table.game_id}:\n{text}", title=f"{table.engine.id} #{table.game_id}")

    async def _export_command(self, cmd: Command) -> Reply:
        # A file cannot travel in a Reply: adapters call export() and attach what it returns.
        if not self.is_admin(cmd):
            raise _Refused("Only server admins can export game logs.")
        raise _Refused("Use the export command of your platform: the log comes as a file.")

    async def _show(self, cmd: Command) -> Reply:
        table = self.tables.get(int(cmd.args.get("game_id", -1)))
        if table is None:
            raise _Refused("That game is not running.")
        info = table.seat_of(cmd.user)
        if info is None:
            raise _Refused("You are not playing in this game.")
        digest = self._private_digest(table, info.seat)
        outgoing = None
        if info.seat in table.engine.to_act(table.state):
            spec = table.engine.legal(table.state, info.seat)
            if spec is not None:
                outgoing = self._prompt_message(table, info.seat, spec)
        return Reply(digest.text, outgoing=outgoing)

    # ------------------------------------------------------------------ the end

    async def _finish(self, table: Table) -> None:
        result = table.engine.result(table.state)
        table.over = True
        await self.store.finish_game(table.game_id, status="finished", result=result.to_json())
        await self.store.clear_deadlines(table.game_id)
        self._cancel_deadlines(table.game_id)
        self.runner.forget(table.game_id)
        if await self.store.mark_announced(table.game_id):
            # The engine's own last event already told how it ended; the announcement names the winners.
            await self._post_public(table, Outgoing(_result_text(result.to_json(), table.names, summary=False),
                                                     title=f"Game #{table.game_id} is over", user_text=True))
        self._ended_now(table.game_id, result.to_json())
        if self._finish_listeners:
            self._spawn(self._run_finish_listeners(table.game_id, table.place, table.tenant))

    async def _announce_row(self, row: Any) -> None:
        if not await self.store.mark_announced(row.id):
            return
        glog = await self.store.load_game(row.id)
        names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
        thread = (row.lobby or {}).get("thread")
        place = Place.from_key(row.platform, row.place)
        if thread:
            place = Place(place.platform, place.channel, thread)
        await self._safe_post(place, Outgoing(_result_text(row.result or {}, names), user_text=True))

    # ------------------------------------------------------------------ deadlines

    def _arm_deadline(self, deadline_id: int, game_id: int, seat: Seat, due: datetime) -> None:
        if deadline_id in self._deadline_tasks:
            return
        if due.tzinfo is None:
            due = due.replace(tzinfo=UTC)
        delay = max(0.0, due.timestamp() - self.clock())

        async def fire() -> None:
            await asyncio.sleep(delay)
            self._deadline_tasks.pop(deadline_id, None)
            await self._expire(deadline_id, game_id, seat)

        task = asyncio.get_running_loop().create_task(fire())
        task.game_seat = (game_id, seat)  # type: ignore[attr-defined]
        self._deadline_tasks[deadline_id] = task
        self.observer.deadlines(len(self._deadline_tasks))

    def _has_deadline(self, game_id: int, seat: Seat) -> bool:
        return any(t.game_seat == (game_id, seat) for t in self._deadline_tasks.values())  # type: ignore[attr-defined]

    def _cancel_deadlines(self, game_id: int, seat: Seat | None = None) -> None:
        for did, task in list(self._deadline_tasks.items()):
            g, s = task.game_seat  # type: ignore[attr-defined]
            if g == game_id and (seat is None or s == seat) and task is not asyncio.current_task():
                task.cancel()
                del self._deadline_tasks[did]

    async def _expire(self, deadline_id: int, game_id: int, seat: Seat) -> None:
        await self.store.finish_deadline(deadline_id)
        table = self.tables.get(game_id)
        if table is None or table.over or seat not in table.engine.to_act(table.state):
            return
        info = table.seats[seat]
        action = table.engine.timeout_action(table.state, seat) if self.settings.deadline_policy == "abstain" else None
        await self._post_public(table, Outgoing(f"{info.name} ran out of time.", user_text=True))
        if action is not None:
            outcome = Outcome(action, "timeout", "deadline", ())
        else:
            outcome = await self.runner.decide(table.engine, table.state, seat, game_id=table.game_id,
                                               spec=self.settings.default_agent, seed=_seat_seed(table, seat))
            outcome = Outcome(outcome.action, "takeover", outcome.actor, outcome.calls)
        try:
            await self.submit(table, seat, outcome.action, source=outcome.source, actor=outcome.actor,
                              calls=outcome.calls)
        except _Refused as exc:
            log.info("deadline action for seat %s of game %s refused: %s", seat, game_id, exc)

    # ------------------------------------------------------------------ resume

    def _rebuild(self, glog: Any) -> Table:
        row = glog.row
        engine = game_registry.get(row.game)
        cfg = engine.config_from_dict(row.config)
        seats = []
        for s in sorted(glog.seats, key=lambda s: s.seat):
            user = None
            if s.user_key:
                platform, _, uid = s.user_key.partition(":")
                user = UserRef(platform, uid, s.display_name)
            seats.append(SeatInfo(s.seat, s.kind, s.display_name, user=user, agent=s.agent_spec))
        state, _ = engine.new(cfg, len(seats), row.seed)
        for a in glog.actions:
            state, _ = engine.apply(state, a.seat, Action(a.kind, tuple(a.value)))
        place = Place.from_key(row.platform, row.place)
        thread = (row.lobby or {}).get("thread")
        if thread:
            place = Place(place.platform, place.channel, thread)
        return Table(row.id, engine, cfg, row.seed, seats, state, place, row.platform,
                     float((row.lobby or {}).get("deadline_s") or 0), tenant=row.tenant,
                     quiet=bool((row.lobby or {}).get("quiet")))


_NO_PRECHECK = frozenset({CommandKind.LIST, CommandKind.STATUS, CommandKind.RULES, CommandKind.SHOW, CommandKind.ACT,
                          CommandKind.EXPORT})


class _Refused(Exception):
    """A command that changes nothing; the message goes back to its author."""


# ---------------------------------------------------------------------- pure helpers


def _cfg_dict(cfg: Any) -> dict:
    from games.base import config_to_dict

    return config_to_dict(cfg)


def _event_record(e: Event) -> EventRecord:
    return EventRecord(e.kind, dict(e.data), e.audience.to_json())


def _call_record(game_id: int, seat: Seat, c: CallLog) -> AgentCallRecord:
    return AgentCallRecord(
        game_id=game_id, seat=seat, agent_spec=c.agent_spec, model_id=c.model_id, operation=c.operation,
        prompt=c.prompt, raw_output=c.raw_output, label_probs=c.label_probs, latency_ms=c.latency_ms,
        retries=c.retries, fallback=c.fallback, error=c.error,
    )


def _seat_seed(table: Table, seat: Seat) -> int:
    return rng(table.seed, "agent", seat).getrandbits(62)


def _dedupe_names(seats: list[SeatInfo]) -> None:
    """Two members with the same display name stay apart: the second gets a number."""
    seen: dict[str, int] = {}
    for s in seats:
        base = s.name
        if base in seen:
            seen[base] += 1
            s.name = f"{base} ({seen[base]})"
        else:
            seen[base] = 1


def _label(text: str, names: Sequence[str]) -> str:
    """Engines name seats 'Player k' (k = seat + 1); show the table's names instead."""
    for i in range(len(names), 0, -1):
        text = text.replace(f"Player {i}", names[i - 1])
    return text


def _render(table: Table, events: Sequence[Event]) -> Outgoing:
    return Outgoing("\n".join(table.engine.text(e, table.names) for e in events),
                    title=f"{table.engine.id} #{table.game_id}", user_text=True)


def _result_text(result: dict, names: Sequence[str], summary: bool = True) -> str:
    winners = result.get("winners") or []
    won = ", ".join(names[w] for w in winners if 0 <= w < len(names)) or "nobody"
    head = f"{result.get('summary', 'The game is over.')}\n" if summary else "Game over. "
    return f"{head}Winners: {won}."

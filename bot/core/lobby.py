"""Lobbies and the lifecycle of a table: create, join, leave, AI seats, deadline, start, abort.

Every lookup is scoped to the command's tenant: an id from one guild or workspace never
resolves in another. Every change of one table's lifecycle (lobby edits, start, abort,
a running game's deadline) holds that game's lock, the same lock its turns hold, so START
and ABORT at the same moment leave the database and memory agreeing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets as pysecrets
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

import games as game_registry
from bot.core import render
from bot.core.commands import AddAiArgs, CreateArgs, DeadlineArgs, Refused, RemoveAiArgs, StartArgs, TableRef
from bot.core.delivery import Delivery
from bot.core.messages import Command, Outgoing, Place, Reply, UserRef
from bot.core.tables import Lobby, LobbySeat, Table, seat_roster
from bot.core.turns import DUPLICATE, Turns
from bot.settings import Settings
from games.base import C, ConfigError, Game, S, config_to_dict
from games.labels import human_list
from storage.ports import GamePort, InboundPort
from storage.records import EventRecord, SeatRecord, WriteUnknown
from storage.tables import GameRow, GameStatus, SeatKind

log = logging.getLogger(__name__)

RULES_VERSION = "1"
LIVE = (GameStatus.LOBBY, GameStatus.RUNNING)
NOT_SAVED = "The game log did not answer, so nothing was changed; send the command again in a moment."
MAYBE_SAVED = ("The game log did not answer, so that may not have been saved; check the table, then send the "
               "command again if it is unchanged.")


@contextlib.contextmanager
def _unanswered() -> Iterator[None]:
    """A lobby write the database never answered (``storage.database.write_once`` read back and
    retried already) becomes one sentence for the member."""
    try:
        yield
    except WriteUnknown as exc:
        raise Refused(NOT_SAVED if exc.written is False else MAYBE_SAVED) from None


class LobbyStore(GamePort, InboundPort, Protocol):
    """What lobbies use of the log: games, and inbound claims for the edits that write no game."""


class Lobbies:
    def __init__(self, store: LobbyStore, settings: Settings, delivery: Delivery, turns: Turns,
                 tables: dict[int, Table], lock_for: Callable[[int], asyncio.Lock],
                 agent_choices: Callable[[], Sequence[str]], on_table: Callable[[Table], None],
                 on_closed: Callable[[int], None]) -> None:
        self.store = store
        self.settings = settings
        self.delivery = delivery
        self.turns = turns
        self.tables = tables
        self.lock_for = lock_for
        self.agent_choices = agent_choices
        self.on_table = on_table
        self.on_closed = on_closed  # a lobby closed before its game began: nobody waits for a result
        self._place_locks: dict[str, asyncio.Lock] = {}
        # HUSHTABLE_DEAL_SEED set: this process's deals are a fixed sequence, reproducible by whoever knows
        # the number (research, demos, tests). Unset: each deal comes from the system's cryptographic source.
        seed = settings.deal_seed
        self._deals = None if seed is None else random.Random(f"hushtable-deals:{seed}")

    def next_deal_seed(self) -> int:
        """The seed of a table started without one: the next of HUSHTABLE_DEAL_SEED's sequence when it is
        set, else 62 cryptographically random bits."""
        return pysecrets.randbits(62) if self._deals is None else self._deals.getrandbits(62)

    def is_admin(self, cmd: Command) -> bool:
        return cmd.is_admin or cmd.user.key in self.settings.admins

    # ------------------------------------------------------------------ finding a table

    async def find_row(self, cmd: Command, game_id: int | None) -> GameRow:
        """The table a command is about, in the command's tenant only."""
        if game_id is not None:
            row = await self.store.game(game_id)
            if row is None or row.platform != cmd.place.platform or row.tenant != cmd.tenant:
                raise Refused("There is no such table.")
            return row
        row = await self.store.lobby_at(cmd.place.platform, cmd.place.key)
        if row is None and cmd.place.thread:
            row = await self.store.lobby_at(cmd.place.platform, cmd.place.channel)
        if row is None:
            for t in self.tables.values():
                if t.place == cmd.place and not t.over:
                    row = await self.store.game(t.game_id)
                    break
        if row is None or row.tenant != cmd.tenant:
            raise Refused("There is no table here. Start one with the play command.")
        return row

    def _seat_limits(self, row: GameRow) -> tuple[int, int]:
        engine = game_registry.get(row.game)
        return engine.seat_range(engine.config_from_dict(row.config))

    async def _still_a_lobby(self, game_id: int) -> GameRow:
        """The game's row read afresh under its lock; Refused once it has started or closed."""
        fresh = await self.store.game(game_id)
        assert fresh is not None
        if fresh.status != GameStatus.LOBBY:
            raise Refused("That table has already started." if fresh.status == GameStatus.RUNNING
                          else "That table is closed.")
        return fresh

    async def _edit(self, cmd: Command, game_id: int | None, mutate: Callable[[GameRow, Lobby], tuple[Lobby, str]],
                    ) -> Reply:
        row = await self.find_row(cmd, game_id)
        assert row.id is not None
        async with self.lock_for(row.id):
            fresh = await self._still_a_lobby(row.id)
            lobby, text = mutate(fresh, Lobby.of(fresh))
            with _unanswered():
                if not await self.store.update_lobby(row.id, lobby.to_json(), host=lobby.host.key,
                                                     inbound_key=_key(cmd)):
                    return Reply(DUPLICATE, duplicate=True)
        await self.refresh_card(row.id)
        return Reply(text)

    # ------------------------------------------------------------------ lobby commands

    async def create(self, cmd: Command, args: CreateArgs) -> Reply:
        try:
            engine = game_registry.get(args.game)
        except KeyError as exc:
            raise Refused(str(exc.args[0])) from None
        try:
            cfg = engine.make_config(args.variant, **args.options)
        except ConfigError as exc:
            raise Refused(f"Those options don't work: {exc}") from None
        cap = self.settings.max_open_lobbies
        if cap and not self.is_admin(cmd) and await self.store.count_open_lobbies(cmd.tenant, cmd.user.key) >= cap:
            raise Refused(f"You already host {cap} open table(s); start or abort one first.")
        deadline = self.settings.turn_deadline_s if args.deadline_s is None else args.deadline_s
        place_key = f"{cmd.place.platform}:{cmd.place.key}"
        async with self._place_locks.setdefault(place_key, asyncio.Lock()):
            if await self.store.lobby_at(cmd.place.platform, cmd.place.key) is not None:
                raise Refused("There is already a table here. Join it, or ask its host to abort it.")
            seats = () if args.spectate else (LobbySeat(SeatKind.HUMAN, user=cmd.user),)
            lobby = Lobby(host=cmd.user, seats=seats, deadline_s=deadline, sneak_report=args.sneak_report)
            with _unanswered():
                gid = await self.store.create_game(
                    game=engine.id, variant=cfg.variant, config=config_to_dict(cfg), platform=cmd.place.platform,
                    place=cmd.place.key, place_name="", host=cmd.user.key, lobby=lobby.to_json(),
                    inbound_key=_key(cmd), tenant=cmd.tenant,
                )
            if gid is None:
                return Reply(DUPLICATE, duplicate=True)
            ref = await self.delivery.post(cmd.place, await self.card(gid))
            if ref is not None:
                with _unanswered():
                    await self.store.update_lobby(gid, lobby.with_(card=ref).to_json())
        lo, hi = engine.seat_range(cfg)
        return Reply(f"Table #{gid} for {engine.id} ({cfg.variant}) is open: {lo}-{hi} seats. "
                     "Others can join; add AI seats, then start.")

    async def join(self, cmd: Command, ref: TableRef) -> Reply:
        row = await self.find_row(cmd, ref.game_id)
        if row.status == GameStatus.RUNNING:
            return await self._rejoin(cmd, row)

        def mutate(row: GameRow, lobby: Lobby) -> tuple[Lobby, str]:
            if lobby.has(cmd.user):
                raise Refused("You are already at this table.")
            if len(lobby.seats) >= self._seat_limits(row)[1]:
                raise Refused("This table is full.")
            return lobby.with_(seats=(*lobby.seats, LobbySeat(SeatKind.HUMAN, user=cmd.user))), \
                f"You joined table #{row.id}."

        return await self._edit(cmd, row.id, mutate)

    async def _rejoin(self, cmd: Command, row: GameRow) -> Reply:
        table = self.tables.get(row.id or 0)
        seat = table.seat_of(cmd.user) if table else None
        if table is None or seat is None:
            raise Refused("That game has already started; you can watch it in its thread.")
        table.dm_failed.discard(seat.seat)
        table.prompted.discard(seat.seat)
        await self.delivery.private(table, seat, render.private_digest(table, seat.seat, history=True))
        await self.turns.advance(table)
        return Reply("Welcome back: your seat and secrets are in your messages.")

    async def leave(self, cmd: Command, ref: TableRef) -> Reply:
        row = await self.find_row(cmd, ref.game_id)
        if row.status == GameStatus.RUNNING:
            raise Refused("The game is under way; if you step away, the turn deadline keeps it moving. "
                          "Use join to get your secrets again.")

        def mutate(row: GameRow, lobby: Lobby) -> tuple[Lobby, str]:
            mine = [s for s in lobby.seats if s.is_user(cmd.user)]
            if not mine:
                raise Refused("You are not at this table.")
            seats = tuple(s for s in lobby.seats if s is not mine[0])
            host = lobby.host
            if host.key == cmd.user.key:  # the host hands the table to the next seated human
                rest = [s.user for s in seats if s.kind is SeatKind.HUMAN and s.user is not None]
                host = rest[0] if rest else host
            return lobby.with_(seats=seats, host=host), f"You left table #{row.id}."

        reply = await self._edit(cmd, row.id, mutate)
        assert row.id is not None
        after = await self.store.game(row.id)
        if after is not None and reply.ok and not reply.duplicate and not Lobby.of(after).humans \
                and after.status == GameStatus.LOBBY:
            await self.store.finish_game(row.id, status=GameStatus.ABORTED, result=None)
            await self.refresh_card(row.id, closed="Table closed: everyone left.")
            self.on_closed(row.id)
        return reply

    def _check_host(self, cmd: Command, row: GameRow, what: str) -> None:
        if row.host != cmd.user.key and not self.is_admin(cmd):
            raise Refused(f"Only the host can {what}.")

    async def add_ai(self, cmd: Command, args: AddAiArgs) -> Reply:
        agent = args.agent or self.settings.default_agent
        choices = list(self.agent_choices())
        if agent not in choices:  # names only: a URL or path typed by a member is never built
            raise Refused(f"Unknown AI player. Choose one of: {', '.join(choices)}.")
        row = await self.find_row(cmd, args.game_id)
        self._check_host(cmd, row, "add AI seats")

        def mutate(row: GameRow, lobby: Lobby) -> tuple[Lobby, str]:
            room = self._seat_limits(row)[1] - len(lobby.seats)
            if room <= 0:
                raise Refused("This table is full.")
            n = min(args.count, room)
            added = tuple(LobbySeat(SeatKind.AI, agent=agent, added_by=cmd.user.key) for _ in range(n))
            return lobby.with_(seats=(*lobby.seats, *added)), f"Added {n} AI seat(s) ({agent})."

        return await self._edit(cmd, row.id, mutate)

    async def remove_ai(self, cmd: Command, args: RemoveAiArgs) -> Reply:
        row = await self.find_row(cmd, args.game_id)
        self._check_host(cmd, row, "remove AI seats")

        def mutate(row: GameRow, lobby: Lobby) -> tuple[Lobby, str]:
            ais = [i for i, s in enumerate(lobby.seats)
                   if s.kind is SeatKind.AI and (args.agent is None or s.agent == args.agent)]
            if not ais:
                raise Refused("There is no such AI seat to remove.")
            return lobby.with_(seats=tuple(s for i, s in enumerate(lobby.seats) if i != ais[-1])), \
                "Removed an AI seat."

        return await self._edit(cmd, row.id, mutate)

    async def set_deadline(self, cmd: Command, args: DeadlineArgs) -> Reply:
        seconds = args.seconds
        row = await self.find_row(cmd, args.game_id)
        self._check_host(cmd, row, "change the turn deadline")
        if row.status == GameStatus.RUNNING:
            assert row.id is not None
            async with self.lock_for(row.id):
                fresh = await self.store.game(row.id)
                if fresh is None or fresh.status != GameStatus.RUNNING:
                    raise Refused("That table is closed.")
                lobby = Lobby.of(fresh).with_(deadline_s=seconds)
                with _unanswered():
                    if not await self.store.update_lobby(row.id, lobby.to_json(), inbound_key=_key(cmd),
                                                         running=True):
                        return Reply(DUPLICATE, duplicate=True)
                table = self.tables.get(row.id)
                if table is not None:
                    table.deadline_s = seconds
            return Reply(f"Turn deadline set to {seconds:g} s from the next prompt on.")

        def mutate(row: GameRow, lobby: Lobby) -> tuple[Lobby, str]:
            return lobby.with_(deadline_s=seconds), \
                f"Turn deadline set to {seconds:g} s." if seconds else "No turn deadline."

        return await self._edit(cmd, row.id, mutate)

    # ------------------------------------------------------------------ start and abort

    async def start(self, cmd: Command, args: StartArgs) -> Reply:
        row = await self.find_row(cmd, args.game_id)
        if row.host != cmd.user.key:
            raise Refused("Only the host can start the game.")
        assert row.id is not None
        async with self.lock_for(row.id):
            fresh = await self._still_a_lobby(row.id)
            engine = game_registry.get(fresh.game)
            cfg = engine.config_from_dict(fresh.config)
            lo, hi = engine.seat_range(cfg)
            n = len(Lobby.of(fresh).seats)
            if not lo <= n <= hi:
                raise Refused(f"This game needs {lo}-{hi} seats; there are {n}. Add AI seats or wait for players.")
            seed = self.next_deal_seed() if args.seed is None else args.seed
            with _unanswered():
                await self.begin(fresh, engine, cfg, seed, Place.from_key(fresh.platform, fresh.place),
                                 inbound_key=_key(cmd))
        return Reply(f"Game #{row.id} started.")

    async def begin(self, row: GameRow, engine: Game[S, C], cfg: C, seed: int, place: Place, *,
                    inbound_key: str | None = None, keep_order: bool = False) -> Table:
        """Lobby → running: seat, deal, log, open the thread, tell everyone. The caller holds the game's lock."""
        assert row.id is not None
        lobby = Lobby.of(row)
        seats = seat_roster(lobby, seed, keep_order)
        state, events = engine.new(cfg, len(seats), seed)
        game_place = place if lobby.quiet else await self.delivery.open_thread(place, f"{engine.id} #{row.id}",
                                                                               lobby.card)
        await self.store.update_lobby(row.id, lobby.with_(thread=game_place.thread).to_json())
        await self.store.start_game(
            row.id, seed=seed, config=config_to_dict(cfg),
            seats=[SeatRecord(s.seat, s.kind, s.name, user_key=s.user.key if s.user else None, agent_spec=s.agent)
                   for s in seats],
            events=[EventRecord.of(e) for e in events], rules_version=RULES_VERSION, inbound_key=inbound_key,
        )
        table = Table(row.id, engine, cfg, seed, seats, state, game_place, row.platform, lobby.deadline_s,
                      tenant=row.tenant, quiet=lobby.quiet, lock=self.lock_for(row.id))
        self.on_table(table)
        await self.refresh_card(row.id, closed=f"Game #{row.id} is under way.")
        await self.delivery.public(table, Outgoing(f"**{engine.id} ({row.variant})** begins. Seats: "
                                                   f"{render.roster(table)}.", title=f"Game #{row.id}",
                                                   user_text=True))
        await self.delivery.fan_out(table, events)
        await self.turns.advance(table)
        return table

    async def abort(self, cmd: Command, ref: TableRef) -> Reply:
        row = await self.find_row(cmd, ref.game_id)
        if row.host != cmd.user.key and not self.is_admin(cmd):
            raise Refused("Only the host or an admin can abort this table.")
        assert row.id is not None
        table: Table | None = None
        async with self.lock_for(row.id):
            fresh = await self.store.game(row.id)
            if fresh is None or fresh.status not in LIVE:
                raise Refused("That table is already closed.")
            with _unanswered():  # the key is claimed with the end, so a repeat finds one or the other
                if not await self.store.finish_game(row.id, status=GameStatus.ABORTED, result=None,
                                                    inbound_key=_key(cmd)):
                    return Reply(DUPLICATE, duplicate=True)
            table = self.tables.get(row.id)
            if table is not None:
                table.over = True
                await self.turns.deadlines.clear(row.id)
                await self.delivery.public(table, Outgoing(f"Game #{row.id} was aborted by "
                                                           f"{cmd.user.name or 'the host'}.", user_text=True))
                await self.turns.ended(table, None)
        if table is None:
            await self.refresh_card(row.id, closed="Table closed by the host.")
            self.on_closed(row.id)
        return Reply(f"Table #{row.id} aborted.")

    # ------------------------------------------------------------------ reading

    async def list(self, cmd: Command) -> Reply:
        rows = await self.store.open_lobbies(cmd.place.platform, tenant=cmd.tenant)
        if not rows:
            return Reply("No open tables. Start one with the play command.")
        lines = [f"#{r.id} {r.game} ({r.variant}) in {r.place}: {len(Lobby.of(r).seats)} seated" for r in rows]
        return Reply("Open tables:\n" + "\n".join(lines))

    async def status(self, cmd: Command, ref: TableRef) -> Reply:
        row = await self.find_row(cmd, ref.game_id)
        assert row.id is not None
        if row.status == GameStatus.LOBBY:
            return Reply((await self.card(row.id)).text)
        table = self.tables.get(row.id)
        if table is None:
            return Reply(f"Game #{row.id} is {row.status}.")
        waiting = human_list([table.seats[s].name for s in sorted(table.acting())])
        phase = getattr(getattr(table.state, "phase", None), "value", "")
        return Reply(f"Game #{row.id}: {table.engine.id} ({table.cfg.variant}), phase {phase}. Waiting for: {waiting}.")

    async def card(self, game_id: int, closed: str | None = None) -> Outgoing:
        row = await self.store.game(game_id)
        assert row is not None
        return render.lobby_card(game_id, game_registry.get(row.game).id, row.variant, Lobby.of(row),
                                 self._seat_limits(row), closed)

    async def refresh_card(self, game_id: int, closed: str | None = None) -> None:
        row = await self.store.game(game_id)
        card = Lobby.of(row).card if row is not None and row.lobby else None
        if card is not None:
            await self.delivery.edit(card, await self.card(game_id, closed))


def _key(cmd: Command) -> str | None:
    return f"{cmd.place.platform}:{cmd.inbound_id}" if cmd.inbound_id else None


def host_user(platform: str) -> UserRef:
    """The host of AI-only tables the service opens itself (tournaments)."""
    return UserRef(platform, "hushtable", "Hushtable")

"""A bot process for the erasure-while-playing test: the table service on a shared database (SQLite
file or PostgreSQL), with the privacy desk wired as the app wires it (an erasure that waited for a
game is finished when that game ends), playing tables of several kinds with people and AI seats.

It plays in waves: the first wave (the member seated in some tables) is played quickly to its end;
then a slow wave is opened, the member seated in some of those too (moving once a second, and at
the last of them not at all before ``stop``), and while it runs further tables without the member
keep coming, until the file ``stop`` exists; then it plays what runs to
its end, says ``IDLE`` and waits (its connections open, so the SQLite WAL stays) until ``exit``
exists. People answer their prompts themselves: the member with their own made-up words
(``MEMBER_WORDS``), the other member with ``NONSENSE``.

Every finished table is witnessed in the ``witness`` table of the same database, from the table
in memory (not from the log): its actions (the member's values left out), winners and scores. The
test compares the log with it after the erasure, so what it judges is in the database.

It logs as the bot does (``bot.ops.logs.setup_logging``) into ``LOG_DIR``, at DEBUG.

    python -m tests.storage.erasure_worker URL STOP_FILE EXIT_FILE LOG_DIR
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa

import games
from bot.core.finished import FinishedTable
from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.privacy import PrivacyDesk
from bot.core.service import TableService
from bot.ops.logs import setup_logging
from bot.settings import Settings
from games import catalog
from games.base import Text
from games.play import random_action
from models.agents import AgentRegistry
from models.agents.random_agent import RandomAgent
from models.agents.registry import AgentKind
from storage.store import Store
from tests.vocabulary import NONSENSE

MEMBER = UserRef("memory", "7770001234", "Zelda Quorn")
OTHER = UserRef("memory", "8880005678", "Bob Plain")
MEMBER_WORDS = ("zorblaxian", "quexiform", "vrombulate", "plinxter", "glorpwise", "snarfidel", "wubbledorn", "crimbolix")
KINDS = catalog.ids()  # every registered game
WITNESS = sa.Table("witness", sa.MetaData(), sa.Column("game_id", sa.Integer, primary_key=True),
                   sa.Column("member_seats", sa.JSON), sa.Column("actions", sa.JSON), sa.Column("winners", sa.JSON),
                   sa.Column("scores", sa.JSON))


class Paced(RandomAgent):
    """The random agent, thinking a little: AI turns interleave with the people's and the erasure."""

    async def act(self, *args: Any, **kw: Any) -> Any:
        await asyncio.sleep(0.01)
        return await super().act(*args, **kw)


class Worker:
    def __init__(self, store: Store, service: TableService) -> None:
        self.store, self.service = store, service
        self.ids = itertools.count(1)
        self.places = itertools.count(1)
        self.member_seats: dict[int, list[int]] = {}
        self.r = random.Random(5)
        self.member_moved = 0.0

    async def send(self, command: CommandKind, user: UserRef, place: Place, **args: Any) -> Any:
        return await self.service.handle(Command(command, user, place, args, inbound_id=f"w-{next(self.ids)}", tenant="t"))

    async def open(self, game: str, with_member: bool) -> int:
        """A table of ``game``: its host (the member or the other), the other person, AI seats to the fewest seats."""
        engine = games.get(game)
        variant = engine.variants[0]
        low = engine.seat_range(engine.make_config(variant))[0]
        place = Place("memory", f"c{next(self.places)}")
        host = MEMBER if with_member else OTHER
        assert (await self.send(CommandKind.CREATE, host, place, game=game, variant=variant)).ok
        if with_member:
            assert (await self.send(CommandKind.JOIN, OTHER, place)).ok
        assert (await self.send(CommandKind.ADD_AI, host, place, agent="random", count=low - (2 if with_member else 1))).ok
        row = await self.store.lobby_at(place.platform, place.key)
        assert row is not None and row.id is not None
        r = await self.send(CommandKind.START, host, place, seed=1000 + row.id)
        assert r.ok, r.text
        table = self.service.tables[row.id]
        self.member_seats[row.id] = [s for s, info in enumerate(table.seats) if info.user is not None and info.user.key == MEMBER.key]
        return row.id

    async def move_people(self, pause: float, held: frozenset[int] = frozenset(), member_every: float = 0.0) -> bool:
        """One prompt answered at each running table where a person is to act (the member not at the
        ``held`` tables, and at most once per ``member_every`` seconds); False when no table runs."""
        await self.service.wait_idle()
        running = [t for t in list(self.service.tables.values()) if not t.over]
        for t in running:
            for s in sorted(t.engine.to_act(t.state)):
                info = t.seats[s]
                if info.is_ai or info.user is None:
                    continue
                if info.user.key == MEMBER.key:
                    if t.game_id in held or time.monotonic() - self.member_moved < member_every:
                        continue
                    self.member_moved = time.monotonic()
                spec = t.engine.legal(t.state, s)
                assert spec is not None
                if info.user.key == MEMBER.key and isinstance(spec, Text):
                    value = [self.r.choice(MEMBER_WORDS) for _ in spec.fields]
                    kind = spec.kind
                else:
                    a = random_action(spec, self.r, NONSENSE)
                    kind, value = a.kind, list(a.value)
                await self.send(CommandKind.ACT, info.user, t.place, game_id=t.game_id, seat=s, kind=kind, value=value)
                await asyncio.sleep(pause)
                break
        return bool(running)

    async def witness(self, finished: FinishedTable) -> None:
        """Written before the privacy desk's listener runs (listeners run in order)."""
        mine = self.member_seats.get(finished.game_id, [])
        acts = [[seat, a.kind, None if seat in mine else list(a.value)] for seat, a in finished.record.actions]
        res = finished.result.to_json()
        async with self.store.write() as conn:
            await conn.execute(sa.insert(WITNESS).values(game_id=finished.game_id, member_seats=mine, actions=acts,
                                                         winners=res["winners"], scores=res["scores"]))


async def main(url: str, stop: Path, exit_file: Path, log_dir: Path) -> None:
    # The bot's own file logging, at its most talkative level: the test searches these files too.
    setup_logging(Settings(_env_file=None, log_dir=log_dir, log_level="DEBUG"), console=True)  # type: ignore[call-arg]
    store = await Store.open(url)
    async with store.write() as conn:
        await conn.run_sync(WITNESS.metadata.create_all)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random", ai_timeout_s=5,  # type: ignore[call-arg]
                        turn_deadline_s=0)
    agents = AgentRegistry()
    agents.register(AgentKind.RANDOM, lambda entry, seed: Paced(entry.name, seed))
    service = TableService(store, settings=settings, agents=agents)
    desk = PrivacyDesk(store, contact=None, consent="opt-in", retention_days=None)
    w = Worker(store, service)
    service.ai_tables.add_finish_listener(w.witness)
    service.ai_tables.add_finish_listener(desk.after_game)
    service.attach(MemoryPlatform())
    await service.start()
    print("READY", flush=True)
    # The first wave, played to its end: the member in the first two kinds, one table of the third without them.
    for game, member in zip(KINDS[:3], (True, True, False), strict=True):
        await w.open(game, member)
    while await w.move_people(0.0):
        pass
    # The slow wave: the member at a table of every kind but the first two, beside tables without
    # them; the member moves slowly, and at the last table not before ``stop`` (so it runs on past the erasure).
    slow = [await w.open(game, True) for game in KINDS[2:]]
    waves = 0
    while not stop.exists():
        if len(service.tables) < 5:
            await w.open(KINDS[waves % len(KINDS)], False)
            waves += 1
        await w.move_people(0.05, held=frozenset(slow[-1:]), member_every=1.0)
    while await w.move_people(0.0):
        pass
    await service.wait_idle()
    await asyncio.sleep(0.5)  # the finish listeners run in the background
    await service.wait_idle()
    print("IDLE", json.dumps(w.member_seats), flush=True)
    while not exit_file.exists():
        await asyncio.sleep(0.1)
    await service.stop()
    await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])))

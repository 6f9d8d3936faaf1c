"""Fixtures for the core: a real SQLite file, the in-memory platform, and a driver that plays humans."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, Reply, UserRef
from bot.core.service import TableService
from bot.core.tables import SeatInfo
from bot.settings import Settings
from games.play import random_action
from models.agents import AgentRegistry
from storage.store import Store
from tests.vocabulary import NONSENSE  # one made-up vocabulary for the suite


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(default_agent="random", fallback_agent="random", ai_timeout_s=5, turn_deadline_s=0)
    base.update(kw)
    return Settings(_env_file=None, **base)  # type: ignore[call-arg]  # _env_file: a pydantic-settings init-only option


def human(seat: SeatInfo) -> UserRef:
    """The person at a human seat (an AI seat has no user)."""
    assert seat.user is not None, f"seat {seat.seat} is an AI seat"
    return seat.user


@dataclass
class Harness:
    service: TableService
    platform: MemoryPlatform
    store: Store
    url: str
    ids: itertools.count

    async def send(self, command: CommandKind, user: UserRef, place: Place, inbound: str | None = None,
                   tenant: str = "", **args) -> Reply:
        inbound = inbound or f"evt-{next(self.ids)}"
        return await self.service.handle(Command(command, user, place, args, inbound_id=inbound, tenant=tenant))

    async def restart(self, pause_s: float = 0.0, **kw) -> Harness:
        """Stop this service and open a new one over the same database and platform, as a restarted
        process would; ``pause_s`` is how long the bot stays down in between."""
        await self.close()
        if pause_s:
            await asyncio.sleep(pause_s)
        return await make_harness(self.url, platform=self.platform, **kw)

    async def close(self) -> None:
        await self.service.stop()
        await self.store.aclose()

    async def play_humans(self, seed: int = 0, max_steps: int = 2000, vocabulary: Sequence[str] = NONSENSE) -> list[Reply]:
        """Answer every human prompt with a random legal-looking move until no game runs."""
        r = random.Random(seed)
        replies: list[Reply] = []
        for _ in range(max_steps):
            await self.service.wait_idle()
            running = [t for t in self.service.tables.values() if not t.over]
            if not running:
                return replies
            moved = False
            for t in running:
                for s in sorted(t.engine.to_act(t.state)):
                    info = t.seats[s]
                    if info.is_ai:
                        continue
                    spec = t.engine.legal(t.state, s)
                    assert spec is not None, "a seat to act has a prompt"
                    a = random_action(spec, r, vocabulary)
                    reply = await self.send(CommandKind.ACT, human(info), t.place, game_id=t.game_id, seat=s,
                                            kind=a.kind, value=list(a.value), tenant=t.tenant)
                    replies.append(reply)
                    moved = True
                    break
            if not moved:
                await self.service.wait_idle()
        raise AssertionError("games did not finish")


async def make_harness(url: str, platform: MemoryPlatform | None = None, observer=None, **kw) -> Harness:
    store = await Store.open(url)
    service = TableService(store, settings=settings(**kw), agents=AgentRegistry(), observer=observer)
    platform = platform or MemoryPlatform()
    service.attach(platform)
    await service.start()
    return Harness(service, platform, store, url, itertools.count(1_000_000 if platform.sent else 1))


@pytest.fixture
async def harness(tmp_path) -> AsyncIterator[Harness]:
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/hush.db")
    yield h
    await h.service.stop()
    await h.store.aclose()


ALICE = UserRef("memory", "100", "Alice")
BOB = UserRef("memory", "200", "Bob")
CAROL = UserRef("memory", "300", "Alice")  # same display name as Alice, another person
HERE = Place("memory", "chan-1")

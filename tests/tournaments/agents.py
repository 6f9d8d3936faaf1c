"""Players for tournament tests: the real random player under other configured names, and a slow one.

``random:b`` is the random player on another stream of the same seed; ``random:slow`` waits a
little before each move, so a test can kill a process while games are in flight. Both are
operator entries of kind ``random`` (names only, defined by configuration).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from bot.core.memory import MemoryPlatform
from bot.core.service import TableService
from bot.settings import Settings
from bot.tournaments.runner import HEADLESS
from bot.tournaments.spec import TournamentSpec
from games.base import ActionSpec, Observation
from models.agents import AgentEntry, AgentKind, AgentRegistry, RandomAgent
from models.agents.base import Check, Decision

ENTRANTS = "random,random:b,random:slow"
B, SLOW = "random:b", "random:slow"


class SlowAgent(RandomAgent):
    delay_s = 0.03

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0,
                  check: Check | None = None) -> Decision:
        await asyncio.sleep(self.delay_s)
        return await super().act(obs, spec, feedback=feedback, attempt=attempt, check=check)


def _build(entry: AgentEntry, seed: int) -> RandomAgent:
    if entry.params.get("delay"):
        return SlowAgent(entry.name, seed)
    return RandomAgent(entry.name, seed ^ int(entry.params.get("salt", "0")))


def registry() -> AgentRegistry:
    reg = AgentRegistry([AgentEntry(B, AgentKind.RANDOM, params={"salt": "24301"}),
                         AgentEntry(SLOW, AgentKind.RANDOM, params={"delay": "1"})])
    reg.register(AgentKind.RANDOM, _build)
    return reg


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = dict(default_agent="random", fallback_agent="random", ai_timeout_s=5,
                                   agent_choices=ENTRANTS)
    base.update(kw)
    return Settings(_env_file=None, **base)  # type: ignore[call-arg]  # _env_file: a pydantic-settings init-only option


@dataclass
class Bench:
    service: TableService
    headless: MemoryPlatform
    chat: MemoryPlatform


@asynccontextmanager
async def open_service(url: str) -> AsyncIterator[Bench]:
    from storage.store import Store

    store = await Store.open(url)
    service = TableService(store, settings=settings(), agents=registry())
    headless, chat = MemoryPlatform(name=HEADLESS), MemoryPlatform(name="memory")
    service.attach(headless)
    service.attach(chat)
    await service.start()
    try:
        yield Bench(service, headless, chat)
    finally:
        await service.stop()
        await store.aclose()




def spec(**kw: Any) -> TournamentSpec:
    """A ``TournamentSpec`` from keywords, entrants given as a list."""
    kw["entrants"] = tuple(kw.get("entrants", ()))
    return TournamentSpec(**kw)

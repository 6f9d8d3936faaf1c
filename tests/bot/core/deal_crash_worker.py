"""A process that starts a game and is SIGKILLed by its own platform at the first direct message:
the deal is logged, no secret was delivered. tests/bot/core/test_delivery.py resumes it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, MessageRef, Outgoing, Place, UserRef
from bot.core.service import TableService
from bot.settings import Settings
from models.agents import AgentRegistry
from storage.store import Store

ALICE = UserRef("memory", "100", "Alice")
BOB = UserRef("memory", "200", "Bob")
PLACE = Place("memory", "deal")


class DiesAtFirstDm(MemoryPlatform):
    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


async def main(url: str) -> None:
    store = await Store.open(url)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]  # _env_file: pydantic-settings init-only
    service = TableService(store, settings=settings, agents=AgentRegistry())
    service.attach(DiesAtFirstDm())
    await service.start()
    await service.handle(Command(CommandKind.CREATE, ALICE, PLACE, {"game": "spy"}, "c1"))
    await service.handle(Command(CommandKind.JOIN, BOB, PLACE, {}, "c2"))
    await service.handle(Command(CommandKind.ADD_AI, ALICE, PLACE, {"agent": "random", "count": 2}, "c3"))
    await service.handle(Command(CommandKind.START, ALICE, PLACE, {}, "c4"))
    print("NOT KILLED", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

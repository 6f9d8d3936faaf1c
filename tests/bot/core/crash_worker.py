"""A process that plays a fixed set of all-AI games on a SQLite file; the crash test kills it.

Every command carries a fixed inbound id and every game a fixed seed, so sending the
whole script again after a crash only does what had not been done yet.
"""

from __future__ import annotations

import asyncio
import sys

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.service import TableService
from bot.settings import Settings
from models.agents import AgentRegistry
from storage.store import Store

TABLES = [("decrypto", "benchmark", 3), ("decrypto", "teams", 4), ("spy", "classic", 5), ("chameleon", "classic", 4),
          ("spy", "spygame", 4), ("chameleon", "sneak", 3)]


async def main(url: str) -> None:
    store = await Store.open(url)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")
    service = TableService(store, settings=settings, agents=AgentRegistry())
    service.attach(MemoryPlatform())
    await service.start()
    host = UserRef("memory", "1", "Host")
    for i, (game, variant, seats) in enumerate(TABLES):
        place = Place("memory", f"chan-{i}")
        await service.handle(Command(CommandKind.CREATE, host, place, {"game": game, "variant": variant, "spectate": True},
                                     f"create-{i}"))
        await service.handle(Command(CommandKind.ADD_AI, host, place, {"agent": "random", "count": seats}, f"ai-{i}"))
        await service.handle(Command(CommandKind.START, host, place, {"seed": 1000 + i}, f"start-{i}"))
    while any(not t.over for t in service.tables.values()) or await store.unfinished_games():
        await asyncio.sleep(0.02)
    print("ALL DONE", flush=True)
    await service.stop()
    await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

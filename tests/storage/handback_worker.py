"""A bot process for the hand-back test: one of several on a PostgreSQL, serving the tenants it is
told (``-``: none), opening ``open`` AI-only tables of the first of them when it starts, and
playing on until the file ``stop`` exists. Its AI seats think ``pace`` seconds per move (a
random agent that waits), so a table outlives a takeover and a restart.

Every chat message is written to the ``wire`` table (tests/storage/fence_worker.py), so sends are
judged in commit order like the turns. On stop it prints how many tables it handed back
(``hushtable_lease_moves{change="handed_back"}``).

    python -m tests.storage.handback_worker URL OWNER LEASE_S TENANTS OPEN PACE STOP_FILE
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.core.messages import Place
from bot.core.observe import NullObserver
from bot.core.service import TableService
from bot.core.serving import Served
from bot.settings import Settings
from models.agents import AgentRegistry
from models.agents.random_agent import RandomAgent
from models.agents.registry import AgentKind
from storage.store import Store
from tests.keys import RELAY_KEY
from tests.storage.fence_worker import WirePlatform

GAME = ("spy", "classic", 5)
SEED = 41  # a deal whose random play runs long (about 25 rounds of moves)


class Moves(NullObserver):
    def __init__(self) -> None:
        self.moves: dict[str, int] = {}

    def lease_moved(self, change: str, games: int) -> None:
        self.moves[change] = self.moves.get(change, 0) + games


def paced(pace: float) -> type[RandomAgent]:
    class Paced(RandomAgent):
        async def act(self, *args: Any, **kw: Any) -> Any:
            await asyncio.sleep(pace)
            return await super().act(*args, **kw)

    return Paced


async def main(url: str, owner: str, lease_s: float, tenants: str, open_n: int, pace: float, stop: Path) -> None:
    store = await Store.open(url)
    await store.own_tables(owner, timedelta(seconds=lease_s), relay_key=RELAY_KEY)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]
    agents = AgentRegistry()
    slow = paced(pace)
    agents.register(AgentKind.RANDOM, lambda entry, seed: slow(entry.name, seed))
    observer = Moves()
    service = TableService(store, settings=settings, agents=agents, observer=observer)
    served = [t for t in tenants.split(",") if t and t != "-"]
    service.holding.served = Served(tenants=frozenset(served))
    service.attach(WirePlatform(url, owner))
    await service.start()
    game, variant, seats = GAME
    opened = [await service.ai_tables.open_ai_table(tenant=served[0], place=Place("memory", f"{owner}-c{k}"), game=game,
                                          variant=variant, options={}, agents=["random"] * seats, seed=SEED + k)
              for k in range(open_n)]
    print("READY", *opened, flush=True)
    while not stop.exists():
        await asyncio.sleep(0.1)
    print("HANDED BACK", observer.moves.get("handed_back", 0), flush=True)
    await service.stop()
    await store.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6]),
                     Path(sys.argv[7])))

"""A process that runs the tournament scheduler on a database (lease-guarded) until killed:
tests/storage/test_ownership.py SIGKILLs it and watches a standby in another process take over."""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timedelta

from bot.tournaments.schedule import TournamentScheduler
from storage.store import Store
from storage.tables import TournamentRow


async def no_slot(template: TournamentRow, slot: datetime) -> int | None:
    return None  # no tournament is scheduled here: only the lease is watched


async def main(url: str, owner: str, ttl_s: float) -> None:
    store = await Store.open(url)
    scheduler = TournamentScheduler(store, url, no_slot, owner=owner, lease_ttl=timedelta(seconds=ttl_s))
    print("ACTIVE" if await scheduler.start() else "STANDBY", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))

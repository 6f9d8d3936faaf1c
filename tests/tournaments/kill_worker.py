"""A process that runs one tournament on a SQLite file; the SIGKILL test kills it mid-way.

Run again after the kill, it finds the same tournament (created once) and resumes it.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from bot.tournaments import manage
from bot.tournaments.runner import RunBusy, TournamentRunner
from storage import tournaments as repo
from tests.tournaments.agents import SlowAgent, open_service, spec


async def main(url: str) -> None:
    SlowAgent.delay_s = 0.05
    async with open_service(url) as b:
        existing = await repo.tournaments(b.service.store, tenant="console")
        if existing:
            tid = existing[0].id or 0
        else:
            tid = await manage.create(b.service, "console", spec(game="chameleon", variant="classic",
                                      entrants=["random:slow", "random"], seats=3, games_per_pairing=4, seed=21))
        # The killed run's lease runs out within its ttl (one second here); until then a new run is refused.
        for _ in range(100):
            try:
                summary = await TournamentRunner(b.service, concurrency=2, rounds=20,
                                                 lease_ttl=timedelta(seconds=1)).run(tid)
                break
            except RunBusy:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the killed run's lease never ran out")
        print(f"DONE {summary.finished} {summary.failed}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))

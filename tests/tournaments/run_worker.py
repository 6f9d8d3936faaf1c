"""One process that runs a stored tournament (``python -m tests.tournaments.run_worker URL ID``):
prints ``DONE <finished> <failed>``, or ``BUSY <sentence>`` when another run holds it."""

from __future__ import annotations

import asyncio
import sys

from bot.tournaments.runner import RunBusy, TournamentRunner
from tests.tournaments.agents import SlowAgent, open_service


async def main(url: str, tournament_id: int) -> None:
    SlowAgent.delay_s = 0.02
    async with open_service(url) as b:
        try:
            summary = await TournamentRunner(b.service, concurrency=2, rounds=20).run(tournament_id)
        except RunBusy as exc:
            print(f"BUSY {exc}", flush=True)
            return
        print(f"DONE {summary.finished} {summary.failed}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))

"""A process that plays a fixed set of all-AI games on a SQLite file; the crash test kills it.

Every command carries a fixed inbound id and every game a fixed seed, so sending the
whole script again after a crash only does what had not been done yet.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.service import TableService
from bot.settings import Settings
from games.catalog import descriptors
from models.agents import AgentRegistry
from storage.store import Store
from tests.keys import RELAY_KEY


def _tables() -> list[tuple[str, str, int]]:
    """One table per variant of every registered game, at one seat more than its fewest where it can."""
    out = []
    for d in descriptors():
        for v in d.variants:
            lo, hi = d.engine.seat_range(d.engine.make_config(str(v)))
            out.append((d.id, str(v), min(lo + 1, hi)))
    return out


TABLES = _tables()


async def main(url: str, lease_s: float | None = None, owner: str = "", part: int = 0, parts: int = 1,
               copies: int = 1) -> None:
    """Play the scripted tables, ``copies`` times over (with ``parts`` > 1 only every ``parts``-th
    from ``part``: several processes share the script) and wait until every table of the script has
    ended. With TRACE_TURNS in the environment, print one line per turn it logs:
    ``TURN <game id> <owner> <token> <time>`` (the fence it held while logging it)."""
    tables = TABLES * copies
    store = await Store.open(url)
    if lease_s is not None:  # one of several processes on this database (storage/ownership.py)
        leases = await store.own_tables(owner or "worker", timedelta(seconds=lease_s), relay_key=RELAY_KEY)
        if leases is not None and os.environ.get(TRACE_TURNS):
            trace_turns(store)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]  # pydantic-settings takes _env_file
    service = TableService(store, settings=settings, agents=AgentRegistry())
    service.attach(MemoryPlatform())
    await service.start()
    host = UserRef("memory", "1", "Host")
    for i, (game, variant, seats) in enumerate(tables):
        if i % parts != part:
            continue
        place = Place("memory", f"chan-{i}")
        await service.handle(Command(CommandKind.CREATE, host, place, {"game": game, "variant": variant, "spectate": True},
                                     f"create-{i}"))
        await service.handle(Command(CommandKind.ADD_AI, host, place, {"agent": "random", "count": seats}, f"ai-{i}"))
        await service.handle(Command(CommandKind.START, host, place, {"seed": 1000 + i}, f"start-{i}"))
    while (any(not t.over for t in service.tables.values()) or await store.unfinished_games()
           or len(await store.games()) < len(tables)):
        await asyncio.sleep(0.02)
    print("ALL DONE", flush=True)
    await service.stop()
    await store.aclose()


TRACE_TURNS = "TRACE_TURNS"


def trace_turns(store: Store) -> None:
    """Print each turn this process logs with the place it took in the log (its sequence number: the
    order the game's turns committed in) and the fence it held for the game while logging it."""
    inner, leases = store.append_turn, store.leases
    assert leases is not None

    async def traced(game_id: int, **kw: Any) -> bool:
        fence = leases.fence(game_id)
        fresh = await inner(game_id, **kw)
        if fresh and fence is not None:
            print(f"TURN {game_id} {kw.get('seq')} {fence.owner} {fence.token} {time.time():.6f}", flush=True)
        return fresh

    store.append_turn = traced


ROOT = Path(__file__).resolve().parents[3]


def run(url: str, count_actions: Callable[[], int], kill_after_actions: int | None = None, timeout: float = 180,
        copies: int = 1) -> bool:
    """Run this module's scripted games on ``url`` in a child process; with ``kill_after_actions``,
    SIGKILL it once ``count_actions()`` reaches that many. True when the child finished by itself."""
    extra = [] if copies == 1 else ["none", "", "0", "1", str(copies)]
    proc = subprocess.Popen([sys.executable, "-m", "tests.bot.core.crash_worker", url, *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError("the worker hung")
            if kill_after_actions is not None and count_actions() >= kill_after_actions:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                return False
            time.sleep(0.002)
        out, err = proc.communicate()
        assert proc.returncode == 0, err
        assert "ALL DONE" in out
        return True
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    # crash_worker URL [LEASE_SECONDS|none OWNER [PART PARTS [COPIES]]]
    asyncio.run(main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] != "none" else None,
                     sys.argv[3] if len(sys.argv) > 3 else "", *(int(x) for x in sys.argv[4:7])))

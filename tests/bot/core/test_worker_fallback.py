"""Kill the inference worker mid-game: AI seats fall back for their turns, the log says so,
and the game finishes."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp
import sqlalchemy as sa

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.service import TableService
from models.agents import AgentEntry, AgentKind, AgentRegistry
from models.agents.wiring import register_agents
from models.client import ClientOptions, ClientPool
from storage.store import Store
from tests.bot.core.conftest import settings

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_healthy(url: str, timeout: float = 60) -> None:
    end = asyncio.get_running_loop().time() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(f"{url}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            if asyncio.get_running_loop().time() > end:
                raise AssertionError("worker did not come up")
            await asyncio.sleep(0.2)


def _unused_embedder(name: str) -> Any:
    """Stands in for embedder_for: the plain LLM agent never embeds, so nothing reads what this gives."""
    return None


async def test_killing_the_worker_mid_game_falls_back_and_finishes(tmp_path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    worker = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--model", "fake", "--port", str(port)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path}/w.db")
    pool = ClientPool(ClientOptions(http_timeout_s=2.0, http_retries=1))
    try:
        await wait_healthy(url)
        # The paper-protocol agent (mode=plain): it needs its model for every move, so a dead worker
        # must hand the turns to the fallback chain. (The strategic default would play on from its
        # embedding candidates, tested in tests/models/test_strategic.py.)
        registry = AgentRegistry([AgentEntry("llm:worker", AgentKind.LLM, url, {"mode": "plain"})])
        register_agents(registry, connect=pool.get, embedder_for=_unused_embedder)
        spec = "llm:worker"  # the operator configures this worker as an agent choice; players pick it by name
        service = TableService(store, settings=settings(fallback_agent="random", ai_timeout_s=10,
                                                        agent_choices=f"random,{spec}"), agents=registry)
        service.attach(MemoryPlatform())
        await service.start()
        host, place = UserRef("memory", "1", "Host"), Place("memory", "c")
        await service.handle(Command(CommandKind.CREATE, host, place, {"game": "spy", "spectate": True}, "c1"))
        await service.handle(Command(CommandKind.ADD_AI, host, place, {"agent": spec, "count": 5}, "c2"))
        reply = await service.handle(Command(CommandKind.START, host, place, {"seed": 5}, "c3"))
        assert reply.ok, reply.text
        table = next(iter(service.tables.values()))
        # Let the worker serve a few turns, then kill it.
        for _ in range(400):
            async with store.engine.connect() as conn:
                served = (await conn.execute(sa.text(
                    "select count(*) from agent_calls where operation != 'none' and error is null"))).scalar_one()
            if served >= 3:
                break
            await asyncio.sleep(0.05)
        assert served >= 3, "the worker answered before it was killed"
        worker.kill()
        worker.wait()
        await asyncio.wait_for(_until(lambda: table.over), timeout=120)
        glog = await store.load_game(table.game_id)
        sources = [a.source for a in glog.actions]
        assert "ai" in sources and "fallback" in sources
        async with store.engine.connect() as conn:
            errors = (await conn.execute(sa.text("select count(*) from agent_calls where error is not null"))).scalar_one()
        assert errors > 0, "the log says why the model did not play"
        row = await store.game(table.game_id)
        assert row is not None and row.status == "finished"
        await service.stop()
    finally:
        if worker.poll() is None:
            worker.kill()
        await pool.aclose()
        await store.aclose()


async def _until(pred) -> None:
    while not pred():
        await asyncio.sleep(0.05)

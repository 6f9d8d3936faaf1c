"""The shared base of the local platform fakes (Discord, Slack): an aiohttp server on
127.0.0.1 (port 0), a condition tests can wait on, and fault injection.

Faults make the fake answer like a broken or different platform would: a bare
``{"ok": true}`` for every Slack method (what bolt-python's own mock Web API answers), a
malformed Discord message object, an HTTP 500. The bot must survive each of them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

JSON = "application/json"  # discord.py compares the header literally: no charset suffix


@dataclass(frozen=True)
class Fault:
    """Answer requests that ``applies(method, path)`` with ``body`` and ``status`` instead."""

    applies: Callable[[str, str], bool]
    body: Any
    status: int = 200
    content_type: str = JSON  # with ``body`` as text: a page that is no JSON (an outage page, a proxy's)


class FakeServer:
    """Subclasses add their routes in `routes` and call `touch` whenever state changes."""

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.faults: list[Fault] = []
        self.faulted: list[tuple[str, str]] = []
        self._changed = asyncio.Condition()

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    async def start(self) -> None:
        app = web.Application(client_max_size=32 * 1024 * 1024)
        self.routes(app)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def before_close(self) -> None:
        """Close sockets the subclass keeps open (websockets)."""

    async def close(self) -> None:
        await self.before_close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------------ faults

    def fault_for(self, method: str, path: str) -> web.Response | None:
        for f in self.faults:
            if f.applies(method, path):
                self.faulted.append((method, path))
                if f.content_type != JSON:
                    return web.Response(status=f.status, text=str(f.body), headers={"Content-Type": f.content_type})
                return web.Response(status=f.status, body=json.dumps(f.body), headers={"Content-Type": JSON})
        return None

    # ------------------------------------------------------------------ waiting

    async def touch(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, pred: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Wait until ``pred()`` is truthy (re-checked whenever the fake's state changes)."""
        async def loop() -> Any:
            async with self._changed:
                while True:
                    got = pred()
                    if got:
                        return got
                    try:
                        await asyncio.wait_for(self._changed.wait(), 0.2)
                    except TimeoutError:
                        pass
        return await asyncio.wait_for(loop(), timeout)

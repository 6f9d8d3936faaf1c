"""What the startup point (bot/app.py) calls to switch operations on: the metrics observer it
hands to ``TableService(observer=...)`` and, when ``HUSHTABLE_OPS_PORT`` is set, the local
/healthz and /metrics server."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from bot.ops.health import OpsServer
from bot.ops.metrics import PrometheusObserver
from storage.store import Store


@dataclass
class Ops:
    observer: PrometheusObserver
    server: OpsServer | None = None

    async def aclose(self) -> None:
        if self.server is not None:
            await self.server.aclose()
            self.server = None


async def start_ops(settings: Any, store: Store, sock: socket.socket | None = None) -> Ops:
    """The observer always (counting is cheap); the HTTP endpoints only when a port is configured
    (on ``sock`` when the start-up bound it before saying what runs)."""
    observer = PrometheusObserver()
    port = getattr(settings, "ops_port", None)
    server = None
    if sock is not None:
        server = await OpsServer.start(store, observer, sock=sock)
    elif port is not None:
        server = await OpsServer.start(store, observer, host=getattr(settings, "ops_host", "127.0.0.1"), port=int(port))
    return Ops(observer, server)

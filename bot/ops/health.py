"""The bot's local HTTP endpoints: ``GET /healthz`` and ``GET /metrics`` (aiohttp, already a dependency).

A Discord or Slack Socket Mode bot has no inbound port of its own; this one listens on
``HUSHTABLE_OPS_HOST:HUSHTABLE_OPS_PORT`` (127.0.0.1, off unless a port is set) for a
container HEALTHCHECK, systemd watchdogs and a Prometheus scraper.

``/healthz`` answers 200 ``ok`` when the database answers ``SELECT 1`` within two seconds
(and, for a SQLite file, the file is still there: a deleted file keeps working through open
handles until the bot restarts and finds an empty log), else 503 with a reason that names no
URL, password or path.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import sqlalchemy as sa
from aiohttp import web

from bot.ops.metrics import CONTENT_TYPE, PrometheusObserver
from storage.store import Store

log = logging.getLogger(__name__)

HEALTH_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Health:
    ok: bool
    reason: str = "ok"


async def check_database(store: Store) -> Health:
    """Can the log be read right now?"""
    plan = store.plan
    if plan.sqlite_file is not None:
        if not plan.sqlite_file.is_file():
            return Health(False, "database file is missing")
    try:
        async with asyncio.timeout(HEALTH_TIMEOUT_S):
            async with store.engine.connect() as conn:
                await conn.execute(sa.text("SELECT 1"))
    except TimeoutError:
        return Health(False, "database did not answer in time")
    except Exception as exc:  # noqa: BLE001 - any failure is "unhealthy"; the type says enough
        log.warning("health check: database unreachable (%s)", type(exc).__name__)
        return Health(False, f"database unreachable ({type(exc).__name__})")
    return Health(True)


def make_app(store: Store, observer: PrometheusObserver) -> web.Application:
    async def healthz(_request: web.Request) -> web.Response:
        health = await check_database(store)
        observer.database_up.set(1 if health.ok else 0)
        return web.Response(status=200 if health.ok else 503, text=health.reason + "\n")

    async def metrics(_request: web.Request) -> web.Response:
        resp = web.Response(body=observer.render())
        resp.headers["Content-Type"] = CONTENT_TYPE
        return resp

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics)
    return app


class OpsServer:
    """The running endpoints; ``port`` is the bound port (useful with port 0 in tests)."""

    def __init__(self, runner: web.AppRunner, site: web.TCPSite, port: int) -> None:
        self._runner, self._site, self.port = runner, site, port

    @classmethod
    async def start(cls, store: Store, observer: PrometheusObserver, *, host: str = "127.0.0.1", port: int = 0) -> OpsServer:
        runner = web.AppRunner(make_app(store, observer), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        bound = sockets[0].getsockname()[1] if sockets else port
        log.info("ops endpoints on http://%s:%s (/healthz, /metrics)", host, bound)
        return cls(runner, site, int(bound))

    async def aclose(self) -> None:
        await self._runner.cleanup()

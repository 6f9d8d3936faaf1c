"""The one startup point: wires storage, agents, inference clients, the table service and
the platforms, then runs until stopped. No module-level singletons anywhere else."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from bot.core.service import TableService
from bot.ops.logs import setup_logging
from bot.ops.wiring import Ops, start_ops
from bot.settings import Settings
from bot.sneak import SneakService
from bot.tournaments.service import TournamentService
from models.agents import AgentRegistry
from storage.store import DatabaseReadOnly, Store

log = logging.getLogger(__name__)


@dataclass
class App:
    settings: Settings
    store: Store
    service: TableService
    pool: Any  # models.client.ClientPool
    tournaments: TournamentService
    ops: Ops | None = None  # metrics observer and the local /healthz, /metrics server

    async def aclose(self) -> None:
        await self.tournaments.aclose()
        await self.service.stop()
        if self.ops is not None:
            await self.ops.aclose()
        await self.pool.aclose()
        await self.store.aclose()


def build_agents(settings: Settings, pool: Any) -> AgentRegistry:
    """The agent registry from the settings: the built-in names, ``llm:openai`` when its URL is set, and the
    operator's ``HUSHTABLE_AGENTS`` entries; llm and embed agents share clients through the pool (one per
    configured endpoint and key). A bad entry stops the bot here, at start, not in a game."""
    from models.agents.wiring import build_registry
    from models.worker.embedding_backend import embedder_for

    return build_registry(settings, pool.get, embedder_for)


async def build_app(settings: Settings | None = None, *, agents: AgentRegistry | None = None) -> App:
    from models.client import ClientPool

    settings = settings or Settings()
    # The agents are checked before anything opens: a bad HUSHTABLE_AGENTS entry stops the start cleanly.
    pool = ClientPool(settings.client_options())
    try:
        registry = agents or build_agents(settings, pool)
    except Exception:
        await pool.aclose()
        raise
    store = await Store.open(settings.database_url)
    try:  # an evaluator that has not passed validation stops the start with one line (bot/sneak.py)
        sneak = SneakService(store, client_for=pool.get, evaluators=settings.sneak_evaluator_list)
    except ValueError as exc:
        await store.aclose()
        await pool.aclose()
        raise SystemExit(f"hushtable: {exc}") from None
    ops = await start_ops(settings, store)
    service = TableService(store, settings=settings, agents=registry, observer=ops.observer)
    sneak.attach(service)  # the clue report after each game, and /sneak through the port
    tournaments = TournamentService(service)
    ops.observer.watch_scheduler(tournaments.scheduled_jobs)  # hushtable_scheduler_jobs
    return App(settings, store, service, pool, tournaments, ops)


async def main(*, force_console: bool = False, hotseat: bool = False, settings: Settings | None = None) -> None:
    settings = settings or Settings()
    discord_on = not force_console and bool(settings.discord_token)
    slack_on = not force_console and bool(settings.slack_bot_token and (settings.slack_app_token or settings.slack_signing_secret))
    console = not (discord_on or slack_on)
    # Services log to .hushtable/logs/ and stderr. The console is a game screen: its adapter
    # sends every record to .hushtable/logs/console.log beside the database and none to the screen.
    if not console:
        setup_logging(settings, console=False)
    app = await build_app(settings)
    try:
        await app.store.check_writable()
    except DatabaseReadOnly as exc:
        await app.aclose()
        raise SystemExit(f"hushtable: {exc}") from None
    runners: list[Awaitable[None]] = []
    try:
        if discord_on:
            from bot.discord.adapter import run_discord

            runners.append(run_discord(app.service, settings, admin_role_ids=settings.discord_admin_roles,
                                       tournaments=app.tournaments))
        if slack_on:
            from bot.slack.adapter import run_slack

            runners.append(run_slack(app.service, settings, tournament_port=app.tournaments))
        if console:
            from bot.console.app import run_console

            runners.append(run_console(app.service, settings, hotseat=hotseat))
        if discord_on or slack_on:
            runners.append(app.tournaments.serve(settings.database_url))  # scheduled tournaments
        await asyncio.gather(*runners)
    finally:
        await app.aclose()

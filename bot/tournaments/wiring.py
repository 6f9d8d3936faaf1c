"""What the tournament commands run on, without the chat app.

The commands that only read rows (``list``, ``leaderboard``) get the store alone: no agents, inference
clients or clue reports, so the model stack is never imported, no interrupted game resumes as a side
effect of reading, and no table lease is taken (a listing works beside a running bot). The commands that
plan or play get the tournament service: the store, the agents and their inference clients, the table
service with its SNEAK clue reports (a clue game's leaderboard shows their SoftScore).

``bot/app.py`` wires the same pieces for the bot, with the platforms, the ops endpoints and the
start-up checks around them; the command line needs none of those, and importing them costs seconds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import TYPE_CHECKING

from bot.settings import Settings
from storage.ownership import process_name
from storage.store import RelayKeyMissing, SingleProcessOnly, Store

if TYPE_CHECKING:
    from bot.tournaments.service import TournamentService


@asynccontextmanager
async def tournament_store(settings: Settings) -> AsyncIterator[Store]:
    """The configured database, opened for reading tournaments; closed on the way out."""
    store = await Store.open(settings.database_url)
    try:
        yield store
    finally:
        await store.aclose()


@asynccontextmanager
async def tournament_service(settings: Settings) -> AsyncIterator[TournamentService]:
    """The tournament service over a started table service; everything closed on the way out.
    Games of tournaments interrupted in an earlier run resume (the service attaches their quiet place).
    A bad agent entry, a database another process owns or an evaluator that has not passed validation
    stops here with one line, as the bot's start does."""
    from bot.core.service import TableService
    from bot.sneak import SneakService
    from bot.tournaments.service import TournamentService
    from models.agents.wiring import build_registry
    from models.client import ClientPool
    from models.worker.embedding_backend import embedder_for

    pool = ClientPool(settings.client_options())
    try:
        registry = build_registry(settings, pool.get, embedder_for)
        store = await Store.open(settings.database_url)
    except BaseException:
        await pool.aclose()
        raise
    try:
        try:  # a second process on a SQLite file stops here (several share a PostgreSQL by leases)
            await store.own_tables(process_name(), timedelta(seconds=settings.table_lease_s),
                                   relay_key=settings.relay_key.get_secret_value() if settings.relay_key else None)
        except (SingleProcessOnly, RelayKeyMissing) as exc:
            raise SystemExit(f"hushtable: {exc}") from None
        try:
            sneak = SneakService(store, client_for=pool.get, evaluators=settings.sneak_evaluator_list,
                                 consent=settings.research_consent)
        except ValueError as exc:
            raise SystemExit(f"hushtable: {exc}") from None
        service = TableService(store, settings=settings, agents=registry)
        sneak.attach(service.ai_tables)
        tournaments = TournamentService(service)
        try:
            await service.start()
            yield tournaments
        finally:
            await tournaments.aclose()
            await service.stop()
    finally:
        await pool.aclose()
        await store.aclose()

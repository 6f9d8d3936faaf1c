"""Scheduled tournaments: APScheduler 3.11 with persistent jobs beside the project database.

A scheduled tournament is a template: each time its cron trigger fires, a fresh
tournament is created from it (same game, entrants and format; a new seed), run, and
its leaderboard posted where the template was created.

Choices, deliberately:

- ``AsyncIOScheduler`` with its asyncio executor (an ``async def`` job on a thread
  pool would never be awaited), ``SQLAlchemyJobStore`` through a *synchronous* URL
  (``sync_url``): jobs survive restarts. On PostgreSQL that is the project database.
  On SQLite it is a file of its own beside it (``hushtable.db`` → ``hushtable.db.scheduler``):
  the job store writes synchronously on the event loop's thread, so sharing the one
  SQLite write lock with the bot's async transactions (which hold it across awaits)
  could stall the loop for the whole busy timeout. Nothing is lost with that file:
  the schedules themselves live on the tournament rows, and the lease holder rebuilds
  the jobs from them.
- Jobs are the module-level ``run_scheduled(tournament_id)`` (pickled by reference,
  plain argument). It reaches the running bot through ``_runtime``, the one bridge
  APScheduler's pickled jobs leave us, set while this process holds the lease.
- ``misfire_grace_time`` = 6 hours: a nightly run missed by a restart or a deploy
  still happens when the bot is back the same morning; later than that it is skipped
  and the next regular run comes (a run in the middle of the next day would collide
  with people's games and post a stale board). ``coalesce=True``: several missed
  runs make one. ``max_instances=1``: a run still going is never started twice.
- Exactly one scheduler per database: a lease row (``scheduler_leases``) taken for
  ``LEASE_TTL`` and renewed every third of it. A second bot process on the same
  database stays on standby, retries, and takes over when the holder's lease runs out
  (the holder died). Each firing also claims its slot (tournament, due time) in the
  lease table, so even two schedulers that both believe they hold the lease cannot
  run the same slot twice.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from sqlalchemy.engine import make_url

from bot.core.service import TableService
from bot.tournaments import manage
from bot.tournaments.runner import RunSummary, TournamentRunner
from storage import tournaments as repo
from storage.engine import plan_engine
from storage.tables import TournamentRow

log = logging.getLogger(__name__)

MISFIRE_GRACE_S = 6 * 3600
COALESCE = True
LEASE_NAME = "tournament-scheduler"
LEASE_TTL = timedelta(seconds=60)
JOBS_TABLE = "apscheduler_jobs"

Publisher = Callable[[TournamentRow, RunSummary], Awaitable[None]]
"""Posts a finished run's leaderboard to the place of its tournament (per platform)."""


def parse_cron(expr: str) -> CronTrigger:
    """A standard five-field crontab (minute hour day month weekday), in UTC."""
    try:
        return CronTrigger.from_crontab(expr.strip(), timezone=UTC)
    except (ValueError, TypeError) as exc:
        raise manage.TournamentError(
            f"{expr!r} is not a schedule: use five crontab fields, e.g. '0 3 * * *' for 03:00 UTC daily ({exc})."
        ) from None


def sync_url(database_url: str) -> str:
    """The synchronous URL of the project database, for APScheduler's job store."""
    plan = plan_engine(database_url)
    if plan.is_sqlite:
        if plan.in_memory:
            raise ValueError("scheduled tournaments need a database file or server, not an in-memory database")
        assert plan.url.database is not None
        return str(plan.url.set(drivername="sqlite", database=f"{plan.url.database}.scheduler"))
    if plan.backend == "postgresql":
        # APScheduler 3 cannot use asyncpg; psycopg (3) is SQLAlchemy's synchronous Postgres driver.
        return make_url(plan.url).set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    raise ValueError(f"no synchronous driver known for {plan.backend}")


@dataclass
class _Runtime:
    scheduler: TournamentScheduler


_runtime: _Runtime | None = None


async def run_scheduled(tournament_id: int) -> None:
    """The job APScheduler stores: one run of a scheduled tournament (module level, plain argument)."""
    rt = _runtime
    if rt is None:
        log.warning("scheduled tournament %s fired with no scheduler running here", tournament_id)
        return
    await rt.scheduler.fire(tournament_id)


class TournamentScheduler:
    def __init__(
        self,
        service: TableService,
        database_url: str,
        *,
        runner_factory: Callable[[], TournamentRunner] | None = None,
        publishers: dict[str, Publisher] | None = None,
        owner: str | None = None,
        lease_ttl: timedelta = LEASE_TTL,
    ) -> None:
        self.service = service
        self.url = sync_url(database_url)
        self.runner_factory = runner_factory or (lambda: TournamentRunner(service))
        self.publishers = publishers if publishers is not None else {}
        self.owner = owner or f"{uuid.uuid4().hex[:12]}"
        self.lease_ttl = lease_ttl
        self.scheduler: AsyncIOScheduler | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.fired: list[int] = []  # tournament ids run by this scheduler (for status and tests)

    @property
    def active(self) -> bool:
        return self.scheduler is not None

    def _new_scheduler(self) -> AsyncIOScheduler:
        return AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=self.url, tablename=JOBS_TABLE,
                                                     engine_options=_engine_options(self.url))},
            job_defaults={"misfire_grace_time": MISFIRE_GRACE_S, "coalesce": COALESCE, "max_instances": 1},
            timezone=UTC,
        )

    async def start(self) -> bool:
        """Take the lease and start, or stay on standby; either way keep trying in the background.
        True when this process now runs the scheduler."""
        await self._try_take()
        if self._keeper is None:
            self._keeper = asyncio.get_running_loop().create_task(self._keep())
        return self.active

    async def _try_take(self) -> None:
        global _runtime
        got = await repo.acquire_lease(self.service.store, LEASE_NAME, self.owner, self.lease_ttl)
        if got and self.scheduler is None:
            self.scheduler = self._new_scheduler()
            _runtime = _Runtime(self)
            self.scheduler.start()
            log.info("tournament scheduler %s holds the lease", self.owner)
        if got:
            await self.sync_jobs()
        elif not got and self.scheduler is not None:
            log.warning("tournament scheduler %s lost its lease; standing by", self.owner)
            self._stop_scheduler()

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ttl.total_seconds() / 3)
            try:
                await self._try_take()
            except Exception:
                log.exception("tournament scheduler lease check failed")

    def _stop_scheduler(self) -> None:
        global _runtime
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
            self.scheduler = None
        if _runtime is not None and _runtime.scheduler is self:
            _runtime = None

    async def shutdown(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
            self._keeper = None
        held = self.active
        self._stop_scheduler()
        if held:
            await repo.release_lease(self.service.store, LEASE_NAME, self.owner)

    # ------------------------------------------------------------------ jobs

    def job_id(self, tournament_id: int) -> str:
        return f"tournament-{tournament_id}"

    async def schedule(self, tenant: str, tournament_id: int, cron: str | None) -> datetime | None:
        """Run the tournament on this crontab from now on (None: no more). The tournament's
        ``schedule`` column is the truth: whichever process holds the lease turns it into a job
        (at once here, else within a third of the lease). Returns the next run when known here."""
        if cron is not None:
            parse_cron(cron)
        t = await manage.get(self.service, tenant, tournament_id)
        if t.status == "cancelled":
            raise manage.TournamentError(f"Tournament #{tournament_id} was cancelled.")
        await repo.set_schedule(self.service.store, tournament_id, cron)
        await self.sync_jobs()
        return self.next_run(tournament_id)

    async def sync_jobs(self) -> None:
        """Make the job store match the tournaments' schedules (only while holding the lease)."""
        sched = self.scheduler
        if sched is None:
            return
        wanted = {self.job_id(t.id or 0): t for t in await repo.tournaments(self.service.store)
                  if t.schedule and t.status != "cancelled"}
        for job in sched.get_jobs():
            t = wanted.get(job.id)
            if job.id.startswith("tournament-") and (t is None or job.name != _job_name(t)):
                sched.remove_job(job.id)
        for job_id, t in wanted.items():
            if sched.get_job(job_id) is None:
                try:
                    trigger = parse_cron(t.schedule or "")
                except manage.TournamentError:
                    log.warning("tournament %s has an unreadable schedule %r; not scheduled", t.id, t.schedule)
                    continue
                sched.add_job(run_scheduled, trigger, args=[t.id], id=job_id, name=_job_name(t), replace_existing=True)

    def next_run(self, tournament_id: int) -> datetime | None:
        if self.scheduler is None:
            return None
        job = self.scheduler.get_job(self.job_id(tournament_id))
        return None if job is None else job.next_run_time

    async def fire(self, template_id: int, *, now: datetime | None = None) -> int | None:
        """One run of a scheduled tournament: claim the slot, copy the template, play, publish.
        Returns the new tournament's id, or None when the slot was already run (or the template is gone)."""
        store = self.service.store
        template = await repo.tournament(store, template_id)
        if template is None or template.schedule is None:
            return None
        now = now or datetime.now(UTC)
        slot = _due_slot(template.schedule, now)
        # The slot claim never expires in practice (ten years): a slot runs once, whoever fires it.
        if not await repo.acquire_lease(store, f"fire:{template_id}:{slot.isoformat()}", self.owner,
                                        timedelta(days=3650), now=now):
            log.info("tournament %s slot %s already run", template_id, slot)
            return None
        tid = await manage.create(
            self.service, tenant=template.tenant, game=template.game, variant=template.variant,
            options=template.options, entrants=template.entrants, fmt=template.format, seats=template.seats,
            games_per_pairing=template.games_per_pairing, duplicate=template.duplicate,
            seed=_slot_seed(template.seed, slot), name=f"{template.name or template.game} {slot:%Y-%m-%d %H:%M}",
            concurrency=template.concurrency, spectate=template.spectate, platform=template.platform,
            place=template.place, created_by=template.created_by,
        )
        self.fired.append(tid)
        summary = await self.runner_factory().run(tid)
        run = await repo.tournament(store, tid)
        publish = self.publishers.get(template.platform)
        if publish is not None and run is not None:
            try:
                await publish(run, summary)
            except Exception:
                log.exception("could not post the leaderboard of tournament %s", tid)
        return tid


def _engine_options(url: str) -> dict[str, Any]:
    # The bot's own writes hold SQLite's lock for moments; wait for them as the store does, not 5 s.
    return {"connect_args": {"timeout": 30}} if url.startswith("sqlite") else {"pool_pre_ping": True}


def _job_name(t: TournamentRow) -> str:
    # The cron expression is part of the name, so a changed schedule replaces the job.
    return f"tournament {t.id} [{t.schedule}]"


def _due_slot(cron: str, now: datetime) -> datetime:
    """The latest time at or before ``now`` the crontab was due (the slot this firing serves)."""
    trigger = parse_cron(cron)
    start = now - timedelta(days=2)
    last = start
    nxt: Any = trigger.get_next_fire_time(None, start)
    while nxt is not None and nxt <= now:
        last = nxt
        nxt = trigger.get_next_fire_time(nxt, nxt + timedelta(seconds=1))
    return last.replace(second=0, microsecond=0)


def _slot_seed(seed: int, slot: datetime) -> int:
    from games.base import rng

    return rng(seed, "scheduled", slot.isoformat()).getrandbits(62)

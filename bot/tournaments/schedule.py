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
- Jobs name the module-level ``run_scheduled(tournament_id)`` (what the job store keeps: a
  reference and a plain argument), but no module state reaches the running bot: each
  scheduler runs its jobs through its own executor (``_FiringExecutor``), which calls the
  scheduler's ``fire`` instead. The firing itself (copy the template, play, publish) is the
  ``SlotRunner`` the owner hands in (``TournamentService.run_slot``), so this module knows
  neither tournaments' creation nor platforms.
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
import sys
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from apscheduler.executors.asyncio import AsyncIOExecutor
from apscheduler.executors.base import run_coroutine_job
from apscheduler.job import Job
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from sqlalchemy.engine import make_url

from bot.tournaments.cron import parse_cron
from bot.tournaments.errors import TournamentError
from bot.tournaments.spec import status_of
from storage import tournaments as repo
from storage.engine import plan_engine
from storage.ports import UnitsOfWork
from storage.tables import TournamentRow, TournamentStatus

log = logging.getLogger(__name__)

MISFIRE_GRACE_S = 6 * 3600
COALESCE = True
LEASE_NAME = "tournament-scheduler"
LEASE_TTL = timedelta(seconds=60)
JOBS_TABLE = "apscheduler_jobs"

SlotRunner = Callable[[TournamentRow, datetime], Awaitable[int | None]]
"""Plays one due slot of a scheduled tournament (the template row, the slot's time); returns the new run's id."""


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


async def run_scheduled(tournament_id: int) -> None:
    """What stored jobs name. Each scheduler runs its jobs through its own executor, which calls
    its ``fire`` instead; this is only reached when a job is run outside one, and does nothing."""
    log.warning("scheduled tournament %s fired outside a tournament scheduler; ignored", tournament_id)


@dataclass(frozen=True)
class _Firing:
    """The stored job as ``run_coroutine_job`` reads it, with the scheduler's own ``fire`` as its function."""

    id: str
    name: str
    misfire_grace_time: int | None
    func: Callable[..., Awaitable[int | None]]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def __str__(self) -> str:
        return self.name


class _FiringExecutor(AsyncIOExecutor):  # type: ignore[misc]  # APScheduler 3 ships no types
    """APScheduler's asyncio executor, with misfire handling and events unchanged, running every job
    as ``fire(tournament_id)`` of the scheduler that owns it."""

    def __init__(self, fire: Callable[[int], Awaitable[int | None]]) -> None:
        super().__init__()
        self._fire = fire
        self.detach = False  # True: a shutdown leaves firings in flight to finish (lease lost, not stopping)
        self.stopping = False

    def shutdown(self, wait: bool = True) -> None:
        if self.detach:
            self._pending_futures: set[asyncio.Future[Any]] = set()
            return
        self.stopping = True
        super().shutdown(wait)

    async def _run(self, template_id: int) -> int | None:
        """A firing; one the stop cancels ends quietly (its run's games resume on the next start),
        where APScheduler would log the cancellation as the job's error with a traceback."""
        try:
            return await self._fire(template_id)
        except asyncio.CancelledError:
            if not self.stopping:
                raise
            log.info("tournament %s: its firing stopped with the bot; its games resume on the next start",
                     template_id)
            return None

    def _do_submit_job(self, job: Job, run_times: list[datetime]) -> None:
        firing = _Firing(job.id, job.name, job.misfire_grace_time, self._run, tuple(job.args), dict(job.kwargs))

        def callback(f: asyncio.Future[Any]) -> None:
            self._pending_futures.discard(f)
            try:
                events = f.result()
            except BaseException:  # noqa: BLE001 - reported to APScheduler as the job's error
                self._run_job_error(job.id, *sys.exc_info()[1:])
            else:
                self._run_job_success(job.id, events)

        f = self._eventloop.create_task(run_coroutine_job(firing, job._jobstore_alias, run_times, self._logger.name))
        f.add_done_callback(callback)
        self._pending_futures.add(f)


class TournamentScheduler:
    """One process's scheduler: takes the database's lease or stands by; while it holds the lease,
    the job store mirrors the tournaments' ``schedule`` column and each firing claims its slot and
    hands it to ``run_slot``."""

    def __init__(
        self,
        store: UnitsOfWork,
        database_url: str,
        run_slot: SlotRunner,
        *,
        owner: str | None = None,
        lease_ttl: timedelta = LEASE_TTL,
    ) -> None:
        self.store = store
        self.url = sync_url(database_url)
        self.run_slot = run_slot
        self.owner = owner or f"{uuid.uuid4().hex[:12]}"
        self.lease_ttl = lease_ttl
        self.scheduler: AsyncIOScheduler | None = None
        self._executor: _FiringExecutor | None = None
        self._keeper: asyncio.Task[None] | None = None
        self.fired: list[int] = []  # tournament ids run by this scheduler (for status and tests)

    @property
    def active(self) -> bool:
        return self.scheduler is not None

    def job_count(self) -> int:
        """Jobs in the scheduler now (0 while standing by): the ``hushtable_scheduler_jobs`` gauge."""
        return 0 if self.scheduler is None else len(self.scheduler.get_jobs())

    def _new_scheduler(self) -> AsyncIOScheduler:
        self._executor = _FiringExecutor(self.fire)
        return AsyncIOScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=self.url, tablename=JOBS_TABLE,
                                                     engine_options=_engine_options(self.url))},
            executors={"default": self._executor},
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
        got = await repo.acquire_lease(self.store, LEASE_NAME, self.owner, self.lease_ttl)
        if got and self.scheduler is None:
            self.scheduler = self._new_scheduler()
            self.scheduler.start()
            log.info("tournament scheduler %s holds the lease", self.owner)
        if got:
            await self.sync_jobs()
        elif self.scheduler is not None:
            # A firing in flight finishes: its slot is claimed and its run holds a lease of its own.
            log.warning("tournament scheduler %s lost its lease; standing by", self.owner)
            self._stop_scheduler(detach=True)

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.lease_ttl.total_seconds() / 3)
            try:
                await self._try_take()
            except Exception as exc:  # the next round tries again
                log.error("tournament scheduler lease check failed: %s", type(exc).__name__)

    def _stop_scheduler(self, *, detach: bool = False) -> None:
        if self._executor is not None:
            self._executor.detach = detach
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=False)
            self.scheduler = None

    async def shutdown(self) -> None:
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
            self._keeper = None
        held = self.active
        self._stop_scheduler()
        if held:
            await repo.release_lease(self.store, LEASE_NAME, self.owner)

    # ------------------------------------------------------------------ jobs

    def job_id(self, tournament_id: int) -> str:
        return f"tournament-{tournament_id}"

    async def sync_jobs(self) -> None:
        """Make the job store match the tournaments' schedules (only while holding the lease)."""
        sched = self.scheduler
        if sched is None:
            return
        wanted = {self.job_id(t.id or 0): t for t in await repo.tournaments(self.store)
                  if t.schedule and status_of(t) is not TournamentStatus.CANCELLED}
        for job in sched.get_jobs():
            t = wanted.get(job.id)
            if job.id.startswith("tournament-") and (t is None or job.name != _job_name(t)):
                sched.remove_job(job.id)
        for job_id, t in wanted.items():
            if sched.get_job(job_id) is None:
                try:
                    trigger = parse_cron(t.schedule or "")
                except TournamentError:
                    log.warning("tournament %s has an unreadable schedule; not scheduled", t.id)
                    continue
                sched.add_job(run_scheduled, trigger, args=[t.id], id=job_id, name=_job_name(t), replace_existing=True)

    def next_run(self, tournament_id: int) -> datetime | None:
        if self.scheduler is None:
            return None
        job = self.scheduler.get_job(self.job_id(tournament_id))
        return None if job is None else job.next_run_time

    async def fire(self, template_id: int, *, now: datetime | None = None) -> int | None:
        """One run of a scheduled tournament: claim the slot, then ``run_slot`` plays and publishes it.
        Returns the new tournament's id, or None when the slot was already run (or the template is gone)."""
        template = await repo.tournament(self.store, template_id)
        if template is None or template.schedule is None or status_of(template) is TournamentStatus.CANCELLED:
            return None
        now = now or datetime.now(UTC)
        slot = _due_slot(template.schedule, now)
        # The slot claim never expires in practice (ten years): a slot runs once, whoever fires it.
        if not await repo.acquire_lease(self.store, f"fire:{template_id}:{slot.isoformat()}", self.owner,
                                        timedelta(days=3650), now=now):
            log.info("tournament %s slot %s already run", template_id, slot)
            return None
        tid = await self.run_slot(template, slot)
        if tid is not None:
            self.fired.append(tid)
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


def slot_seed(seed: int, slot: datetime) -> int:
    """The seed of a scheduled run: drawn from the template's seed and the slot, so a rerun of a slot deals alike."""
    from games.base import rng

    return rng(seed, "scheduled", slot.isoformat()).getrandbits(62)

"""The scheduler on a real SQLite file: a cron job missed while the bot was down fires after the
restart within the grace time (and not beyond it), and two schedulers on one database never run
the same job twice; the standby one takes over when the holder goes."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.core.messages import Place
from bot.tournaments import manage
from bot.tournaments.runner import TournamentRunner
from bot.tournaments.schedule import JOBS_TABLE, MISFIRE_GRACE_S, TournamentScheduler, sync_url
from bot.tournaments.service import TournamentService
from storage import tournaments as repo
from storage.tables import TournamentRow, TournamentStatus
from tests.tournaments.agents import open_service, spec

CRON = "0 3 * * *"


async def _template(service, **kw) -> int:
    return await manage.create(service, "console", spec(game="spy", variant="classic", entrants=["random", "random:b"],
                               seats=4, seed=1, name="nightly", platform="memory", place="arena", **kw))


async def _set_due(url: str, job_id: str, when: datetime) -> None:
    """What a bot down at the due time leaves behind: the stored next run time lies in the past."""
    sched = AsyncIOScheduler(jobstores={"default": SQLAlchemyJobStore(url=sync_url(url), tablename=JOBS_TABLE)},
                             timezone=UTC)
    sched.start(paused=True)
    sched.modify_job(job_id, next_run_time=when)
    sched.shutdown(wait=False)


@dataclass
class Poster:
    """Collects the boards a service posts (tournament id from the file name, and the text)."""

    posted: list[tuple[int, str]]

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None:
        self.posted.append((int(filename.removeprefix("tournament-").removesuffix(".png")), text))


async def _runs(service, template: int) -> list[TournamentRow]:
    return [t for t in await repo.tournaments(service.store) if t.id != template]


async def _wait_for(cond, timeout: float = 30.0) -> None:
    end = asyncio.get_running_loop().time() + timeout
    while not await cond():
        assert asyncio.get_running_loop().time() < end, "timed out"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize("late", [timedelta(hours=1), timedelta(seconds=MISFIRE_GRACE_S + 2 * 3600)])
async def test_a_missed_run_fires_after_a_restart_within_the_grace_time(tmp_path: Path, late: timedelta) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 't.db'}"
    # A daily run that was due ``late`` ago, while the bot was down.
    due = (datetime.now(UTC) - late).replace(second=0, microsecond=0)
    cron = f"{due.minute} {due.hour} * * *"
    async with open_service(url) as b:
        template = await _template(b.service)
        first = TournamentService(b.service)
        assert (await first.start_scheduler(url)).active
        next_run = await first.schedule("console", template, cron)
        assert next_run is not None and next_run > datetime.now(UTC) and (next_run.hour, next_run.minute) == \
            (due.hour, due.minute)
        assert first.scheduled_jobs() == 1
        await first.aclose()
    await _set_due(url, f"tournament-{template}", due)

    async with open_service(url) as b:  # the bot comes back
        posted: list[tuple[int, str]] = []

        service = TournamentService(b.service, runner_factory=lambda: TournamentRunner(b.service, rounds=20))
        service.attach("memory", Poster(posted))
        second = await service.start_scheduler(url)
        assert second.active
        try:
            if late.total_seconds() < MISFIRE_GRACE_S:
                await _wait_for(lambda: _done(b.service, template))
                await _wait_for(lambda: _true(bool(posted)))  # the board is drawn after the run
                (run,) = await _runs(b.service, template)
                assert run.status == TournamentStatus.FINISHED and run.name.startswith("nightly ")
                assert [p[0] for p in posted] == [run.id] and posted[0][1].startswith(f"Tournament #{run.id} nightly")
                assert len(await repo.ratings(b.service.store, run.id or 0)) == 2
            else:
                await asyncio.sleep(1.0)
                assert await _runs(b.service, template) == [] and posted == []  # too late: skipped
            nxt = second.next_run(template)
            assert nxt is not None and nxt > datetime.now(UTC)  # the job lives on for the next night
        finally:
            await second.shutdown()


async def _done(service, template: int) -> bool:
    runs = await _runs(service, template)
    return bool(runs) and all(r.status == TournamentStatus.FINISHED for r in runs)


async def test_two_schedulers_on_one_database_run_a_job_once(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 't.db'}"
    async with open_service(url) as a, open_service(url) as b:
        template = await _template(a.service)
        ttl = timedelta(seconds=3)  # renewed every second, also on a busy machine
        svc_one = TournamentService(a.service, runner_factory=lambda: TournamentRunner(a.service, rounds=20))
        svc_two = TournamentService(b.service, runner_factory=lambda: TournamentRunner(b.service, rounds=20))
        one = await svc_one.start_scheduler(url, owner="one", lease_ttl=ttl)
        two = await svc_two.start_scheduler(url, owner="two", lease_ttl=ttl)
        assert one.active and not two.active  # the second stands by
        try:
            # Scheduled from the standby process: stored, and the holder makes the job on its next round.
            assert await svc_two.schedule("console", template, CRON) is None
            await _wait_for(lambda: _true(one.next_run(template) is not None), timeout=5)
            assert one.scheduler is not None
            one.scheduler.modify_job(f"tournament-{template}", next_run_time=datetime.now(UTC))
            await _wait_for(lambda: _done(a.service, template))
            # The run is marked finished before ``fire`` returns and records it: wait for the record too.
            await _wait_for(lambda: _true(bool(one.fired or two.fired)), timeout=10)
            assert len(await _runs(a.service, template)) == 1 and len(one.fired) == 1
            # Even fired by hand on the other process, the same due slot does not run twice.
            assert await two.fire(template) is None
            assert len(await _runs(a.service, template)) == 1 and two.fired == []
            # The holder goes away: the standby takes the lease over and the job with it.
            await one.shutdown()
            await _wait_for(lambda: _true(two.active), timeout=20)
            assert two.next_run(template) is not None
        finally:
            await one.shutdown()
            await two.shutdown()


async def test_a_stop_ends_a_firing_in_flight_quietly(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """SIGTERM can land while a firing plays its slot: the firing is cancelled with the bot and says so
    in one info line; APScheduler logs no error and no traceback."""
    url = f"sqlite+aiosqlite:///{tmp_path / 't.db'}"
    started, finished = asyncio.Event(), asyncio.Event()

    async def slow(_template: TournamentRow, _slot: datetime) -> int | None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.set()
        return None

    async with open_service(url) as b:
        template = await _template(b.service)
        await repo.set_schedule(b.service.store, template, CRON)
        sched = TournamentScheduler(b.service.store, url, slow, owner="one")
        caplog.set_level(logging.DEBUG)
        try:
            assert await sched.start()
            await _wait_for(lambda: _true(sched.next_run(template) is not None), timeout=10)
            assert sched.scheduler is not None
            sched.scheduler.modify_job(f"tournament-{template}", next_run_time=datetime.now(UTC))
            await asyncio.wait_for(started.wait(), 10)
        finally:
            await sched.shutdown()
        await asyncio.wait_for(finished.wait(), 10)
        for _ in range(5):
            await asyncio.sleep(0)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert "Traceback" not in caplog.text and "its firing stopped with the bot" in caplog.text


async def _true(x: bool) -> bool:
    return x


def test_the_job_store_url_keeps_sqlite_jobs_beside_the_log() -> None:
    # SQLite: a file of its own (a synchronous writer on the loop must not share the log's write lock).
    assert sync_url("sqlite+aiosqlite:////data/hushtable.db") == "sqlite:////data/hushtable.db.scheduler"
    # PostgreSQL: the project database itself, through the synchronous driver.
    assert sync_url("postgresql+asyncpg://u:p@db/hushtable") == "postgresql+psycopg://u:p@db/hushtable"

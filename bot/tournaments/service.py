"""TournamentService: tournaments as an application service beside the table service.

Created once by the startup point (``bot/app.py``) over the ``TableService``; the command
line uses it directly, chat adapters reach it through ``TournamentPort`` and attach their
``BoardPoster`` under their platform name when they attach. It owns the runs started in
this process, the scheduler (``serve``), and publishing: a finished run's leaderboard goes
to the poster of the tournament's platform, whoever started the run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from bot.core.intake import Origin
from bot.core.messages import Place
from bot.core.ports import TableHost
from bot.tournaments import board, manage
from bot.tournaments.errors import TournamentError
from bot.tournaments.port import Board, BoardPoster, TournamentPort
from bot.tournaments.ratings import Standing
from bot.tournaments.runner import HEADLESS, NullPlatform, RunBusy, RunSummary, TournamentRunner, run_lease
from bot.tournaments.schedule import LEASE_TTL, TournamentScheduler, slot_seed
from bot.tournaments.spec import TournamentSpec, spec_of, status_of
from models.agents import provenance
from storage import tournaments as repo
from storage.tables import MatchStatus, TournamentRow, TournamentStatus

log = logging.getLogger(__name__)

RunnerFactory = Callable[[], TournamentRunner]


class TournamentService:
    def __init__(self, tables: TableHost, *, runner_factory: RunnerFactory | None = None) -> None:
        self.tables = tables
        self.store = tables.store
        self.runner_factory: RunnerFactory = runner_factory or (lambda: TournamentRunner(tables))
        self.scheduler: TournamentScheduler | None = None
        self._posters: dict[str, BoardPoster] = {}
        self._runs: dict[int, asyncio.Task[None]] = {}
        # Matches nobody watches play on a quiet platform of their own, which must be attached for
        # their games to resume after a restart.
        if HEADLESS not in tables.platforms:
            tables.attach(NullPlatform())

    # ------------------------------------------------------------------ platforms

    def attach(self, platform: str, poster: BoardPoster) -> None:
        self._posters[platform] = poster

    def poster(self, platform: str) -> BoardPoster | None:
        return self._posters.get(platform)

    def entrant_choices(self) -> list[str]:
        return self.tables.agent_choices()

    def game_choices(self) -> dict[str, tuple[str, ...]]:
        return self.tables.game_choices()

    def is_admin(self, origin: Origin) -> bool:
        return origin.is_admin or origin.user.key in self.tables.settings.admins

    # ------------------------------------------------------------------ tournaments

    async def create(self, tenant: str, spec: TournamentSpec) -> TournamentRow:
        tid = await manage.create(self.tables, tenant, spec)
        if spec.schedule and self.scheduler is not None:
            await self.scheduler.sync_jobs()
        return await manage.get(self.tables, tenant, tid)

    async def get(self, tenant: str, tournament_id: int) -> TournamentRow:
        return await manage.get(self.tables, tenant, tournament_id)

    async def listing(self, tenant: str) -> list[TournamentRow]:
        return await repo.tournaments(self.store, tenant=tenant)

    async def cancel(self, tenant: str, tournament_id: int) -> TournamentRow:
        t = await manage.get(self.tables, tenant, tournament_id)
        if t.schedule:
            await repo.set_schedule(self.store, tournament_id, None)
        t = await manage.cancel(self.tables, tenant, tournament_id)
        if self.scheduler is not None:
            await self.scheduler.sync_jobs()
        return t

    async def match_count(self, tournament_id: int) -> int:
        return len(await repo.matches(self.store, tournament_id))

    async def schedule(self, tenant: str, tournament_id: int, cron: str | None) -> datetime | None:
        """Run the tournament on this crontab from now on (None: no more). The ``schedule`` column is
        the truth: whichever process holds the scheduler's lease turns it into a job (at once here,
        else within a third of the lease). Returns the next run when known here."""
        await manage.set_schedule(self.tables, tenant, tournament_id, cron)
        if self.scheduler is None:
            return None
        await self.scheduler.sync_jobs()
        return self.scheduler.next_run(tournament_id)

    def next_run(self, tournament_id: int) -> datetime | None:
        return self.scheduler.next_run(tournament_id) if self.scheduler is not None else None

    def scheduled_jobs(self) -> int:
        """Jobs in this process's scheduler (0 while standing by or off)."""
        return self.scheduler.job_count() if self.scheduler is not None else 0

    # ------------------------------------------------------------------ runs

    async def run(self, tenant: str, tournament_id: int, runner: TournamentRunner | None = None) -> RunSummary:
        """Play the tournament's remaining games here and now (the command line). The runner reads the
        tournament's row once, under its lease, and checks there that it is this tenant's and runnable."""
        manage.check_id(tournament_id)
        return await (runner or self.runner_factory()).run(tournament_id, tenant=tenant)

    async def start_run(self, tenant: str, tournament_id: int) -> None:
        t = await manage.get(self.tables, tenant, tournament_id)
        self._check_runnable(t)
        task = self._runs.get(tournament_id)
        if task is not None and not task.done():
            raise RunBusy(f"Tournament #{tournament_id} is already running.")
        if await repo.lease_held(self.store, run_lease(tournament_id)):
            raise RunBusy(f"Tournament #{tournament_id} is already being played by another run.")
        self._runs[tournament_id] = asyncio.get_running_loop().create_task(self._run_and_publish(tournament_id))

    def _check_runnable(self, t: TournamentRow) -> None:
        if status_of(t) in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            raise TournamentError(f"Tournament #{t.id} is {t.status}.")

    async def _run_and_publish(self, tournament_id: int) -> None:
        try:
            summary = await self.runner_factory().run(tournament_id)
        except TournamentError as exc:
            log.warning("tournament %s did not run: %s", tournament_id, type(exc).__name__)
            return
        except Exception as exc:  # a background run: logged by type, the bot goes on
            log.error("tournament %s failed: %s", tournament_id, type(exc).__name__)
            return
        await self.publish(tournament_id, summary)

    async def wait_runs(self) -> None:
        """Wait for the runs started here (tests and shutdown)."""
        await asyncio.gather(*self._runs.values(), return_exceptions=True)

    async def publish(self, tournament_id: int, summary: RunSummary | None = None) -> None:
        """Post the tournament's leaderboard to its place through its platform's poster, if attached."""
        t = await repo.tournament(self.store, tournament_id)
        if t is None or not t.place:
            return
        poster = self._posters.get(t.platform)
        if poster is None:
            return
        b = await self._board(t)
        if b is None:
            return
        try:
            await poster.post_board(Place.from_key(t.platform, t.place), b.text, b.png, b.filename)
        except Exception as exc:  # the platform said no: the board stays available on request
            log.warning("could not post the leaderboard of tournament %s: %s", tournament_id, type(exc).__name__)

    async def progress(self, tenant: str, tournament_id: int) -> str:
        t = await manage.get(self.tables, tenant, tournament_id)
        ms = await repo.matches(self.store, tournament_id)
        done = sum(1 for m in ms if m.status == MatchStatus.FINISHED)
        failed = sum(1 for m in ms if m.status == MatchStatus.FAILED)
        parts = [manage.describe(t), f"{done}/{len(ms)} games played" + (f", {failed} failed" if failed else "")]
        nxt = self.next_run(tournament_id)
        if nxt is not None:
            parts.append(f"next run {nxt:%Y-%m-%d %H:%M} UTC")
        return "; ".join(parts) + "."

    async def board(self, tenant: str, tournament_id: int) -> Board | None:
        return await self._board(await manage.get(self.tables, tenant, tournament_id))

    async def standings(self, t: TournamentRow) -> list[Standing]:
        """The stored standings, without intervals when too few deal groups were played."""
        return await manage.standings(self.store, t)

    async def _board(self, t: TournamentRow) -> Board | None:
        rows = await self.standings(t)
        if not rows:
            return None
        png = await asyncio.to_thread(board.chart_png, t, rows)
        return Board(board.text_table(t, rows) + await self.sources(t), png, f"tournament-{t.id}.png")

    async def sources(self, t: TournamentRow) -> str:
        """Where the entrants' moves came from (model, specialist, fallback...), per agent and role."""
        tallies = provenance.tally(await repo.agent_prompts(self.store, t.id or 0))
        return "\nWhere the moves came from\n" + provenance.render(tallies) if tallies else ""

    # ------------------------------------------------------------------ the scheduler

    async def run_slot(self, template: TournamentRow, slot: datetime) -> int | None:
        """One firing of a scheduled tournament: a fresh copy (new seed from the slot), played, published."""
        spec = spec_of(template).replace(
            seed=slot_seed(template.seed, slot), schedule=None,
            name=f"{template.name or template.game} {slot:%Y-%m-%d %H:%M}")
        try:
            tid = await manage.create(self.tables, template.tenant, spec)
        except TournamentError as exc:  # the configuration changed under the template
            log.warning("scheduled tournament %s could not be copied: %s", template.id, type(exc).__name__)
            return None
        summary = await self.runner_factory().run(tid)
        await self.publish(tid, summary)
        return tid

    async def start_scheduler(self, database_url: str, *, owner: str | None = None,
                              lease_ttl: timedelta = LEASE_TTL) -> TournamentScheduler:
        """Start this process's scheduler (lease-guarded: it may stand by)."""
        self.scheduler = TournamentScheduler(self.store, database_url, self.run_slot, owner=owner, lease_ttl=lease_ttl)
        await self.scheduler.start()
        return self.scheduler

    async def recover(self) -> int:
        """Clean what killed runs left behind in tournaments nobody is running now."""
        cleaned = 0
        for t in await repo.tournaments(self.store, status=TournamentStatus.RUNNING):
            cleaned += await self.runner_factory().recover(t.id or 0)
        return cleaned

    async def serve(self, database_url: str) -> None:
        """Run beside the chat adapters until cancelled (the startup point gathers it with them):
        clean up after killed runs, then the scheduler; an in-memory database has no schedules."""
        try:
            await self.recover()
        except Exception as exc:  # the games go on; the next start tries again
            log.error("tournament clean-up failed: %s", type(exc).__name__)
        try:
            sched = await self.start_scheduler(database_url)
        except ValueError as exc:
            log.warning("scheduled tournaments are off: %s", exc)
            return
        except Exception as exc:  # the games go on without schedules rather than the bot stopping
            log.error("the tournament scheduler could not start (%s); scheduled tournaments are off",
                      type(exc).__name__)
            return
        try:
            await asyncio.Event().wait()
        finally:
            await sched.shutdown()

    async def aclose(self) -> None:
        """Stop the scheduler and the runs started here (their games resume on the next start)."""
        if self.scheduler is not None:
            await self.scheduler.shutdown()
        for task in self._runs.values():
            task.cancel()
        await self.wait_runs()
        self._runs.clear()


def describe(t: TournamentRow) -> str:
    return manage.describe(t)



if TYPE_CHECKING:

    def _the_service_is_a_port(service: TournamentService) -> TournamentPort:
        return service  # mypy fails here the day the service and the protocol disagree

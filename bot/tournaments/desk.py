"""The tournament commands every chat platform shares: admins only, per tenant.

A platform's handler decodes its payload into an ``intake.Origin`` (who, where, which
tenant, the platform's admin verdict for that tenant) and calls one method here; it renders the returned
``DeskReply`` (text to the author, and for a leaderboard the board to post with its
chart). Runs started here go on in the background; the live status message and the
final leaderboard are posted to the place the tournament was created in, through the
platform's ``BoardPoster``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import weakref
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Protocol

from bot.core.intake import Origin
from bot.core.messages import Place
from bot.core.service import TableService
from bot.tournaments import board, manage
from bot.tournaments.formats import Format
from bot.tournaments.runner import RunSummary, TournamentRunner
from bot.tournaments.schedule import TournamentScheduler
from storage import tournaments as repo
from storage.tables import MatchStatus, TournamentRow, TournamentStatus

log = logging.getLogger(__name__)

NOT_ADMIN = "Only server admins can manage tournaments."
P = ParamSpec("P")


@dataclass(frozen=True)
class Board:
    text: str
    png: bytes
    filename: str = board.CHART_NAME


@dataclass(frozen=True)
class DeskReply:
    text: str
    ok: bool = True
    board: Board | None = None


class BoardPoster(Protocol):
    """A platform's way to post a leaderboard with its chart attached to a place."""

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None: ...


def _desk_command(
    fn: Callable[Concatenate[TournamentDesk, Origin, P], Coroutine[Any, Any, DeskReply]],
) -> Callable[Concatenate[TournamentDesk, Origin, P], Coroutine[Any, Any, DeskReply]]:
    """A chat command of the desk: admins of the tenant only, and a refused tournament
    operation (`manage.TournamentError`) is the reply, never an exception."""

    async def command(self: TournamentDesk, o: Origin, /, *args: P.args, **kwargs: P.kwargs) -> DeskReply:
        if not self.is_admin(o):
            return DeskReply(NOT_ADMIN, ok=False)
        try:
            return await fn(self, o, *args, **kwargs)
        except manage.TournamentError as exc:
            return DeskReply(str(exc), ok=False)

    functools.update_wrapper(command, fn)
    return command


class TournamentDesk:
    def __init__(self, service: TableService, scheduler: TournamentScheduler | None = None,
                 runner: type[TournamentRunner] = TournamentRunner) -> None:
        self.service = service
        self.scheduler = scheduler
        self.runner = runner
        self.posters: dict[str, BoardPoster] = {}
        self._runs: dict[int, asyncio.Task[None]] = {}
        if scheduler is not None:
            scheduler.publishers.setdefault("discord", self._publish)
            scheduler.publishers.setdefault("slack", self._publish)

    def attach(self, platform: str, poster: BoardPoster) -> None:
        self.posters[platform] = poster
        if self.scheduler is not None:
            self.scheduler.publishers[platform] = self._publish

    # ------------------------------------------------------------------ choices for autocomplete

    def entrant_choices(self) -> list[str]:
        return self.service.agent_choices()

    def game_choices(self) -> dict[str, tuple[str, ...]]:
        return self.service.game_choices()

    # ------------------------------------------------------------------ commands

    @_desk_command
    async def create(self, o: Origin, *, game: str, variant: str | None = None, entrants: list[str] | None = None,
                     fmt: str = Format.ROUND_ROBIN.value, seats: int | None = None, games: int = 1,
                     duplicate: bool = True, name: str = "", schedule: str | None = None,
                     spectate: bool = False, options: Mapping[str, Any] | None = None) -> DeskReply:
        tid = await manage.create(
            self.service, tenant=o.tenant, game=game, variant=variant, entrants=entrants or self.entrant_choices(),
            options=options, fmt=fmt, seats=seats, games_per_pairing=games, duplicate=duplicate, name=name,
            schedule=schedule, spectate=spectate, platform=o.place.platform, place=o.place.key,
            created_by=o.user.key)
        t = await manage.get(self.service, o.tenant, tid)
        if schedule and self.scheduler is not None:
            await self.scheduler.sync_jobs()
        n = len(await repo.matches(self.service.store, tid))
        return DeskReply(f"Created tournament {manage.describe(t)}; {n} games. Run it with the run command"
                         + (" or wait for its schedule." if schedule else "."))

    @_desk_command
    async def schedule(self, o: Origin, tournament_id: int, cron: str) -> DeskReply:
        expr = None if cron.strip().lower() in ("off", "none", "") else cron
        if self.scheduler is not None:
            nxt = await self.scheduler.schedule(o.tenant, tournament_id, expr)
        else:
            if expr is not None:
                from bot.tournaments.schedule import parse_cron

                parse_cron(expr)
            await manage.get(self.service, o.tenant, tournament_id)
            await repo.set_schedule(self.service.store, tournament_id, expr)
            nxt = None
        if expr is None:
            return DeskReply(f"Tournament #{tournament_id} is no longer scheduled.")
        when = f" Next run: {nxt:%Y-%m-%d %H:%M} UTC." if nxt else ""
        return DeskReply(f"Tournament #{tournament_id} runs on '{expr}' (UTC); the leaderboard is posted here after "
                         f"each run.{when}")

    @_desk_command
    async def run(self, o: Origin, tournament_id: int) -> DeskReply:
        t = await manage.get(self.service, o.tenant, tournament_id)
        if t.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            return DeskReply(f"Tournament #{tournament_id} is {t.status}.", ok=False)
        task = self._runs.get(tournament_id)
        if task is not None and not task.done():
            return DeskReply(f"Tournament #{tournament_id} is already running.", ok=False)
        self._runs[tournament_id] = asyncio.get_running_loop().create_task(self._run(tournament_id))
        return DeskReply(f"Tournament #{tournament_id} started; its status is kept up to date in this channel.")

    async def _run(self, tournament_id: int) -> None:
        try:
            summary = await self.runner(self.service).run(tournament_id)
            t = await repo.tournament(self.service.store, tournament_id)
            if t is not None:
                await self._publish(t, summary)
        except Exception:
            log.exception("tournament %s failed", tournament_id)

    async def wait_runs(self) -> None:
        """Wait for the runs started here (tests and shutdown)."""
        await asyncio.gather(*self._runs.values(), return_exceptions=True)

    @_desk_command
    async def status(self, o: Origin, tournament_id: int | None = None) -> DeskReply:
        if tournament_id is None:
            rows = await repo.tournaments(self.service.store, tenant=o.tenant)
            return DeskReply("\n".join(manage.describe(t) for t in rows[-10:]) or "No tournaments here yet.")
        t = await manage.get(self.service, o.tenant, tournament_id)
        ms = await repo.matches(self.service.store, tournament_id)
        done = sum(1 for m in ms if m.status == MatchStatus.FINISHED)
        failed = sum(1 for m in ms if m.status == MatchStatus.FAILED)
        nxt = self.scheduler.next_run(tournament_id) if self.scheduler is not None else None
        parts = [manage.describe(t), f"{done}/{len(ms)} games played" + (f", {failed} failed" if failed else "")]
        if nxt is not None:
            parts.append(f"next run {nxt:%Y-%m-%d %H:%M} UTC")
        return DeskReply("; ".join(parts) + ".")

    @_desk_command
    async def cancel(self, o: Origin, tournament_id: int) -> DeskReply:
        t = await manage.get(self.service, o.tenant, tournament_id)
        if t.schedule and self.scheduler is not None:
            await self.scheduler.schedule(o.tenant, tournament_id, None)
        await manage.cancel(self.service, o.tenant, tournament_id)
        return DeskReply(f"Tournament #{tournament_id} cancelled: no new games start; running ones finish.")

    @_desk_command
    async def leaderboard(self, o: Origin, tournament_id: int) -> DeskReply:
        t = await manage.get(self.service, o.tenant, tournament_id)
        b = await self.board(t)
        if b is None:
            return DeskReply(f"Tournament #{tournament_id} has no standings yet ({t.status}).", ok=False)
        return DeskReply(b.text, board=b)

    async def board(self, t: TournamentRow) -> Board | None:
        rows = board.standings_of(await repo.ratings(self.service.store, t.id or 0))
        if not rows:
            return None
        png = await asyncio.to_thread(board.chart_png, t, rows)
        return Board(board.text_table(t, rows), png, f"tournament-{t.id}.png")

    async def _publish(self, t: TournamentRow, summary: RunSummary) -> None:
        poster = self.posters.get(t.platform)
        b = await self.board(t)
        if poster is None or b is None or not t.place:
            return
        await poster.post_board(Place.from_key(t.platform, t.place), b.text, b.png, b.filename)

    def is_admin(self, o: Origin) -> bool:
        return o.is_admin or o.user.key in self.service.settings.admins


_desks: weakref.WeakKeyDictionary[Any, TournamentDesk] = weakref.WeakKeyDictionary()


def desk_for(service: Any) -> TournamentDesk:
    """The one desk of a TableService, shared by every platform of the process (Discord and
    Slack registrations, the scheduler started by the startup point)."""
    desk = _desks.get(service)
    if desk is None:
        desk = _desks[service] = TournamentDesk(service)
    return desk


async def start_scheduler(service: Any, database_url: str) -> TournamentScheduler:
    """Start the tournament scheduler for this service (lease-guarded) and hand it to the desk;
    call once from the startup point after the platforms are attached."""
    desk = desk_for(service)
    sched = TournamentScheduler(service, database_url, publishers={p: desk._publish for p in desk.posters})
    desk.scheduler = sched
    for p in ("discord", "slack", *desk.posters):
        sched.publishers[p] = desk._publish
    await sched.start()
    return sched


async def serve_scheduler(service: Any, database_url: str) -> None:
    """Run the tournament scheduler beside the chat adapters until cancelled (the startup
    point gathers it with them); an in-memory database has no schedules."""
    try:
        sched = await start_scheduler(service, database_url)
    except ValueError as exc:
        log.warning("scheduled tournaments are off: %s", exc)
        return
    except Exception:  # the games go on without schedules rather than the bot stopping
        log.exception("the tournament scheduler could not start; scheduled tournaments are off")
        return
    try:
        await asyncio.Event().wait()
    finally:
        await sched.shutdown()

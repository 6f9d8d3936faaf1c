"""``hushtable tournament create|run|schedule|list|leaderboard``: tournaments from the command line.

The command line is the operator: it may name any tenant (``--tenant``, default
``console``). Entrants are still the configured agent names only. ``run`` plays the
tournament in this process with a progress bar and prints the leaderboard; a
scheduled tournament is run by the bot process that holds the scheduler's lease.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from bot.core.intake import IntakeError, operator_options
from bot.tournaments.errors import TournamentError
from models.cli_files import check_file_option

if TYPE_CHECKING:
    from bot.settings import Settings
    from bot.tournaments.manage import StorePlanning
    from bot.tournaments.service import TournamentService
    from storage.store import Store

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="AI-only tournaments: create, run, schedule, list, leaderboard.")

T = TypeVar("T")

ID_MAX = 2**63 - 1  # the largest id a database column holds
TOURNAMENT_ID = typer.Argument(..., min=1, max=ID_MAX, help="The tournament's id (see `list`).")


TENANT = typer.Option("console", "--tenant", help="Whose tournaments: console, discord:<guild id>, slack:<team id>.")
DATABASE = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL).")


def _with_service(database: str | None, work: Callable[[TournamentService], Awaitable[T]]) -> T:
    """Build what planning and playing need (the configured database, real agents; no chat platform), run
    ``work`` on the tournament service, close. Games of tournaments interrupted in an earlier run resume."""
    from bot.tournaments.wiring import tournament_service

    settings = _settings(database)

    async def go() -> T:
        async with tournament_service(settings) as tournaments:
            return await work(tournaments)

    return _answer(go())


def _with_store(database: str | None, work: Callable[[Store], Awaitable[T]]) -> T:
    """Run ``work`` on the configured database alone: the commands that only read rows build no agents,
    clients or clue reports (whose imports load the model stack: seconds for a listing)."""
    from bot.tournaments.wiring import tournament_store

    settings = _settings(database)

    async def go() -> T:
        async with tournament_store(settings) as store:
            return await work(store)

    return _answer(go())


def _with_planning(database: str | None, work: Callable[[StorePlanning], Awaitable[T]]) -> T:
    """Run ``work`` on the configured database and agent names alone (``create``, ``schedule``): planning
    builds no agents and starts no table, so it works beside a bot serving the same SQLite file."""
    from bot.tournaments.manage import StorePlanning
    from bot.tournaments.wiring import tournament_store

    settings = _settings(database)

    async def go() -> T:
        async with tournament_store(settings) as store:
            return await work(StorePlanning(store, settings.agent_list))

    return _answer(go())


def _settings(database: str | None) -> Settings:
    from bot.settings import Settings

    settings = Settings()
    if database:
        settings.database_url = database
    return settings


def _answer(go: Coroutine[Any, Any, T]) -> T:
    """Run a command's work; a tournament's refusal is one line on standard error and exit status 2."""
    try:
        return asyncio.run(go)
    except TournamentError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


@app.command()
def create(
    game: str = typer.Option(..., "--game", "-g", help="decrypto, spy or chameleon"),
    entrant: list[str] = typer.Option([], "--entrant", "-e", help="A configured agent name (repeatable; default: all)."),
    variant: str | None = typer.Option(None, "--variant", "-v"),
    fmt: str = typer.Option("round_robin", "--format", help="round_robin, or grid (the Decrypto benchmark's)."),
    seats: int | None = typer.Option(None, "--seats", "-n"),
    games_per_pairing: int = typer.Option(1, "--games", help="Repetitions of each pairing / rotation."),
    duplicate: bool = typer.Option(True, "--duplicate/--no-duplicate", help="Replay each deal with seats swapped."),
    seed: int | None = typer.Option(None, "--seed"),
    name: str | None = typer.Option(None, "--name", help="Its name (default: none; listings show the game)."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Games at once (default: sized to the machine)."),
    schedule: str | None = typer.Option(None, "--schedule", help="Crontab (UTC), e.g. '0 3 * * *'."),
    option: list[str] = typer.Option([], "--option", "-o", help="Game option KEY=VALUE (repeatable)."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Create a tournament (its matches are planned now, played by `run` or its schedule)."""
    from bot.tournaments import manage
    from bot.tournaments.spec import TournamentSpec
    from storage import tournaments as repo

    try:
        options = operator_options(option)
    except IntakeError as exc:
        raise typer.BadParameter(str(exc)) from None
    from games.text import name_problem

    if name is not None and (problem := name_problem(name, "A tournament's name")) is not None:
        raise typer.BadParameter(f"--name: {problem}")  # an explicit --name "" is a mistake, not "unnamed"
    spec = TournamentSpec(game=game, entrants=tuple(entrant), variant=variant, options=options, fmt=fmt, seats=seats,
                          games_per_pairing=games_per_pairing, duplicate=duplicate, seed=seed, name=name or "",
                          schedule=schedule, concurrency=concurrency, created_by="cli")

    async def work(planning: StorePlanning) -> str:
        tid = await manage.create(planning, tenant, spec)
        t = await manage.find(planning.store, tenant, tid)
        n = len(await repo.matches(planning.store, tid))
        return f"created {manage.describe(t)}; {n} games\n{why_games(t, n)}"

    typer.echo(_with_planning(database, work))


@app.command()
def run(
    tournament_id: int = TOURNAMENT_ID,
    concurrency: int | None = typer.Option(None, "--concurrency", help="Games at once (default: sized to the machine)."),
    chart: Path | None = typer.Option(None, "--chart", help="Also write the leaderboard chart (PNG) here."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Play the tournament's remaining games (resuming an interrupted run) and print the leaderboard."""
    check_file_option(chart, "--chart")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bot.tournaments import board
    from bot.tournaments.runner import Progress as RunProgress
    from bot.tournaments.runner import TournamentRunner

    async def work(tournaments: TournamentService) -> None:
        t = await tournaments.get(tenant, tournament_id)
        log_file, warnings = _logs_off_the_bar()
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[ahead]}"), TimeElapsedColumn()) as bar:
            task = bar.add_task(f"tournament #{t.id}", total=None, ahead="")

            async def on_progress(p: RunProgress) -> None:
                # Mid-run there is no interval yet: who is ahead on rating, never called the leader.
                lead = f"ahead so far: {p.ahead}" if p.ahead else ""
                if p.total and p.done + p.failed == p.total:
                    # The standings' bootstrap comes next: minutes for a large tournament, said rather than silent.
                    lead = "all played; fitting the standings (the interval's bootstrap)"
                bar.update(task, completed=p.done + p.failed, total=p.total,
                           ahead=lead + (f", {p.failed} failed" if p.failed else ""))

            runner = TournamentRunner(tournaments.tables, concurrency=concurrency, on_progress=on_progress)
            summary = await tournaments.run(tenant, t.id or 0, runner)
        logging.getLogger().removeHandler(warnings)
        if warnings.count:
            typer.echo(f"{warnings.count} warning(s) during the run (AI moves that timed out and the like) "
                       f"are in {log_file}", err=True)
        t = await tournaments.get(tenant, tournament_id)
        _print_board(t, list(summary.standings))
        typer.echo(await tournaments.sources(t), nl=False)
        if chart is not None:
            _write(chart, board.chart_png(t, summary.standings))
            typer.echo(f"chart written to {chart}")

    _with_service(database, work)


@app.command()
def schedule(
    tournament_id: int = TOURNAMENT_ID,
    cron: str = typer.Argument(..., help="Crontab in UTC, e.g. '0 3 * * *'; 'off' to stop."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Run the tournament on a schedule (a fresh copy each time), by the bot process holding the lease."""
    from bot.tournaments.cron import check_schedule

    expr = None if cron.strip().lower() == "off" else cron.strip()
    if expr is not None:
        try:
            check_schedule(expr)
        except TournamentError as exc:
            raise typer.BadParameter(str(exc)) from None

    from bot.tournaments import manage

    async def work(planning: StorePlanning) -> str:
        await manage.set_schedule(planning, tenant, tournament_id, expr)
        if expr is None:
            return f"tournament #{tournament_id} is no longer scheduled"
        return f"tournament #{tournament_id} scheduled '{expr}' (UTC); the running bot picks it up within a minute"

    typer.echo(_with_planning(database, work))


@app.command("list")
def list_(tenant: str = TENANT, database: str | None = DATABASE) -> None:
    """The tenant's tournaments."""
    from bot.tournaments.manage import describe
    from storage import tournaments as repo

    async def work(store: Store) -> list[str]:
        return [describe(t) for t in await repo.tournaments(store, tenant=tenant)]

    lines = _with_store(database, work)
    typer.echo("\n".join(lines) if lines else "no tournaments yet")


@app.command()
def leaderboard(
    tournament_id: int = TOURNAMENT_ID,
    fmt: str = typer.Option("table", "--format", help="table, csv or json"),
    out: Path | None = typer.Option(None, "--out", help="Write the csv/json here (default: standard output)."),
    chart: Path | None = typer.Option(None, "--chart", help="Also write the chart (PNG) here."),
    refit: bool = typer.Option(False, "--refit", help="Recompute the standings from the logged games first."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """The standings of a tournament: a table, CSV or JSON, and the chart."""
    from bot.tournaments import board, manage

    if fmt not in ("table", "csv", "json"):
        raise typer.BadParameter("--format must be table, csv or json")
    check_file_option(out, "--out")
    check_file_option(chart, "--chart")

    async def refit_standings(tournaments: TournamentService) -> None:
        from bot.tournaments.results import match_results
        from bot.tournaments.runner import TournamentRunner

        t = await tournaments.get(tenant, tournament_id)
        store = tournaments.store
        await TournamentRunner(tournaments.tables).save_standings(t, await match_results(store, t.id or 0, replay=True))

    async def work(store: Store) -> None:
        t = await manage.find(store, tenant, tournament_id)
        rows = await manage.standings(store, t)
        if not rows:
            raise TournamentError(f"Tournament #{t.id} has no standings yet ({t.status}).")
        if fmt == "table":
            _print_board(t, rows)
        else:
            text = board.to_csv(t, rows) if fmt == "csv" else board.to_json(t, rows)
            if out is None:
                typer.echo(text, nl=False)
            else:
                _write(out, text.encode("utf-8"))
        if chart is not None:
            _write(chart, board.chart_png(t, rows))
            typer.echo(f"chart written to {chart}", err=True)

    if refit:  # replays the logged games through the engines: the full service
        _with_service(database, refit_standings)
    _with_store(database, work)


class _Counted(logging.Handler):
    """Counts the warnings of a run, so the end can say how many went to the log file."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


def _logs_off_the_bar() -> tuple[Path, _Counted]:
    """While the progress bar runs, log records go to the log file only (printed, they scrolled over the
    bar); returns the file and a counter of the warnings."""
    from bot.ops.logs import setup_logging
    from bot.settings import Settings

    path = setup_logging(Settings(), console=True)
    counted = _Counted()
    logging.getLogger().addHandler(counted)
    return path, counted


def why_games(t: Any, n: int) -> str:
    """Where a tournament's game count comes from, in one line (``--games 2`` is 2 repetitions of every
    seating, not 2 games)."""
    from bot.tournaments.formats import Format, seat_shape

    e = len(t.entrants)
    reps = t.games_per_pairing
    shape = seat_shape(t.game, t.variant)
    if t.format == Format.GRID and shape is not None:
        each = f"{e}^{len(shape.roles)} = {n // max(reps, 1)} line-ups (every entrant in every role: {shape.describe()})"
    elif shape is not None:
        each = (f"{n // max(reps, 1)} seatings (every ordered choice of {len(shape.sides)} of the {e} entrants "
                f"for the sides {shape.describe()})" if e > 1 else "1 seating")
    else:
        each = f"{e} seatings (each of the {e} entrants starting once, the others in turn)"
    return f"why {n}: {each} x {reps} repetition{'s' if reps != 1 else ''} (--games {reps})."


def _write(path: Path, data: bytes) -> None:
    """Write a file the operator named, or refuse with one sentence (a folder, no permission, a full disk)."""
    from storage.outfiles import UnsafeOutput, open_named

    try:
        with open(open_named(path), "wb") as fh:  # never through a link planted at the path
            fh.write(data)
    except UnsafeOutput as exc:
        raise TournamentError(f"Could not write: {exc}.") from None
    except OSError as exc:
        raise TournamentError(f"Could not write {str(path)[:120]}: {exc.strerror or type(exc).__name__}.") from None


def _print_board(t: Any, rows: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from bot.tournaments import board
    from bot.tournaments.ratings import MIN_GROUPS

    table = Table(title=f"Tournament #{t.id} {t.name} — {t.game} ({t.variant})".replace("  ", " "))
    for col in ("#", "entrant", "rating", "95% interval", "games", "per role (games)"):
        table.add_column(col, justify="right" if col in ("#", "rating", "games") else "left")
    for r in rows:
        cells = board.role_cells(t.game, r.roles).values()
        roles = "\n".join(f"{board.role_name(role)} ({board.games_in(r, role)}): {cell}"
                          for role, cell in zip(r.roles, cells, strict=True))
        interval = f"[{r.lo:.1f}, {r.hi:.1f}]" if r.has_interval else "–"
        table.add_row(str(r.rank), r.entrant, f"{r.mu:.1f}", interval, str(r.games), roles)
    if rows and not any(r.has_interval for r in rows):
        table.caption = f"Interval: {board.NO_INTERVAL_TEXT} (at least {MIN_GROUPS} deal groups)."
    else:
        table.caption = f"{board.verdict(rows)}\nRating: openskill mean; {board.INTERVAL_TEXT}.".strip()
    Console(width=160).print(table)

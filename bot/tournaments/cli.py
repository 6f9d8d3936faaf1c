"""``hushtable tournament create|run|schedule|list|leaderboard``: tournaments from the command line.

The command line is the operator: it may name any tenant (``--tenant``, default
``console``). Entrants are still the configured agent names only. ``run`` plays the
tournament in this process with a progress bar and prints the leaderboard; a
scheduled tournament is run by the bot process that holds the scheduler's lease.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from bot.core.intake import IntakeError, operator_options

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="AI-only tournaments: create, run, schedule, list, leaderboard.")

T = TypeVar("T")

TENANT = typer.Option("console", "--tenant", help="Whose tournaments: console, discord:<guild id>, slack:<team id>.")
DATABASE = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL).")


def _with_app(database: str | None, work: Callable[[Any], Awaitable[T]]) -> T:
    """Build the bot's service (real agents, the configured database), run ``work``, close."""
    from bot.app import build_app
    from bot.core.memory import MemoryPlatform
    from bot.settings import Settings
    from bot.tournaments.manage import TournamentError
    from bot.tournaments.runner import HEADLESS

    settings = Settings()
    if database:
        settings.database_url = database

    async def go() -> T:
        bot = await build_app(settings)
        # Tournaments run here post nowhere: a quiet in-memory platform stands for their place,
        # so games interrupted in an earlier run resume (the service resumes attached platforms).
        bot.service.attach(MemoryPlatform(name=HEADLESS))
        await bot.service.start()
        try:
            return await work(bot.service)
        finally:
            await bot.aclose()

    try:
        return asyncio.run(go())
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
    name: str = typer.Option("", "--name"),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Games at once (default: sized to the machine)."),
    schedule: str | None = typer.Option(None, "--schedule", help="Crontab (UTC), e.g. '0 3 * * *'."),
    option: list[str] = typer.Option([], "--option", "-o", help="Game option KEY=VALUE (repeatable)."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Create a tournament (its matches are planned now, played by `run` or its schedule)."""
    from bot.tournaments import manage
    from storage import tournaments as repo

    try:
        options = operator_options(option)
    except IntakeError as exc:
        raise typer.BadParameter(str(exc)) from None

    async def work(service: Any) -> str:
        tid = await manage.create(service, tenant=tenant, game=game, entrants=entrant or service.agent_choices(),
                                  variant=variant, options=options, fmt=fmt, seats=seats,
                                  games_per_pairing=games_per_pairing, duplicate=duplicate, seed=seed, name=name,
                                  schedule=schedule, concurrency=concurrency, created_by="cli")
        t = await repo.tournament(service.store, tid)
        n = len(await repo.matches(service.store, tid))
        assert t is not None
        return f"created {manage.describe(t)}; {n} games"

    typer.echo(_with_app(database, work))


@app.command()
def run(
    tournament_id: int = typer.Argument(..., help="The tournament's id (see `list`)."),
    concurrency: int | None = typer.Option(None, "--concurrency", help="Games at once (default: sized to the machine)."),
    chart: Path | None = typer.Option(None, "--chart", help="Also write the leaderboard chart (PNG) here."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Play the tournament's remaining games (resuming an interrupted run) and print the leaderboard."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from bot.tournaments import board, manage
    from bot.tournaments.runner import Progress as RunProgress
    from bot.tournaments.runner import TournamentRunner

    async def work(service: Any) -> None:
        t = await manage.get(service, tenant, tournament_id)
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[leader]}"), TimeElapsedColumn()) as bar:
            task = bar.add_task(f"tournament #{t.id}", total=None, leader="")

            async def on_progress(p: RunProgress) -> None:
                lead = f"leader: {p.leader}" if p.leader else ""
                bar.update(task, completed=p.done + p.failed, total=p.total,
                           leader=lead + (f", {p.failed} failed" if p.failed else ""))

            summary = await TournamentRunner(service, concurrency=concurrency, on_progress=on_progress).run(t.id or 0)
        t = await manage.get(service, tenant, tournament_id)
        _print_board(t, list(summary.standings))
        if chart is not None:
            chart.write_bytes(board.chart_png(t, summary.standings))
            typer.echo(f"chart written to {chart}")

    _with_app(database, work)


@app.command()
def schedule(
    tournament_id: int = typer.Argument(...),
    cron: str = typer.Argument(..., help="Crontab in UTC, e.g. '0 3 * * *'; 'off' to stop."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """Run the tournament on a schedule (a fresh copy each time), by the bot process holding the lease."""
    from bot.tournaments import manage
    from bot.tournaments.schedule import parse_cron
    from storage import tournaments as repo

    expr = None if cron.strip().lower() == "off" else cron
    if expr is not None:
        try:
            parse_cron(expr)
        except manage.TournamentError as exc:
            raise typer.BadParameter(str(exc)) from None

    async def work(service: Any) -> str:
        t = await manage.get(service, tenant, tournament_id)
        await repo.set_schedule(service.store, t.id or 0, expr)
        if expr is None:
            return f"tournament #{t.id} is no longer scheduled"
        return f"tournament #{t.id} scheduled '{expr}' (UTC); the running bot picks it up within a minute"

    typer.echo(_with_app(database, work))


@app.command("list")
def list_(tenant: str = TENANT, database: str | None = DATABASE) -> None:
    """The tenant's tournaments."""
    from bot.tournaments import manage
    from storage import tournaments as repo

    async def work(service: Any) -> list[str]:
        return [manage.describe(t) for t in await repo.tournaments(service.store, tenant=tenant)]

    lines = _with_app(database, work)
    typer.echo("\n".join(lines) if lines else "no tournaments yet")


@app.command()
def leaderboard(
    tournament_id: int = typer.Argument(...),
    fmt: str = typer.Option("table", "--format", help="table, csv or json"),
    out: Path | None = typer.Option(None, "--out", help="Write the csv/json here (default: standard output)."),
    chart: Path | None = typer.Option(None, "--chart", help="Also write the chart (PNG) here."),
    refit: bool = typer.Option(False, "--refit", help="Recompute the standings from the logged games first."),
    tenant: str = TENANT,
    database: str | None = DATABASE,
) -> None:
    """The standings of a tournament: a table, CSV or JSON, and the chart."""
    from bot.tournaments import board, manage
    from storage import tournaments as repo

    if fmt not in ("table", "csv", "json"):
        raise typer.BadParameter("--format must be table, csv or json")

    async def work(service: Any) -> None:
        t = await manage.get(service, tenant, tournament_id)
        if refit:
            from bot.tournaments.results import match_results
            from bot.tournaments.runner import TournamentRunner

            await TournamentRunner(service).save_standings(t, await match_results(service.store, t.id or 0))
        rows = board.standings_of(await repo.ratings(service.store, t.id or 0))
        if not rows:
            raise manage.TournamentError(f"Tournament #{t.id} has no standings yet ({t.status}).")
        if fmt == "table":
            _print_board(t, rows)
        else:
            text = board.to_csv(t, rows) if fmt == "csv" else board.to_json(t, rows)
            if out is None:
                typer.echo(text, nl=False)
            else:
                out.write_text(text, encoding="utf-8")
        if chart is not None:
            chart.write_bytes(board.chart_png(t, rows))
            typer.echo(f"chart written to {chart}", err=True)

    _with_app(database, work)


def _print_board(t: Any, rows: list[Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from bot.tournaments import board

    table = Table(title=f"Tournament #{t.id} {t.name} — {t.game} ({t.variant})".replace("  ", " "))
    for col in ("#", "entrant", "rating", "95% interval", "games", "per role"):
        table.add_column(col, justify="right" if col in ("#", "rating", "games") else "left")
    for r in rows:
        cells = board.role_cells(t.game, r.roles)
        roles = "\n".join(f"{role}: {cell}" for role, cell in cells.items())
        table.add_row(str(r.rank), r.entrant, f"{r.mu:.1f}", f"[{r.lo:.1f}, {r.hi:.1f}]", str(r.games), roles)
    Console(width=160).print(table)

"""Operator sub-commands: ``hushtable db copy`` and ``hushtable backup``.

Registered on the main command line by ``bot.cli`` with one ``register(app)`` line.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

db_app = typer.Typer(no_args_is_help=True, help="Work on the game log's database.")


def _default_url(url: str | None) -> str:
    if url:
        return url
    from bot.settings import Settings

    return Settings().database_url


@db_app.command("copy")
def db_copy(
    src: str = typer.Option(..., "--from", help="Source database URL (read only), e.g. sqlite:///hushtable.db"),
    dst: str = typer.Option(..., "--to", help="Empty destination database URL, e.g. postgresql://user:pw@host/hushtable"),
) -> None:
    """Copy a whole log (every table) to an empty database, then check counts and replay every game."""
    from bot.ops.dbcopy import CopyRefused, copy_log
    from bot.settings import Settings
    from storage.records import SchemaOutOfDate

    try:
        report = asyncio.run(copy_log(src, dst, configured=Settings().export_secret))
    except (CopyRefused, SchemaOutOfDate, ValueError) as exc:
        from bot.ops.masking import mask_passwords

        typer.echo(f"db copy: {mask_passwords(str(exc))}", err=True)
        raise typer.Exit(2) from None
    width = max(map(len, report.counts), default=0)
    for table, n in report.counts.items():
        typer.echo(f"{table:>{width}}: {n} row(s)")
    for table, (a, b) in report.mismatched.items():
        typer.echo(f"count mismatch in {table}: source {a}, destination {b}", err=True)
    for problem in report.replay.problems:
        typer.echo(problem, err=True)
    if not report.ok:
        raise typer.Exit(1)
    typer.echo(f"copied and verified: counts match, {report.replay.replayed} game(s) replayed")
    typer.echo(report.export_key)


def backup(
    out: Path = typer.Argument(..., dir_okay=False, help="The backup file to write (must not exist)."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """Back up a SQLite log while the bot runs (online backup API), replay it, and say how to restore."""
    from bot.ops.backup import BackupFailed, BackupRefused, backup_export_key, restore_hint
    from bot.ops.backup import backup as run_backup
    from bot.settings import Settings

    url = _default_url(database)
    try:
        report = asyncio.run(run_backup(url, out))
    except (BackupRefused, ValueError) as exc:  # ValueError: a URL that cannot be read
        typer.echo(f"backup: {exc}", err=True)
        raise typer.Exit(2) from None
    except BackupFailed as exc:
        typer.echo(f"backup: {exc}; nothing was written", err=True)
        raise typer.Exit(1) from None
    for problem in report.problems:
        typer.echo(problem, err=True)
    if not report.ok:
        raise typer.Exit(1)
    typer.echo(f"backed up to {out}; {report.replayed} game(s) replayed from the backup")
    typer.echo(backup_export_key(url, out, Settings().export_secret))
    typer.echo(restore_hint(url, out))


def register(app: typer.Typer) -> None:
    """Add ``db`` and ``backup`` to the main command line."""
    app.add_typer(db_app, name="db")
    app.command("backup")(backup)

"""Operator sub-commands for people's data: ``hushtable data export|forget --member PLATFORM:ID``
and ``hushtable audit``.

Registered on the main command line by ``bot.cli`` with one ``register(app)`` line. Each opens
an existing log (a missing SQLite file is one sentence, never a new empty log) and is audited
as the operator's (``cli:<login>``).
"""

from __future__ import annotations

import asyncio
import getpass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from storage.store import Store

data_app = typer.Typer(no_args_is_help=True, help="One member's data: export it, or erase it (forget).")

_MEMBER = typer.Option(..., "--member", help="The member as PLATFORM:ID, e.g. discord:123456789.")
_DATABASE = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL).")


def operator() -> str:
    """Who runs a command-line export or erasure, as the audit names them (``cli:<login>``)."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _member(text: str) -> str:
    from storage.people import BadMember, parse_member

    try:
        return parse_member(text)
    except BadMember as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


async def _open(database: str | None) -> Store:
    from bot.settings import Settings
    from storage.store import Store

    return await Store.open(database or Settings().database_url, must_exist=True)


@data_app.command("export")
def data_export(
    member: str = _MEMBER,
    out: Path = typer.Option(..., "--out", dir_okay=False, help="The JSON file to write (must not exist)."),
    database: str | None = _DATABASE,
) -> None:
    """Write everything stored about one member (games and seats, moves and texts, study answers) as JSON."""
    key = _member(member)
    if out.exists():
        typer.echo(f"error: --out {out} exists already; give a new file", err=True)
        raise typer.Exit(2)
    from bot.core.privacy import member_export

    async def go() -> bytes:
        store = await _open(database)
        try:
            return await member_export(store, key, actor=operator())
        finally:
            await store.aclose()

    body = asyncio.run(go())
    out.write_bytes(body)
    typer.echo(f"wrote {out} ({len(body)} bytes)")


@data_app.command("forget")
def data_forget(member: str = _MEMBER, database: str | None = _DATABASE) -> None:
    """Erase one member: ids and names unlinked, their words replaced, study answers removed; games still replay."""
    key = _member(member)
    from bot.core.privacy import finish_pending, forget

    async def go() -> str:
        store = await _open(database)
        try:
            report = await forget(store, key, actor=operator())
            await finish_pending(store)
        finally:
            await store.aclose()
        lines = [report.sentence()]
        if report.not_replaying:
            lines.append("these games no longer replay to their stored outcome: "
                         + ", ".join(f"#{g}" for g in report.not_replaying))
        if not report.scrubbed:
            lines.append("the database's free space could not be scrubbed now (readers kept it busy); run it again")
        return "\n".join(lines)

    typer.echo(asyncio.run(go()))


def audit(
    limit: int = typer.Option(50, "--limit", min=1, max=10000, help="How many entries, newest first."),
    database: str | None = _DATABASE,
) -> None:
    """The audit of exports, data requests and erasures: who, when, what scope, how many rows (never content)."""
    from storage.people import audit_log

    async def go() -> list[str]:
        store = await _open(database)
        try:
            entries = await audit_log(store, limit=limit)
        finally:
            await store.aclose()
        return [f"{e.at.isoformat(timespec='seconds')}  {e.actor}  {e.action}  {e.scope}  {e.rows} row(s)" for e in entries]

    lines = asyncio.run(go())
    typer.echo("\n".join(lines) if lines else "nothing audited yet")


def register(app: typer.Typer) -> None:
    """Add ``data`` and ``audit`` to the main command line."""
    app.add_typer(data_app, name="data")
    app.command("audit")(audit)

"""``hushtable stats`` and ``hushtable import ...``: the research commands.

Registered in ``bot/cli.py`` with one ``app.add_typer(research_app)`` line; the
commands here are thin: reading files and the database, then calling the pure
parts (``games.metrics``, ``bot.research.decrypto_fair``). Heavy imports (the
database layer) happen inside the commands, so ``hushtable --help`` stays quick.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import typer

app = typer.Typer(add_completion=False)
import_app = typer.Typer(no_args_is_help=True, add_completion=False,
                         help="Bring recorded games into the log, played through our engines.")
app.add_typer(import_app, name="import")
eval_app = typer.Typer(no_args_is_help=True, add_completion=False, help="Agents replayed into recorded games.")
app.add_typer(eval_app, name="eval")

DATABASE_HELP = "Database URL (default: HUSHTABLE_DATABASE_URL)."
LENIENT_HELP = ("Apply the documented policy to turns past the end, over-long hints and invalid guesses "
                "(each marked with the game) instead of refusing the file.")


def _database(database: str | None) -> str:
    from bot.settings import Settings

    return database or Settings().database_url


def _fail(message: str, code: int = 2) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@app.command()
def stats(
    game: str | None = typer.Option(None, "--game", help="Only this game (decrypto, spy, chameleon)."),
    source: list[str] = typer.Option([], "--source", help="Only games from this platform: import, console, discord, slack... (repeatable)."),
    since: datetime | None = typer.Option(None, "--since", help="Only games finished on or after this date (UTC)."),
    as_json: bool = typer.Option(False, "--json", help="JSON instead of a table."),
    database: str | None = typer.Option(None, "--database", help=DATABASE_HELP),
) -> None:
    """The papers' metrics over finished games in the log (every registered game)."""
    import games
    from bot.research.logbook import LoggedGame, MissingDatabase, logged_games, open_existing
    from bot.research.stats import collect, render_table
    from models.agents.provenance import render as render_provenance
    from models.agents.provenance import tally

    if game is not None:
        try:
            game = games.get(game).id
        except KeyError as exc:
            typer.echo(f"error: --game: {exc.args[0]}", err=True)
            raise typer.Exit(2) from None
    url = _database(database)

    async def go() -> tuple[list[LoggedGame], list[tuple[str, Any]]]:
        store = await open_existing(url)
        try:
            found = await logged_games(store, game=game, sources=source, since=since)
            calls = [(c.agent_spec, c.prompt) for g in found for c in await store.agent_calls(g.id)]
            return found, calls
        finally:
            await store.aclose()

    try:
        logged, calls = asyncio.run(go())
    except MissingDatabase as exc:
        raise _fail(str(exc)) from None
    filters = {"game": game, "source": list(source), "since": since.isoformat() if since else None}
    report = collect(logged, filters)
    sources = tally(calls)  # where each AI move came from, per agent and role (models/agents/provenance.py)
    if as_json:
        out = report.to_json()
        out["decisions"] = [{"agent": a, "role": r, **t.to_json()} for (a, r), t in sources.items()]
        typer.echo(json.dumps(out, indent=2, sort_keys=False))
    else:
        typer.echo(render_table(report), nl=False)
        if sources:
            typer.echo("\nAI decisions by source (per agent and role)\n" + render_provenance(sources), nl=False)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


async def _imported_before(store: Any, part: str) -> set[tuple[str, int]]:
    """(file digest, game or episode number) of every game imported so far.

    Imports were once keyed by the file's digest and the game's place in it; a file imported
    then is recognised by the same pair now that the key is the game's content."""
    from bot.research.logbook import IMPORT_PLATFORM

    seen = set()
    for row in await store.games():
        found = (row.lobby or {}).get("import") if row.platform == IMPORT_PLATFORM else None
        if isinstance(found, dict) and isinstance(found.get("sha256"), str) and isinstance(found.get(part), int):
            seen.add((found["sha256"], found[part]))
    return seen


@import_app.command("record")
def import_record(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSON lines from `hushtable sim --json` (one or more games) or `hushtable export`."),
    database: str | None = typer.Option(None, "--database", help=DATABASE_HELP),
) -> None:
    """Log recorded games (ours: sim or export JSON lines) as games of the platform `import`.

    Every game is replayed first; if any game of the file is broken nothing is
    written. Importing the same file again writes nothing new.
    """
    from bot.research.logbook import log_record
    from bot.research.recordfile import InputRefused, content_key, read_input, split_games
    from games.base import ConfigError
    from games.record import RecordError, replay_record
    from storage.store import SeatRecord, Store
    from storage.tables import ActionSource, SeatKind

    try:
        text = read_input(file)
    except InputRefused as exc:
        raise _fail(str(exc)) from None
    found = split_games(text.splitlines())
    if not found:
        raise _fail(f"{file}: no game in the file")
    broken = []
    for g in found:
        problem = g.error
        if g.record is not None:
            try:
                replay_record(g.record)
            except (RecordError, ConfigError) as exc:  # ConfigError: a setup the game refuses (seats=10**9)
                problem = str(exc)
        if problem is not None:
            if len(found) == 1:
                raise _fail(f"{file}: {problem}; nothing imported")
            broken.append(g)
            typer.echo(f"{file}: game {g.index} (from line {g.line}): {problem}", err=True)
    if broken:
        raise _fail(f"{file}: {len(broken)} of {len(found)} game(s) cannot be read; nothing imported")
    digest = _digest(text.encode("utf-8"))
    url = _database(database)

    async def go() -> list[str]:
        store = await Store.open(url)
        lines = []
        try:
            before = await _imported_before(store, "game")
            for g in found:
                rec = g.record
                assert rec is not None
                if (digest, g.index) in before:
                    lines.append(f"game {g.index} (line {g.line}): already imported, skipped")
                    continue
                seats = [SeatRecord(i, SeatKind.AI, f"Player {i + 1}", agent_spec="recorded") for i in range(rec.seats)]
                logged = await log_record(
                    store, rec, seats=seats, place=file.name, place_name=f"{file.name} game {g.index}",
                    provenance={"format": "record", "file": str(file), "sha256": digest, "game": g.index, "line": g.line},
                    # Keyed by what the game plays, not by the file: the same game under another
                    # name, or inside another file, is recognised and not logged twice.
                    actor=f"import:{file.name}", key=f"import:record:game:{content_key(rec)}", source=ActionSource.AI,
                )
                where = f"game {g.index} (line {g.line})"
                if logged.game_id is None:
                    lines.append(f"{where}: already imported, skipped")
                else:
                    lines.append(f"{where}: logged as #{logged.game_id}, {logged.status}: {logged.summary}")
        finally:
            await store.aclose()
        return lines

    for line in asyncio.run(go()):
        typer.echo(line)


@import_app.command("decrypto-fair")
def import_decrypto_fair(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="A JSON list of episodes in the Decrypto benchmark's human-play format."),
    lenient: bool = typer.Option(False, "--lenient", help=LENIENT_HELP),
    database: str | None = typer.Option(None, "--database", help=DATABASE_HELP),
) -> None:
    """Log recorded Decrypto games, each played through our engine with its recorded deal.

    Episodes and turns are numbered from 0, as in the file. Without --lenient any
    issue refuses the whole file; with it, the policy in docs/protocols/decrypto.md
    applies and is recorded with each game. Nothing is written when the file is refused.
    """
    from bot.research import decrypto_fair as fair
    from bot.research.logbook import log_record
    from bot.research.recordfile import InputRefused, read_input
    from storage.store import SeatRecord, Store
    from storage.tables import SeatKind

    try:
        text = read_input(file)
    except InputRefused as exc:
        raise _fail(str(exc)) from None
    episodes, issues = fair.read(text)
    played = [fair.play(ep) for ep in episodes]
    issues += [i for p in played for i in p.issues]
    if len(issues) == 1 and issues[0].episode < 0:  # the file as a whole cannot be read
        raise _fail(f"{file}: {issues[0].detail}; nothing imported")
    for issue in issues:
        typer.echo(f"{file.name}: {issue.text(lenient)}", err=True)
    fatal = [i for i in issues if not i.fixable]
    if fatal:
        raise _fail(f"{file}: {len(fatal)} problem(s) no mode accepts; nothing imported")
    if issues and not lenient:
        raise _fail(f"{file}: {len(issues)} issue(s); nothing imported (--lenient applies the policy listed with each)")
    if not played:
        raise _fail(f"{file}: no episode in the file")
    digest = _digest(text.encode("utf-8"))
    url = _database(database)
    names = ("Encoder (recorded)", "Decoder (recorded)", "Interceptor (recorded)")

    async def go() -> list[str]:
        store = await Store.open(url)
        lines = []
        try:
            before = await _imported_before(store, "episode")
            for p in played:
                assert p.record is not None
                if (digest, p.episode.index) in before:
                    lines.append(f"episode {p.episode.index}: already imported, skipped")
                    continue
                logged = await log_record(
                    store, p.record, seats=[SeatRecord(i, SeatKind.HUMAN, n) for i, n in enumerate(names)],
                    place=file.name, place_name=f"{file.name} episode {p.episode.index}",
                    provenance=fair.provenance(p, str(file), digest, lenient),
                    actor=f"import:{file.name}#{p.episode.index}", key=f"import:{fair.FORMAT}:episode:{fair.content_key(p.episode)}",
                )
                marks = sum(1 for i in p.issues if i.fixable)
                where = f"episode {p.episode.index}"
                if logged.game_id is None:
                    lines.append(f"{where}: already imported, skipped")
                else:
                    note = f" ({marks} mark(s))" if marks else ""
                    lines.append(f"{where}: logged as #{logged.game_id}, {logged.status}{note}: {logged.summary}")
        finally:
            await store.aclose()
        return lines

    for line in asyncio.run(go()):
        typer.echo(line)


def _register_eval() -> None:
    from bot.research.decrypto_refine import command as refine_command
    from bot.research.embedding_baselines import command as embed_command
    from bot.research.human_replay import command

    eval_app.command("decrypto-human")(command)
    eval_app.command("decrypto-embed")(embed_command)
    eval_app.command("decrypto-refine")(refine_command)


_register_eval()

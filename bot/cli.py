"""The `hushtable` command line: run, sim, replay, export, doctor, worker."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import TracebackType

    from games.base import Game
    from games.play import Playthrough


# Failures with a sentence of their own when a command did not catch them itself (the
# commands check their input first; these are what the system answers underneath).
def _sentence(exc: BaseException) -> str | None:
    """One sentence for a failure the operator can act on, or None for an unexpected error."""
    import errno

    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to read"
    if isinstance(exc, MemoryError):
        return "the machine ran out of memory"
    if isinstance(exc, OverflowError):
        return "a number is too large"
    if isinstance(exc, UnicodeDecodeError):
        return "the input is not UTF-8 text"
    if isinstance(exc, OSError):
        what = exc.strerror or type(exc).__name__
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            what = "the disk is full"
        elif exc.errno == errno.EROFS:
            what = "the file system is read-only"
        return f"{exc.filename}: {what}" if exc.filename else what
    from models.bundled import DataPackageMissing

    if isinstance(exc, DataPackageMissing):  # the message names the package to install
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    from storage.engine import BadDatabaseURL

    if isinstance(exc, BadDatabaseURL):
        return str(exc)
    if isinstance(exc, DBAPIError):
        orig = exc.orig if exc.orig is not None else exc
        detail = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        return f"the database refused the work: {detail}"
    return None


def _settings_lines(exc: BaseException) -> list[str]:
    """The lines for settings that did not validate (or a `.env` that is no file), else nothing."""
    from pydantic import ValidationError

    from bot.settings import EnvFileRefused, Settings

    if isinstance(exc, EnvFileRefused):
        return [str(exc)]
    if isinstance(exc, ValidationError) and exc.title == Settings.__name__:
        from bot.startup import settings_errors

        return settings_errors(exc)
    return []


def _confine_caches() -> None:
    """Before any command imports a library that keeps a cache (matplotlib): that cache goes under the model
    cache, never into the home folder (`bot.settings.keep_caches_out_of_home`)."""
    from bot.settings import Settings, check_env_file, default_model_cache, keep_caches_out_of_home

    try:
        check_env_file(Path(".env"))  # reading a FIFO .env would block for ever; the command refuses it in one line
        cache = Settings().model_cache
    except Exception:  # noqa: BLE001 - the settings themselves are wrong: the command says so, in one line
        cache = default_model_cache()
    keep_caches_out_of_home(cache)


def _log_file() -> Path:
    try:
        from bot.settings import Settings, check_env_file

        check_env_file(Path(".env"))  # never block on a FIFO .env
        folder = Path(Settings().log_dir).expanduser()
    except Exception:  # the settings themselves may be what is wrong
        folder = Path(".hushtable") / "logs"
    return folder / "hushtable.log"


def _write_log(command: str, exc: BaseException) -> Path | None:
    """The failure's type and stack into the log file (no exception text: it may quote input)."""
    import traceback
    from datetime import UTC

    path = _log_file()
    lines = [f"{datetime.now(UTC).isoformat(timespec='seconds')} ERROR hushtable.cli: {command} failed"]
    seen: BaseException | None = exc
    while seen is not None:
        tb: TracebackType | None = seen.__traceback__
        lines.append(f"  {type(seen).__module__}.{type(seen).__qualname__}, raised at:")
        lines += ["  " + line for line in "".join(traceback.format_tb(tb)).rstrip().splitlines()]
        seen = seen.__cause__ or (None if seen.__suppress_context__ else seen.__context__)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
    except OSError:
        return None
    return path


def _research(name: str) -> Any:
    from bot.research.cli import app as research_app

    return getattr(typer.main.get_command(research_app), "commands")[name]  # noqa: B009 - a group's, by build


def _single(name: str, function: Callable[..., Any]) -> Any:
    one = typer.Typer(add_completion=False)
    one.command(name)(function)
    return typer.main.get_command(one)


def _tom() -> Any:
    from bot.research.tom import tom_cli

    return typer.main.get_command(tom_cli())


def _spygame() -> Any:
    from bot.research.spybias import spygame_cli

    return typer.main.get_command(spygame_cli())


def _deep() -> Any:
    from bot.research.deep import deep_command

    return _single("deep", deep_command())


def _sneak() -> Any:
    from bot.sneak import sneak_cli

    return typer.main.get_command(sneak_cli())


def _web() -> Any:
    from bot.web.cli import app as web_app

    return typer.main.get_command(web_app)


def _tournament() -> Any:
    from bot.tournaments.cli import app as tournament_app

    return typer.main.get_command(tournament_app)


# The research, SNEAK and tournament commands import the database layer, the evaluators and plotting
# (seconds of CPU): they are loaded when named, so `hushtable --help`, `run`, `sim` or `doctor` start
# without them. Each entry: its name, the line `--help` lists (a test checks it against the command's
# own), and how to build it.
LAZY: tuple[tuple[str, str, Callable[[], Any]], ...] = (
    ("stats", "The papers' metrics over finished games in the log (every registered game).",
     lambda: _research("stats")),
    ("import", "Bring recorded games into the log, played through our engines.", lambda: _research("import")),
    ("eval", "Agents replayed into recorded games.", lambda: _research("eval")),
    ("tom", "The papers' theory-of-mind experiments over logged games (live or imported).", _tom),
    ("spygame", "SpyGame's protocols that need no logged game (the paper's sections 3.3 and 4.1).", _spygame),
    ("deep", "The DEEP description test: aggressive and conservative descriptions rated 1-5 by a judge.", _deep),
    ("sneak", "SNEAK evaluation: utility and leakage of clues (logged play, validation, a benchmark).", _sneak),
    ("tournament", "AI-only tournaments: create, run, schedule, list, leaderboard.", _tournament),
    ("web", "The read-only web view of finished games: serve it, or print a signed link.", _web),
)


class LazyCommand(TyperCommand):
    """A command listed by name and help line only; the real one is built when it is named."""

    def __init__(self, name: str, short_help: str, load: Callable[[], Any]) -> None:
        super().__init__(name, help=short_help, short_help=short_help)
        self.load = load

    def invoke(self, ctx: Any) -> Any:  # never reached: the group swaps in the real command
        raise RuntimeError(f"{self.name} was not loaded")


class GuardedGroup(TyperGroup):
    """The root command: every failure ends in one line on standard error and a non-zero exit.

    A usage mistake is one line naming the command (exit 2); a failure the system
    explains (a file, the disk, the database, input nested too deeply) is one sentence
    (exit 1); anything else is an unexpected error: its type, with its stack written to
    the log file that the line names (exit 1). Never a traceback on the screen.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, short_help, load in LAZY:
            if name not in self.commands:
                self.add_command(LazyCommand(name, short_help, load))

    def loaded(self, name: str) -> Any:
        """The command called ``name``, built now if it was listed lazily."""
        command = self.commands.get(name)
        if isinstance(command, LazyCommand):
            command = self.commands[name] = command.load()
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and isinstance(command, LazyCommand):
            command = self.loaded(name)
        return name, command, rest

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, windows_expand_args, **extra)
        command = self._command_path(list(sys.argv[1:] if args is None else args))
        _confine_caches()
        try:
            rv = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except typer.TyperException as exc:  # click's errors: a usage mistake, a bad parameter...
            exit_code = int(getattr(exc, "exit_code", 2))
            ctx = getattr(exc, "ctx", None)
            if type(exc).__name__ == "NoArgsIsHelpError":  # typer has shown the help already
                if self.rich_markup_mode is None:
                    typer.echo(exc.format_message(), err=True)
            elif ctx is not None:
                typer.echo(f"{ctx.command_path}: {_one_line(exc.format_message())} (see `{ctx.command_path} --help`)", err=True)
            else:
                typer.echo(f"error: {_one_line(exc.format_message())}", err=True)
            sys.exit(exit_code)
        except typer.Abort:
            typer.echo("Aborted.", err=True)
            sys.exit(1)
        except Exception as exc:
            from storage.records import DatabaseMissing

            if isinstance(exc, DatabaseMissing):  # pointed at no log: the operator's mistake, said as stats says it
                typer.echo(f"error: {exc}", err=True)
                sys.exit(2)
            settings_lines = _settings_lines(exc)
            if settings_lines:  # a setting is wrong: one line each, as `hushtable run` says them
                for line in settings_lines:
                    typer.echo(f"error: {line}", err=True)
                sys.exit(2)
            sentence = _sentence(exc)
            log = _write_log(command, exc)
            where = f"; details in {log}" if log is not None else ""
            if sentence is not None:
                from bot.ops.masking import mask_passwords

                sentence = mask_passwords(sentence)
                typer.echo(f"error: {sentence}{where}", err=True)
            else:
                typer.echo(f"error: unexpected {type(exc).__name__}; this is a bug{where}", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)

    def _command_path(self, args: list[str]) -> str:
        """``hushtable db copy``: the command's names only; its arguments may hold a password or a path."""
        words = ["hushtable"]
        group: Any = self
        for token in args:
            sub = (group.loaded(token) if isinstance(group, GuardedGroup) else group.commands.get(token)) \
                if hasattr(group, "commands") else None
            if sub is None:
                break
            words.append(token)
            group = sub
        return " ".join(words)


def _one_line(text: str) -> str:
    return " ".join(text.split())


app = typer.Typer(no_args_is_help=True, add_completion=False, cls=GuardedGroup,
                  help="Hushtable: hidden-information word games for humans and AI.")


def _version_string() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return f"hushtable {dist_version('hushtable')}"
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "hushtable (not installed)"


def _print_version(value: bool) -> None:
    if value:
        typer.echo(_version_string())
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                      help="Print the version and exit."),
) -> None:
    """Hushtable: hidden-information word games for humans and AI."""


@app.command()
def version() -> None:
    """Print the version."""
    typer.echo(_version_string())


@app.command()
def run(
    hotseat: bool = typer.Option(False, "--hotseat", help="Console: several humans share one keyboard."),
    console: bool = typer.Option(False, "--console", help="Force the local console even when tokens are set."),
) -> None:
    """Run the bot: Discord and/or Slack when their tokens are set, else the local console."""
    from bot.app import main

    try:
        asyncio.run(main(force_console=console, hotseat=hotseat))
    except SystemExit as exc:  # a refused start: its line is out
        _leave_if_warming(exc.code)
        raise
    _leave_if_warming(0)


def _leave_if_warming(code: object) -> None:
    """End the process now with ``code`` (SystemExit's) when a vocabulary warm-up is still at work.

    The stop is complete (tables saved, store closed), or the start was refused after the agents were
    built. A warm-up still loading a model in a daemon thread is of no use now, and the embedder's exit
    hook would wait for that load (tens of seconds on a busy machine) before the process could end:
    flush what was written and leave now."""
    wiring = sys.modules.get("models.agents.wiring")  # never imported: no warm-up was started
    if wiring is None or not wiring.warming_up():
        return
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # SystemExit("hushtable: ..."): said the way the interpreter says it
        print(code, file=sys.stderr)
        status = 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


@app.command()
def sim(
    game: str = typer.Argument(..., help="The game's id, e.g. decrypto or spymasters (every registered game works)"),
    variant: str | None = typer.Option(None, "--variant", "-v"),
    seats: int | None = typer.Option(None, "--seats", "-n", help="Number of seats (default: the fewest the game allows)."),
    seed: int = typer.Option(0, "--seed", "-s"),
    as_json: bool = typer.Option(False, "--json", help="JSON lines: the game, each action and event (with its audience), the result."),
    option: list[str] = typer.Option([], "--option", "-o", help="Game option KEY=VALUE (repeatable), e.g. -o blank=true."),
) -> None:
    """Play a whole game with random players and print it."""
    import games
    from games.base import ConfigError
    from games.play import play_random, seat_names, transcript
    from games.record import to_lines

    try:
        engine = games.get(game)
        cfg = engine.make_config(variant, **_options(option))
    except (KeyError, ConfigError) as exc:
        raise typer.BadParameter(str(exc.args[0] if exc.args else exc)) from None
    lo, hi = engine.seat_range(cfg)
    n = seats if seats is not None else lo
    if not lo <= n <= hi:
        raise typer.BadParameter(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats")
    pt = play_random(engine, cfg, n, seed)
    if as_json:
        for line in to_lines(engine, cfg, n, seed, pt.actions, pt.events, pt.result, _owners(engine, cfg, n, seed, pt)):
            typer.echo(json.dumps(line))
    else:
        typer.echo(transcript(engine, pt.events, seat_names(n), pt.result), nl=False)


def _owners(engine: Game, cfg: Any, n: int, seed: int, pt: Playthrough) -> list[int]:
    """Which action caused each event (-1 for the deal), by replaying."""
    state, events = engine.new(cfg, n, seed)
    owners = [-1] * len(events)
    for i, (s, a) in enumerate(pt.actions):
        state, evs = engine.apply(state, s, a)
        owners += [i] * len(evs)
    return owners


def _options(pairs: list[str]) -> dict[str, Any]:
    from bot.core.intake import IntakeError, operator_options

    try:
        return operator_options(pairs)
    except IntakeError as exc:
        raise typer.BadParameter(str(exc)) from None


@app.command()
def replay(
    file: Path = typer.Argument(..., exists=True, dir_okay=False, help="JSON-lines records (sim --json, one or more games) or exported games."),
    show: bool = typer.Option(False, "--transcript", help="Print the whole transcript, not only the outcome."),
) -> None:
    """Replay recorded games through the engine and print each outcome (every game of the file, named)."""
    from bot.research.recordfile import FileGame, InputRefused, read_input, split_games
    from games.base import ConfigError
    from games.play import seat_names, transcript
    from games.record import RecordError, replay_record
    from storage.tables import GameStatus

    try:
        found = split_games(read_input(file).splitlines())
    except InputRefused as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if not found:
        typer.echo(f"{file}: no game in the file", err=True)
        raise typer.Exit(2)
    several = len(found) > 1
    if several:
        typer.echo(f"{file} holds {len(found)} games; replaying each.")

    def one(g: FileGame) -> int:
        where = f"{file}: game {g.index} (line {g.line})" if several else f"{file}"
        prefix = f"game {g.index} (line {g.line}): " if several else ""
        if g.record is None:
            typer.echo(f"{where}: {g.error}", err=True)
            return 2
        rec = g.record
        try:
            _, events, result = replay_record(rec)
        except (RecordError, ConfigError) as exc:
            typer.echo(f"{where}: {exc}", err=True)
            return 2
        names = seat_names(rec.seats)
        if show:
            typer.echo(transcript(rec.game, events, names, result), nl=False)
        head = f"{prefix}{rec.game.id} ({rec.config.variant}), {len(rec.actions)} actions"
        if result is None:
            if g.status == GameStatus.ABORTED:
                typer.echo(f"{head}: aborted (the table was stopped before the game ended).")
            else:
                typer.echo(f"{head}: the game is not over yet.")
            return 0
        won = ", ".join(names[s] for s in sorted(result.winners)) or "nobody"
        typer.echo(f"{head}: {result.summary} Winners: {won}.")
        if rec.result is not None and sorted(rec.result.get("winners", [])) != sorted(result.winners):
            typer.echo(f"warning: {prefix}the recorded result differs from the replayed one", err=True)
            return 1
        return 0

    code = max(one(g) for g in found)
    if code:
        raise typer.Exit(code)


@app.command()
def export(
    game: str | None = typer.Option(None, "--game", help="Only this game (decrypto, spy, chameleon)."),
    since: datetime | None = typer.Option(None, "--since", help="Only games that ended on or after this date."),
    fmt: str = typer.Option("jsonl", "--format", help="jsonl, csv or parquet (one file per table in the --out folder)"),
    out: Path | None = typer.Option(None, "--out", help="File to write (default: standard output); a folder for parquet."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
    raw_ids: bool = typer.Option(False, "--raw-ids", help="Do not pseudonymise user ids."),
) -> None:
    """Export ended games (finished and aborted) from the log (user ids pseudonymised by default)."""
    import games
    from bot.ops.privacy_cli import operator
    from bot.research.logbook import database_problem
    from bot.settings import Settings
    from storage.export import export_games
    from storage.outfiles import UnsafeOutput, open_named
    from storage.store import Store

    if fmt not in ("jsonl", "csv", "parquet"):
        raise typer.BadParameter("--format must be jsonl, csv or parquet")
    if fmt == "parquet" and (out is None or out.is_file()):
        typer.echo("error: --format parquet writes one file per table: give a folder with --out", err=True)
        raise typer.Exit(2)
    export_fmt: Literal["jsonl", "csv"] = "csv" if fmt == "csv" else "jsonl"
    if game is not None:
        try:
            game = games.get(game).id  # aliases (whoisspy) name the stored id
        except KeyError as exc:
            typer.echo(f"error: --game: {exc.args[0]}", err=True)
            raise typer.Exit(2) from None
    settings = Settings()
    url = database or settings.database_url
    # Opening a missing SQLite file would create an empty database and export nothing.
    problem = database_problem(url)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(2)

    async def go() -> tuple[int, int]:
        from bot.core.privacy import audit_export, research_filter

        store = await Store.open(url)
        try:
            # Only the words of members who consented to research (HUSHTABLE_RESEARCH_CONSENT).
            words = await research_filter(store, settings.research_consent)
            if fmt == "parquet" and out is not None:
                from bot.research.parquet import export_parquet

                n = await export_parquet(store, out, game=game, since=since, pseudonymise=not raw_ids,
                                         secret=settings.export_secret, withhold=words)
            else:
                # never through a link planted at --out (storage/outfiles.py)
                fh = open(open_named(out), "w", encoding="utf-8", newline="") if out else sys.stdout
                try:
                    n = await export_games(store, out=fh, fmt=export_fmt, game=game, since=since,
                                           pseudonymise=not raw_ids, secret=settings.export_secret, withhold=words)
                finally:
                    if out:
                        fh.close()
            await audit_export(store, actor=operator(), what=f"{fmt}, {game or 'every game'}"
                               f"{', raw ids' if raw_ids else ''}", games=n, withheld=words.total)
            return n, words.total
        finally:
            await store.aclose()

    try:
        n, withheld = asyncio.run(go())
    except UnsafeOutput as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"exported {n} game(s); {withheld} text(s) withheld from members who have not consented to research",
               err=True)


@app.command()
def doctor(
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """List what each registered game lacks, then the logged games that cannot go on: marked broken,
    or running with a log that no longer replays."""
    from bot.core.tables import ReplayFailed, rebuild
    from bot.gamecheck import report
    from bot.settings import Settings
    from storage.store import Store
    from storage.tables import GameStatus

    url = database or Settings().database_url

    async def go() -> list[str]:
        store = await Store.open(url, create=False, must_exist=True)
        try:
            lines = [f"#{r.id} {r.game} ({r.variant}) tenant={r.tenant or '-'} place={r.platform}:{r.place} "
                     f"broken: {r.status_reason or 'no reason saved'}"
                     for r in await store.games(status=GameStatus.BROKEN)]
            for glog in await store.unfinished_games():
                try:
                    rebuild(glog)
                except ReplayFailed as exc:
                    r = glog.row
                    lines.append(f"#{r.id} {r.game} ({r.variant}) tenant={r.tenant or '-'} "
                                 f"place={r.platform}:{r.place} running, will break on start: {exc}")
            return lines
        finally:
            await store.aclose()

    try:
        lines = asyncio.run(go())
    except Exception as exc:  # a missing or outdated database: say so, no traceback
        from bot.ops.masking import mask_passwords
        from bot.startup import shown_url

        reason = mask_passwords(" ".join(str(exc).split()))[:200]
        typer.echo(f"doctor: cannot read {shown_url(url)}: {type(exc).__name__}: {reason}", err=True)
        raise typer.Exit(2) from None
    for line in [*report(), *lines]:
        typer.echo(line)
    typer.echo(f"{len(lines)} game(s) need attention" if lines else "all games are healthy", err=True)
    if lines:
        raise typer.Exit(1)


@app.command()
def worker(
    model: str = typer.Option("default", "--model", "-m", help="'default' (bundled SmolLM2), 'gemma3-270m', a model folder, a .gguf file, or 'fake'."),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda, cuda:1, mps..."),
    dtype: str = typer.Option("float32", "--dtype", help="float32, bfloat16 or float16."),
    host: str = typer.Option("127.0.0.1", "--host"),
    port: int = typer.Option(8100, "--port", min=0, max=65535, help="0 picks a free port."),
    max_batch: int = typer.Option(8, "--max-batch", help="Most requests run in one batch (1 to 256)."),
    max_wait_ms: float = typer.Option(5.0, "--max-wait-ms", help="Longest a request waits for its batch to fill (0 to 10000)."),
) -> None:
    """Serve a model over HTTP for bots elsewhere (point HUSHTABLE_WORKER_URL at it)."""
    from bot.ops.logs import setup_process_logging
    from bot.settings import Settings
    from models.worker.cli import WorkerRefused, check_flags, run_worker
    from models.worker.server import UnsafeBind

    settings = Settings()
    token = settings.worker_token
    try:
        check_flags(model, dtype, max_batch, max_wait_ms)  # before logging starts: a refusal is the only line
    except WorkerRefused as e:
        typer.echo(f"Error: {e}.", err=True)
        raise typer.Exit(2) from None
    setup_process_logging(settings)
    try:
        run_worker(model, device, dtype, host, port, max_batch, max_wait_ms, token.get_secret_value() if token else None,
                   model_cache=str(settings.model_cache))
    except (UnsafeBind, WorkerRefused) as e:
        typer.echo(f"Error: {e}.", err=True)
        raise typer.Exit(2) from None


from bot.ops.cli import register as _register_ops  # noqa: E402 - sub-commands after the main ones

_register_ops(app)

from bot.ops.privacy_cli import register as _register_privacy  # noqa: E402 - sub-commands after the main ones

_register_privacy(app)


if __name__ == "__main__":  # python -m bot.cli
    app(prog_name="hushtable")

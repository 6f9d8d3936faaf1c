"""``hushtable sneak ...``: score logged clues, run the SNEAK benchmark, report, calibrate.

The operator may name evaluators and generators here (``--evaluator SPEC``);
chat never can. Models come from the same settings as the bot (worker URL,
device, model cache); the database from ``--database`` or the settings.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import typer

from models.eval.bench import DEFAULT_EVALUATORS, BenchConfig, BenchResult, Setting, method_order, run_bench
from models.eval.plot import Point, scatter
from models.eval.summary import PAPER_BASELINES, Row, render, to_csv, to_json

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="SNEAK evaluation: utility and leakage of clues (logged play and a benchmark).")


def _settings() -> Any:
    from bot.settings import Settings

    return Settings()


def _pool(settings: Any) -> Any:
    from models.client import ClientPool

    return ClientPool(settings.client_options())


def _secret(store: Any, settings: Any) -> str:
    """The export key (people appear by the same pseudonyms as in exports); refused with a sentence if unset."""
    from storage.export_secret import ExportSecretMissing, export_secret

    try:
        return export_secret(store.plan, settings.export_secret)
    except ExportSecretMissing as exc:
        raise typer.BadParameter(str(exc)) from None


def _embedder_for() -> Callable[[str], Any]:
    from models.worker.embedding_backend import embedder_for

    return embedder_for


class _Progress:
    """A rich progress bar per stage, on standard error."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=False)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _Progress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def __call__(self, stage: str, n: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
        self.bar.advance(self.tasks[stage], n)


def _tables(title: str, rows: list[Row], group: str, order: Callable[[str], Any] | None = None) -> str:
    return render(rows, title=title, group_name=group, order=order) if rows else f"{title}\n(no evaluations)"


T = TypeVar("T")


def _run_on_log(work: Coroutine[Any, Any, T]) -> T:
    """Run a command that reads the log; a missing database is a clear error, not a traceback."""
    from storage.store import DatabaseMissing

    try:
        return asyncio.run(work)
    except DatabaseMissing as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command()
def score(
    game: int | None = typer.Option(None, "--game", help="Only this game id."),
    since: datetime | None = typer.Option(None, "--since", help="Only games created on or after this date."),
    evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e", help="Evaluator spec (repeatable)."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """Score the logged clues, hints and descriptions not scored yet, then print the averages."""
    from models.eval.decoys import EmbeddingDecoys
    from models.eval.evaluators import resolve
    from models.eval.live import live_summary, score_games
    from storage.store import Store

    settings = _settings()
    embedder_for = _embedder_for()

    async def go() -> None:
        store = await Store.open(database or settings.database_url, must_exist=True)
        pool = _pool(settings)
        try:
            try:
                evs = [await resolve(s, client_for=pool.get, embedder_for=embedder_for) for s in evaluator]
            except ValueError as exc:
                raise typer.BadParameter(str(exc)) from None
            with _Progress() as progress:
                run = await score_games(store, evs, EmbeddingDecoys(embedder_for("minilm")), game_id=game, since=since,
                                        progress=lambda n, total: progress("score", n, total))
            typer.echo(f"{run.games} game(s), {run.instances} message(s); scored {run.scored} pair(s), stored "
                       f"{run.inserted}, already stored {run.skipped}, evaluation failures {run.failures}")
            ids = [game] if game is not None else None
            summary = await live_summary(store, secret=_secret(store, settings), game_ids=ids, since=since,
                                         evaluators=[e.spec for e in evs])
            typer.echo(_tables("\nBy game", summary.by_game, "Game"))
            typer.echo(_tables("\nBy player", summary.by_player, "Player"))
            typer.echo(_tables("\nBy role", summary.by_role, "Role"))
        finally:
            await pool.aclose()
            await store.aclose()

    _run_on_log(go())


def write_bench(res: BenchResult, out: Path) -> list[Path]:
    """Table (text), CSV, JSON and the scatter (PNG, SVG) into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"generator": res.config.generator, "evaluators": list(res.config.evaluators), "setting": res.config.setting,
            "cards": res.config.cards, "refine": res.config.refine, "instances": res.instances,
            "generation_failures": res.generation_failures, "seconds": {k: round(v, 1) for k, v in res.seconds.items()},
            "examples": res.examples, "errors": res.errors}
    paths = [out / "table.txt", out / "results.csv", out / "results.json"]
    paths[0].write_text(bench_text(res) + "\n", encoding="utf-8")
    paths[1].write_text(to_csv(res.rows), encoding="utf-8")
    paths[2].write_text(to_json(res.rows, res.verdicts, meta), encoding="utf-8")
    paths += scatter(res.points(), out / "utility_leakage",
                     title=f"SNEAK ({res.config.setting}): utility vs leakage, evaluator {res.summary_evaluator}")
    return paths


def bench_text(res: BenchResult) -> str:
    lines = [render(res.rows, title=f"SNEAK benchmark: generator {res.config.generator}, {res.instances} instances "
                    f"({res.config.setting}), generation parse failures {res.generation_failures}",
                    order=method_order)]
    lines.append("\nPaper, Table 2 (averaged over its three evaluators):")
    for name, ref in PAPER_BASELINES.items():
        x = ref.x100()
        lines.append(f"  {name:<16}" + "".join(f"{x[m]:8.2f}" for m in ("utility", "leakage", "soft", "binary")))
    if res.errors:
        lines.append("\nEvaluation failures (counted in the fail column), most common reasons:")
        lines += [f"  {n} x {reason}" for reason, n in res.errors.items()]
    lines.append("\nEvaluator validity (the paper's orderings of the reference baselines):")
    for v in res.verdicts:
        lines.append(f"  {v.evaluator}: {'VALID' if v.valid else 'NOT VALID'} — {v.text()}")
    return "\n".join(lines)


@app.command()
def bench(
    generator: str = typer.Option(..., "--generator", "-g", help="Agent spec that writes the messages (llm:..., embed:...)."),
    evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e", help="Evaluator spec (repeatable)."),
    cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
    setting: Setting = typer.Option(Setting.SNEAK, "--setting", help="sneak (12 words a card) or classic (16)."),
    refine: bool = typer.Option(False, "--refine", help="Recursive message refinement: a second, more indirect message."),
    out: Path = typer.Option(Path("sneak-bench"), "--out", help="Folder for the table, CSV, JSON and plot."),
) -> None:
    """The standalone SNEAK benchmark: every word of every card as the secret, with the reference baselines."""
    settings = _settings()
    embedder_for = _embedder_for()

    async def go() -> BenchResult:
        pool = _pool(settings)
        try:
            with _Progress() as progress:
                cfg = BenchConfig(generator=generator, evaluators=evaluator, cards=cards, setting=setting, refine=refine)
                return await run_bench(cfg, client_for=pool.get, embedder_for=embedder_for, progress=progress)
        finally:
            await pool.aclose()

    try:
        res = asyncio.run(go())
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    typer.echo(bench_text(res))
    paths = write_bench(res, out)
    typer.echo("\nwrote " + ", ".join(str(p) for p in paths))
    typer.echo("seconds: " + json.dumps({k: round(v, 1) for k, v in res.seconds.items()}))


@app.command()
def report(
    out: Path = typer.Option(Path("sneak-report"), "--out", help="Folder for the tables, CSV and plot."),
    since: datetime | None = typer.Option(None, "--since", help="Only games created on or after this date."),
    database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
) -> None:
    """Tables and the utility-leakage plot from stored evaluations: humans vs each agent, by game and role."""
    from models.eval.live import live_summary
    from storage.store import Store

    settings = _settings()

    async def go() -> Any:
        store = await Store.open(database or settings.database_url, must_exist=True)
        try:
            return await live_summary(store, secret=_secret(store, settings), since=since)
        finally:
            await store.aclose()

    summary = _run_on_log(go())
    text = "\n\n".join([_tables("By player (humans by pseudonym, agents by spec)", summary.by_player, "Player"),
                        _tables("By game", summary.by_game, "Game"), _tables("By role", summary.by_role, "Role")])
    typer.echo(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.txt").write_text(text + "\n", encoding="utf-8")
    (out / "by_player.csv").write_text(to_csv(summary.by_player), encoding="utf-8")
    (out / "report.json").write_text(to_json(summary.by_player, [], {"rows": summary.rows}), encoding="utf-8")
    evs = {r.evaluator for r in summary.by_player}
    ev = "average" if "average" in evs else (sorted(evs)[0] if evs else "")
    points = [Point(r.group, r.scores.x100()["leakage"], r.scores.x100()["utility"], r.scores.x100()["soft"])
              for r in summary.by_player if r.evaluator == ev and r.n]
    paths = scatter(points, out / "utility_leakage", title=f"SNEAK, live play: players (evaluator {ev})")
    typer.echo("\nwrote " + ", ".join(str(p) for p in [out / "report.txt", out / "by_player.csv", *paths]))


@app.command()
def calibrate(
    write: bool = typer.Option(False, "--write", help="Rewrite models/eval/data/embed_calibration.json."),
) -> None:
    """Refit the embedding evaluator's softmax temperatures (see models/eval/calibrate.py)."""
    from models.eval.calibrate import calibrate as fit

    result = fit(_embedder_for()("minilm"))
    typer.echo(json.dumps(result, indent=1))
    if write:
        path = Path(__file__).parent / "data" / "embed_calibration.json"
        path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        typer.echo(f"wrote {path}")

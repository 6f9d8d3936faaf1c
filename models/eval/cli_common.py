"""What the ``sneak`` commands share: their environment (``EvalEnv``), option checks, progress, tables and
the benchmark's files."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import typer

from models.eval.bench import BenchResult, method_order
from models.eval.generators import prompting
from models.eval.plot import scatter
from models.eval.summary import PAPER_BASELINES, Row, render, to_csv, to_json


@dataclass(frozen=True, slots=True)
class EvalEnv:
    """What the commands need from the outside: where the log is, the export key, and the model pool."""

    database_url: str
    export_secret: str | None
    pool: Callable[[], Any]  # a fresh models.client.ClientPool (its ``get`` resolves model specs; ``aclose``)
    research_consent: str = "opt-in"  # HUSHTABLE_RESEARCH_CONSENT: whose logged clues the study may show


def log_secret(store: Any, env: EvalEnv) -> str:
    """The export key (people appear by the same pseudonyms as in exports); refused with a sentence if unset."""
    from storage.export_secret import ExportSecretMissing, export_secret

    try:
        return export_secret(store.plan, env.export_secret)
    except ExportSecretMissing as exc:
        raise typer.BadParameter(str(exc)) from None


def read_deck(path: Path | None) -> list[tuple[str, list[str]]] | None:
    """A researcher's cards (card file or category-norms CSV, at least 12 words a card), or None."""
    if path is None:
        return None
    from games import decks
    from models.cli_files import read_input_option

    try:
        cards = [(c, list(w)) for c, w in decks.parse_cards(read_input_option(path, "--deck"), size=12)]
    except (OSError, decks.DeckError) as exc:
        raise typer.BadParameter(f"--deck: {exc}") from None
    if len(cards) > MAX_DECK_CARDS:  # each card is scored by every evaluator: hours, not a mistake to wait for
        raise typer.BadParameter(f"--deck: {len(cards)} cards; a deck holds at most {MAX_DECK_CARDS} (split it)")
    return cards


MAX_DECK_CARDS = 2000  # the paper's benchmark has 117 categories


def cores() -> int:
    """The CPU cores this process may run on (what an analysis's timing was measured with)."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def embedder_factory() -> Callable[[str], Any]:
    from models.worker.embedding_backend import embedder_for

    return embedder_for


class StageProgress:
    """A rich progress bar per stage, on standard error."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=Console(stderr=True), transient=False)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> StageProgress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def __call__(self, stage: str, n: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(stage, total=total)
        self.bar.advance(self.tasks[stage], n)


def tables(title: str, rows: list[Row], group: str, order: Callable[[str], Any] | None = None) -> str:
    return render(rows, title=title, group_name=group, order=order) if rows else f"{title}\n(no evaluations)"


T = TypeVar("T")


GAME_ID_MAX = 2**63 - 1  # the largest id a database column holds


def check_specs(specs: list[str]) -> None:
    """Refuse an evaluator temperature that is not a finite positive number, before any work."""
    from models.eval.spec import parse_spec

    for spec in specs:
        kind, _, params = parse_spec(spec)
        for name in ("t_cham", "t_ally") if kind == "embed" else ():
            if name not in params:
                continue
            try:
                value = float(params[name])
            except ValueError:
                value = math.nan
            if not math.isfinite(value) or value <= 0:
                raise typer.BadParameter(f"{name} in {spec!r} must be a positive number, not {params[name]!r}")


def check_folder(out: Path) -> None:
    """``--out`` must be a folder (or not exist yet), checked before any work."""
    if out.exists() and not out.is_dir():
        raise typer.BadParameter(f"--out {out} is a file; name a folder for the results")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise typer.BadParameter(f"--out {out}: {parent} is a file, not a folder")
            break


def run_with_models(env: EvalEnv, work: Callable[[Any, StageProgress], Coroutine[Any, Any, T]]) -> T:
    """Run ``work(client_for, progress)`` with a fresh model pool (closed after) and the stage progress shown;
    a spec, deck or card problem the work raises as ``ValueError`` is one sentence, not a traceback."""

    async def go() -> T:
        pool = env.pool()
        try:
            with StageProgress() as progress:
                return await work(pool.get, progress)
        finally:
            await pool.aclose()

    try:
        return asyncio.run(go())
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def run_on_log(work: Coroutine[Any, Any, T]) -> T:
    """Run a command that reads the log; a missing database is a clear error, not a traceback."""
    from storage.store import DatabaseMissing

    try:
        return asyncio.run(work)
    except DatabaseMissing as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def missing_line(missing: dict[str, int]) -> str:
    return ("Without a message (left out): " + ", ".join(f"{k} {v}" for k, v in missing.items())) if missing else ""


def write_bench(res: BenchResult, out: Path) -> list[Path]:
    """Table (text), CSV, JSON and the scatter (PNG, SVG) into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"generator": res.config.generator, "evaluators": list(res.config.evaluators), "setting": res.config.setting,
            "cards": res.config.cards, "deck": res.config.deck_name, "decoys": res.decoys_name,
            "baselines": res.config.baselines, "refine": res.config.refine, "instances": res.instances,
            "generation_failures": res.generation_failures, "missing_baselines": res.missing,
            "seconds": {k: round(v, 1) for k, v in res.seconds.items()}, "examples": res.examples,
            "errors": res.errors, "prompting": prompting(res.config.generator),
            "generations": "generations.jsonl"}
    paths = [out / "table.txt", out / "results.csv", out / "results.json", out / "generations.jsonl"]
    paths[0].write_text(bench_text(res) + "\n", encoding="utf-8")
    paths[1].write_text(to_csv(res.rows), encoding="utf-8")
    paths[2].write_text(to_json(res.rows, res.verdicts, meta), encoding="utf-8")
    # One line per instance: the message and the generator's raw output (CoT traces, SETS candidates and votes).
    paths[3].write_text("".join(json.dumps(g, ensure_ascii=False) + "\n" for g in res.generations), encoding="utf-8")
    points = res.points()
    if points:
        paths += scatter(points, out / "utility_leakage",
                         title=f"SNEAK ({res.config.setting}): utility vs leakage (0-100), evaluator "
                               f"{res.summary_evaluator}")
    return paths


def bench_text(res: BenchResult) -> str:
    lines = [render(res.rows, title=f"SNEAK benchmark: generator {res.config.generator}, {res.instances} instances "
                    f"({res.config.setting}; {res.config.deck_name}; decoys {res.decoys_name}; baselines "
                    f"{res.config.baselines}), generation parse failures {res.generation_failures}, scale 0-100; "
                    f"prompt {prompting(res.config.generator)}",
                    order=method_order)]
    if res.missing:
        lines.append("Baselines without a message (left out): " + ", ".join(f"{k} {v}" for k, v in res.missing.items()))
    lines.append("\nPaper, Table 2 (averaged over its three evaluators):")
    for name, ref in PAPER_BASELINES.items():
        x = ref.x100()
        lines.append(f"  {name:<16}" + "".join(f"{x[m]:8.2f}" for m in ("utility", "leakage", "soft", "binary")))
    if res.errors:
        lines.append("\nEvaluation failures (counted in the fail column), most common reasons:")
        lines += [f"  {n} x {reason}" for reason, n in res.errors.items()]
    lines.append("\nBaseline orderings per evaluator (point estimates on these cards; `hushtable sneak validate` gives "
                 "the verdict with intervals on held-back cards). An average has no verdict:")
    for v in res.verdicts:
        lines.append(f"  {v.evaluator}: {'orderings hold' if v.valid else 'orderings broken'} — {v.text()}")
    return "\n".join(lines)

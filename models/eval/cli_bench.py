"""The evaluators' validation and the standalone benchmark: ``sneak validate``, ``sneak bench``."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from models.cli_files import check_file_option
from models.eval.bench import DEFAULT_EVALUATORS, BaselineSource, BenchConfig, BenchResult, DecoyRule, Setting, run_bench
from models.eval.cli_common import (
    EvalEnv,
    StageProgress,
    bench_text,
    check_folder,
    check_specs,
    embedder_factory,
    read_deck,
    run_with_models,
    write_bench,
)


def register(app: typer.Typer, env: Callable[[], EvalEnv]) -> None:
    """Add this group's commands to ``app``; each reads its environment from ``env()`` when it runs."""

    @app.command()
    def validate(
        evaluator: list[str] = typer.Option(..., "--evaluator", "-e", help="Evaluator spec (repeatable)."),
        deck: Path | None = typer.Option(None, "--deck", help="Cards to validate on (card file or category-norms "
                                         "CSV); default: the bundled cards the temperatures were not fitted on."),
        cards: int | None = typer.Option(None, "--cards", min=2, help="Only the first N held-back cards (a look; "
                                         "--record refuses a partial run)."),
        seed: int = typer.Option(0, "--seed", help="Seed of the random baseline and the bootstrap."),
        write_record: bool = typer.Option(False, "--record", help="Keep each verdict in "
                                          "models/eval/data/validated.json (the bot's start reads it)."),
        out: Path | None = typer.Option(None, "--out", help="Also write the verdicts as JSON here."),
    ) -> None:
        """Do the evaluators reproduce the paper's baseline orderings on held-back cards? (per evaluator)"""
        from models.eval.validate import MIN_RECORD_CARDS, NotRecordable, held_back, other_decks, record, render, validate

        check_specs(evaluator)
        check_file_option(out, "--out")
        e = env()
        own = read_deck(deck)
        if write_record and cards:
            raise typer.BadParameter("--record keeps verdicts over every held-back card; drop --cards")
        if write_record and (n := len(held_back(own)[0])) < MIN_RECORD_CARDS:
            raise typer.BadParameter(f"--record needs at least {MIN_RECORD_CARDS} held-back cards; this deck has {n}")

        async def validated(client_for: Any, progress: StageProgress) -> Any:
            return await validate(evaluator, client_for=client_for, embedder_for=embedder_factory(), deck=own,
                                  deck_name=str(deck) if deck else "bundled cards not used for calibration",
                                  seed=seed, progress=progress, limit=cards)

        res = run_with_models(e, validated)
        typer.echo(render(res))
        if out is not None:
            out.write_text(json.dumps({"verdicts": [{"spec": v.spec, "valid": v.valid, "reason": v.reason(),
                                                     "means": v.means, "checks": [dataclasses.asdict(c) for c in v.checks]}
                                                    for v in res.verdicts], "examples": res.examples}, indent=1),
                           encoding="utf-8")
        for v in res.verdicts:
            for rec in other_decks(v.spec):
                if rec.get("deck_key") != res.deck_key:
                    typer.echo(f"(recorded for {v.spec} on {rec.get('deck')} [{rec.get('deck_key')}], "
                               f"{rec.get('cards')} cards: {'VALID' if rec.get('valid') else 'NOT VALID'})")
        if write_record:
            path = Path(__file__).parent / "data" / "validated.json"
            try:
                record(res, path)
            except NotRecordable as exc:
                raise typer.BadParameter(str(exc)) from None
            typer.echo(f"\nrecorded in {path} for deck {res.deck_key}")
        if not all(v.valid for v in res.verdicts):
            raise typer.Exit(1)

    @app.command()
    def bench(
        generator: str = typer.Option(..., "--generator", "-g",
                                      help="Agent spec that writes the messages (llm:..., embed:...)."),
        evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e",
                                            help="Evaluator spec (repeatable)."),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help="Cards (card file or category-norms CSV; default: "
                                         "the bundled cards)."),
        decoys: DecoyRule = typer.Option(DecoyRule.WORDNET, "--decoys", help="Decoy rule: wordnet (the paper's), "
                                         "embed (MiniLM-ranked broad terms) or llm (appendix C's prompt)."),
        baselines: BaselineSource = typer.Option(BaselineSource.WORDNET, "--baselines",
                                                 help="Reference baselines from WordNet (the paper's) or MiniLM's "
                                                 "nearest words."),
        setting: Setting = typer.Option(Setting.SNEAK, "--setting", help="sneak (12 words a card) or classic (16)."),
        refine: bool = typer.Option(False, "--refine",
                                    help="Recursive message refinement: a second, more indirect message."),
        out: Path = typer.Option(Path("sneak-bench"), "--out", help="Folder for the table, CSV, JSON and plot."),
    ) -> None:
        """The standalone SNEAK benchmark: every word of every card as the secret, with the reference baselines."""
        check_specs(evaluator)
        check_folder(out)
        e = env()
        embedder_for = embedder_factory()
        own = read_deck(deck)

        async def benched(client_for: Any, progress: StageProgress) -> BenchResult:
            cfg = BenchConfig(generator=generator, evaluators=evaluator, cards=cards, setting=setting,
                              refine=refine, deck=own, deck_name=str(deck) if deck else "bundled cards",
                              decoys=decoys, baselines=baselines)
            return await run_bench(cfg, client_for=client_for, embedder_for=embedder_for, progress=progress)

        res = run_with_models(e, benched)
        typer.echo(bench_text(res))
        paths = write_bench(res, out)
        typer.echo("\nwrote " + ", ".join(str(p) for p in paths))
        typer.echo("seconds: " + json.dumps({k: round(v, 1) for k, v in res.seconds.items()}))

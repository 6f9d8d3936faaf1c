"""The analyses over cards: ``sneak agreement``, ``similarity``, ``sweep``, ``bias``, ``relations``, ``report``,
``calibrate``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from typing import Any

import typer

from models.eval.baselines import Baseline
from models.eval.bench import method_order
from models.eval.cli_common import (
    EvalEnv,
    StageProgress,
    T,
    check_folder,
    check_specs,
    cores,
    embedder_factory,
    log_secret,
    missing_line,
    read_deck,
    run_on_log,
    run_with_models,
    tables,
)
from models.eval.instances import bench_instances
from models.eval.plot import Point, scatter
from models.eval.summary import render, to_csv, to_json


def register(app: typer.Typer, env: Callable[[], EvalEnv]) -> None:
    """Add this group's commands to ``app``; each reads its environment from ``env()`` when it runs."""

    def _analysis_cards(deck: Path | None, cards: int | None) -> list[tuple[str, list[str]]]:
        from games import decks

        own = read_deck(deck)
        chosen = own if own is not None else [(c, list(w)) for c, w in decks.cards()]
        return chosen[:cards] if cards else chosen

    def _analysis_run(work: Callable[[Any], Coroutine[Any, Any, T]], evaluators: list[str], seed: int) -> T:
        """Load the evaluators, then run ``work(scoring)``; a spec or card problem is one sentence."""
        from models.eval.analysis import make_scoring

        check_specs(evaluators)
        embedder_for = embedder_factory()

        async def scored(client_for: Any, progress: StageProgress) -> T:
            s = await make_scoring(evaluators, client_for=client_for, embedder_for=embedder_for, seed=seed,
                                   progress=progress)
            return await work(s)

        return run_with_models(env(), scored)

    def _save(out: Path, name: str, text: str, extra: list[Path] | None = None) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text + "\n", encoding="utf-8")
        typer.echo("\nwrote " + ", ".join(str(p) for p in [out / name, *(extra or [])]))

    def _human_agreement(database: str | None) -> str:
        """``agreement --human``: the stored study's answers against the evaluators' stored judgements."""
        from models.eval.human_agreement import NoAnswers, human_agreement, render
        from storage.store import Store

        e = env()

        async def go() -> str:
            store = await Store.open(database or e.database_url, must_exist=True)
            try:
                return render(await human_agreement(store))
            finally:
                await store.aclose()

        try:
            text = run_on_log(go())
        except NoAnswers as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(text)
        return text

    _GEN_HELP = "Agent spec that writes messages (repeatable; the three reference baselines are always scored)."
    _EV_HELP = "Evaluator spec (repeatable)."
    _DECK_HELP = "Cards (card file or category-norms CSV; default: the bundled cards)."

    @app.command()
    def agreement(
        generator: list[str] = typer.Option(["embed:minilm"], "--generator", "-g", help=_GEN_HELP),
        evaluator: list[str] = typer.Option(["embed:minilm", "embed:assoc"], "--evaluator", "-e", help=_EV_HELP),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help=_DECK_HELP),
        seed: int = typer.Option(0, "--seed"),
        out: Path = typer.Option(Path("sneak-agreement"), "--out", help="Folder for the text and the table."),
        human: bool = typer.Option(False, "--human", help="Instead: the clue-report evaluators against the human "
                                   "study's answers (/judge), per clue and kind of clue, from the database; the "
                                   "evaluators are those whose stored judgements the study's items carry."),
        database: str | None = typer.Option(None, "--database", help="With --human: database URL (default: "
                                            "HUSHTABLE_DATABASE_URL)."),
    ) -> None:
        """SNEAK 4.1: do the evaluators agree? Spread of scores and rank correlation of the methods. With --human:
        do they agree with people?"""
        from models.eval.analysis import agreement as agree
        from models.eval.analysis import agreement_text, messages_for, score_all

        check_folder(out)
        if human:
            _save(out, "human_agreement.txt", _human_agreement(database))
            return
        chosen = _analysis_cards(deck, cards)

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), generator, s)
            evals = await score_all(msgs, s)
            a = agree(evals)
            return "\n\n".join([render(a.rows, title=f"Per evaluator ({len(chosen)} cards, 12 words each, "
                                                       "WordNet decoys; 0-100)", order=method_order),
                                 agreement_text(a), missing_line(msgs.missing)]).strip()

        text = _analysis_run(work, evaluator, seed)
        typer.echo(text)
        _save(out, "agreement.txt", text)

    @app.command()
    def similarity(
        generator: str = typer.Option("embed:minilm", "--generator", "-g", help="Agent spec that writes messages."),
        evaluator: list[str] = typer.Option(["embed:minilm"], "--evaluator", "-e", help=_EV_HELP),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help=_DECK_HELP),
        seed: int = typer.Option(0, "--seed"),
        out: Path = typer.Option(Path("sneak-similarity"), "--out", help="Folder for the text."),
    ) -> None:
        """SNEAK 4.2: are cards of similar candidates harder? WordNet similarity against each card's scores."""
        from models.eval.analysis import messages_for, score_all, similarity_text
        from models.eval.analysis import similarity as sim

        check_folder(out)
        chosen = _analysis_cards(deck, cards)

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), [generator], s)
            evals = await score_all(msgs, s)
            parts = [similarity_text(sim(evals, s.wn, generator)),
                     "Beside it, the secret-synonym baseline (the same cards):",
                     similarity_text(sim(evals, s.wn, "secret-synonym")), missing_line(msgs.missing)]
            return "\n\n".join(parts).strip()

        text = _analysis_run(work, evaluator, seed)
        typer.echo(text)
        _save(out, "similarity.txt", text)

    @app.command()
    def sweep(
        generator: list[str] = typer.Option(["embed:minilm"], "--generator", "-g", help=_GEN_HELP),
        evaluator: list[str] = typer.Option(["embed:minilm"], "--evaluator", "-e", help=_EV_HELP),
        candidates: list[int] = typer.Option([4, 8, 12, 16], "--candidates", "-w", min=2, max=16,
                                             help="Candidate set sizes |W| (repeatable; at most a card's 16 words)."),
        decoys: list[int] = typer.Option([1, 3, 5, 7], "--decoys", "-m", min=1, max=10,
                                         help="Numbers of decoy messages |M| (repeatable)."),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help=_DECK_HELP),
        seed: int = typer.Option(0, "--seed"),
        out: Path = typer.Option(Path("sneak-sweep"), "--out", help="Folder for the text and Figure 4."),
    ) -> None:
        """SNEAK 4.3: utility, leakage and scores as the candidate set and the decoy messages grow (Figure 4)."""
        from models.eval.analysis import sweep as run_sweep
        from models.eval.analysis import sweep_figure, sweep_text

        check_folder(out)
        chosen = _analysis_cards(deck, cards)
        largest = max([*candidates, 12])
        if not any(len(w) >= largest for _, w in chosen):  # said before any model loads
            raise typer.BadParameter(f"no card has {largest} words: lower the largest candidate set")

        async def work(s: Any) -> Any:
            return await run_sweep(chosen, generator, s, candidates=candidates, decoys=decoys)

        sw = _analysis_run(work, evaluator, seed)
        text = sweep_text(sw)
        typer.echo(text)
        figs = sweep_figure(sw, out / "figure4", generator[0])
        _save(out, "sweep.txt", text, figs)

    @app.command()
    def bias(
        generator: list[str] = typer.Option(["embed:minilm", "embed:assoc"], "--generator", "-g",
                                            help="Agent spec that writes messages (repeatable; two or more)."),
        evaluator: list[str] = typer.Option(["embed:minilm", "embed:assoc"], "--evaluator", "-e", help=_EV_HELP),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help=_DECK_HELP),
        seed: int = typer.Option(0, "--seed"),
        out: Path = typer.Option(Path("sneak-bias"), "--out", help="Folder for the text."),
    ) -> None:
        """SNEAK E.2: does an evaluator favour messages from its own model? Self vs others, with bootstrap intervals."""
        from models.eval.analysis import Messages, messages_for, score_all
        from models.eval.bias import bias as same_model
        from models.eval.bias import bias_text

        check_folder(out)
        if len(set(generator)) < 2:
            raise typer.BadParameter("name two or more different generators with -g")
        chosen = _analysis_cards(deck, cards)
        t0 = time.perf_counter()

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), list(dict.fromkeys(generator)), s)
            # Only the generators' messages are compared: the reference baselines are no model's.
            msgs = Messages([i for i in msgs.instances if i.role in generator],
                            {k: v for k, v in msgs.missing.items() if k in generator})
            evals = await score_all(msgs, s)
            b = same_model(evals, list(dict.fromkeys(generator)), list(dict.fromkeys(evaluator)), seed=seed)
            return "\n\n".join([bias_text(b, time.perf_counter() - t0, cores()), missing_line(msgs.missing)]).strip()

        text = _analysis_run(work, list(dict.fromkeys(evaluator)), seed)
        typer.echo(text)
        _save(out, "bias.txt", text)

    @app.command()
    def relations(
        generator: list[str] = typer.Option(["embed:minilm"], "--generator", "-g", help=_GEN_HELP),
        evaluator: list[str] = typer.Option(["embed:minilm"], "--evaluator", "-e", help=_EV_HELP),
        cards: int | None = typer.Option(None, "--cards", min=1, help="Only the first N cards (default: all)."),
        deck: Path | None = typer.Option(None, "--deck", help=_DECK_HELP),
        seed: int = typer.Option(0, "--seed"),
        out: Path = typer.Option(Path("sneak-relations"), "--out", help="Folder for the text."),
    ) -> None:
        """SNEAK E.3: utility and leakage per WordNet relation of message to secret, per generator and baseline."""
        from models.eval.analysis import messages_for, score_all
        from models.eval.relations import relations as by_relation
        from models.eval.relations import relations_text

        check_folder(out)
        chosen = _analysis_cards(deck, cards)
        t0 = time.perf_counter()

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), generator, s)
            evals = await score_all(msgs, s)
            res = by_relation(evals, s.wn, [b.value for b in Baseline] + list(generator))
            return "\n\n".join([relations_text(res, time.perf_counter() - t0, cores()), missing_line(msgs.missing)]).strip()

        text = _analysis_run(work, evaluator, seed)
        typer.echo(text)
        _save(out, "relations.txt", text)

    @app.command()
    def report(
        out: Path = typer.Option(Path("sneak-report"), "--out", help="Folder for the tables, CSV and plot."),
        since: datetime | None = typer.Option(None, "--since", help="Only games created on or after this date."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
    ) -> None:
        """Tables and the utility-leakage plot from stored evaluations: humans vs each agent, by game type and role."""
        from models.eval.live import live_summary
        from storage.store import Store

        check_folder(out)
        e = env()

        async def go() -> Any:
            store = await Store.open(database or e.database_url, must_exist=True)
            try:
                return await live_summary(store, secret=log_secret(store, e), since=since)
            finally:
                await store.aclose()

        summary = run_on_log(go())
        text = "\n\n".join([tables("By player (humans by pseudonym, agents by spec, bluffs apart; 0-100)",
                                     summary.by_player, "Player"),
                             tables("By game type (bluffs apart)", summary.by_game, "Game type"),
                             tables("By role", summary.by_role, "Role")])
        typer.echo(text)
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.txt").write_text(text + "\n", encoding="utf-8")
        (out / "by_player.csv").write_text(to_csv(summary.by_player), encoding="utf-8")
        (out / "report.json").write_text(to_json(summary.by_player, [], {"rows": summary.rows}), encoding="utf-8")
        evs = {r.evaluator for r in summary.by_player}
        ev = "average" if "average" in evs else (sorted(evs)[0] if evs else "")
        points = [Point(r.group, r.scores.x100()["leakage"], r.scores.x100()["utility"], r.scores.x100()["soft"])
                  for r in summary.by_player if r.evaluator == ev and r.n]
        paths = scatter(points, out / "utility_leakage", title=f"SNEAK, live play: players (evaluator {ev})") \
            if points else []
        typer.echo("\nwrote " + ", ".join(str(p) for p in [out / "report.txt", out / "by_player.csv", *paths]))

    @app.command()
    def calibrate(
        write: bool = typer.Option(False, "--write", help="Rewrite models/eval/data/embed_calibration.json."),
    ) -> None:
        """Refit the embedding evaluator's softmax temperatures (see models/eval/calibrate.py)."""
        from models.eval.calibrate import calibrate as fit

        result = fit(embedder_factory()("minilm"))
        typer.echo(json.dumps(result, indent=1))
        if write:
            path = Path(__file__).parent / "data" / "embed_calibration.json"
            path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
            typer.echo(f"wrote {path}")

"""``hushtable sneak ...``: score logged clues, validate evaluators, run the SNEAK benchmark, report, calibrate.

The operator may name evaluators and generators here (``--evaluator SPEC``);
chat never can. ``make_app(env)`` builds the commands around an ``EvalEnv``
factory that the caller (``bot/cli.py``, from the bot's settings) provides: the
database URL, the export key and the model pool, so this module reads no
configuration of its own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import typer

from models.cli_files import check_file_option
from models.eval.bench import DEFAULT_EVALUATORS, BaselineSource, BenchConfig, BenchResult, DecoyRule, Setting, method_order, run_bench
from models.eval.instances import bench_instances
from models.eval.plot import Point, scatter
from models.eval.summary import PAPER_BASELINES, Row, render, to_csv, to_json


@dataclass(frozen=True, slots=True)
class EvalEnv:
    """What the commands need from the outside: where the log is, the export key, and the model pool."""

    database_url: str
    export_secret: str | None
    pool: Callable[[], Any]  # a fresh models.client.ClientPool (its ``get`` resolves model specs; ``aclose``)


def _secret(store: Any, env: EvalEnv) -> str:
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


GAME_ID_MAX = 2**63 - 1  # the largest id a database column holds


def _check_specs(specs: list[str]) -> None:
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


def _check_folder(out: Path) -> None:
    """``--out`` must be a folder (or not exist yet), checked before any work."""
    if out.exists() and not out.is_dir():
        raise typer.BadParameter(f"--out {out} is a file; name a folder for the results")
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise typer.BadParameter(f"--out {out}: {parent} is a file, not a folder")
            break


def _run_on_log(work: Coroutine[Any, Any, T]) -> T:
    """Run a command that reads the log; a missing database is a clear error, not a traceback."""
    from storage.store import DatabaseMissing

    try:
        return asyncio.run(work)
    except DatabaseMissing as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _missing(missing: dict[str, int]) -> str:
    return ("Without a message (left out): " + ", ".join(f"{k} {v}" for k, v in missing.items())) if missing else ""


def write_bench(res: BenchResult, out: Path) -> list[Path]:
    """Table (text), CSV, JSON and the scatter (PNG, SVG) into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"generator": res.config.generator, "evaluators": list(res.config.evaluators), "setting": res.config.setting,
            "cards": res.config.cards, "deck": res.config.deck_name, "decoys": res.decoys_name,
            "baselines": res.config.baselines, "refine": res.config.refine, "instances": res.instances,
            "generation_failures": res.generation_failures, "missing_baselines": res.missing,
            "seconds": {k: round(v, 1) for k, v in res.seconds.items()}, "examples": res.examples,
            "errors": res.errors}
    paths = [out / "table.txt", out / "results.csv", out / "results.json"]
    paths[0].write_text(bench_text(res) + "\n", encoding="utf-8")
    paths[1].write_text(to_csv(res.rows), encoding="utf-8")
    paths[2].write_text(to_json(res.rows, res.verdicts, meta), encoding="utf-8")
    points = res.points()
    if points:
        paths += scatter(points, out / "utility_leakage",
                         title=f"SNEAK ({res.config.setting}): utility vs leakage (0-100), evaluator "
                               f"{res.summary_evaluator}")
    return paths


def bench_text(res: BenchResult) -> str:
    lines = [render(res.rows, title=f"SNEAK benchmark: generator {res.config.generator}, {res.instances} instances "
                    f"({res.config.setting}; {res.config.deck_name}; decoys {res.decoys_name}; baselines "
                    f"{res.config.baselines}), generation parse failures {res.generation_failures}, scale 0-100",
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


def make_app(env: Callable[[], EvalEnv]) -> typer.Typer:
    """The ``sneak`` commands, reading their environment from ``env()`` when one runs."""
    app = typer.Typer(no_args_is_help=True, add_completion=False,
                      help="SNEAK evaluation: utility and leakage of clues (logged play, validation, a benchmark).")

    @app.command()
    def score(
        game: int | None = typer.Option(None, "--game", min=1, max=GAME_ID_MAX, help="Only this game id."),
        since: datetime | None = typer.Option(None, "--since", help="Only games created on or after this date."),
        evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e",
                                            help="Evaluator spec (repeatable)."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
    ) -> None:
        """Score the logged clues, hints and descriptions not scored yet, then print the averages (0-100)."""
        from models.eval.decoys import WordNetDecoys
        from models.eval.evaluators import resolve, warm_up
        from models.eval.live import live_summary, score_games, score_own
        from models.eval.wordnet import wordnet
        from storage.store import Store

        _check_specs(evaluator)
        e = env()
        embedder_for = _embedder_for()

        async def go() -> None:
            store = await Store.open(database or e.database_url, must_exist=True)
            pool = e.pool()
            try:
                evs = []
                for s in evaluator:  # one model at a time
                    try:
                        ev = await resolve(s, client_for=pool.get, embedder_for=embedder_for)
                    except ValueError as exc:
                        raise typer.BadParameter(str(exc)) from None
                    failure = await warm_up(ev)
                    if failure is not None:
                        raise typer.BadParameter(f"evaluator {s} does not run: {failure}")
                    evs.append(ev)
                with _Progress() as progress:
                    run = await score_games(store, evs, WordNetDecoys(wordnet()), game_id=game, since=since,
                                            progress=lambda n, total: progress("score", n, total))
                own = await score_own(store, evs, game_id=game, since=since)
                typer.echo(f"{run.games + sum(o.games for o in own)} game(s), "
                           f"{run.instances + sum(o.clues for o in own)} message(s); scored {run.scored} pair(s), "
                           f"stored {run.inserted}, already stored {run.skipped}, evaluation failures {run.failures}")
                for o in own:  # games whose clues SNEAK's pair does not fit, scored by their own hook
                    numbers = ", ".join(f"{k} {v:.0f}" for k, v in o.numbers.items()) or "no numbers"
                    typer.echo(f"{o.game}: {o.games} game(s), {o.clues} clue(s) scored its own way (0-100): {numbers}")
                ids = [game] if game is not None else None
                summary = await live_summary(store, secret=_secret(store, e), game_ids=ids, since=since,
                                             evaluators=[ev.spec for ev in evs])
                typer.echo(_tables("\nBy game type (0-100; bluffs apart)", summary.by_game, "Game type"))
                typer.echo(_tables("\nBy player (bluffs apart)", summary.by_player, "Player"))
                typer.echo(_tables("\nBy role", summary.by_role, "Role"))
            finally:
                await pool.aclose()
                await store.aclose()

        _run_on_log(go())

    @app.command()
    def human(
        add_bench: int = typer.Option(0, "--add-bench", min=0, help="First add N benchmark items: one secret of "
                                      "each of the first N cards, its message by --generator, judged by "
                                      "--evaluator (every tenant's members may judge them)."),
        deck: Path | None = typer.Option(None, "--deck", help="Cards for --add-bench (default: the bundled cards)."),
        generator: str = typer.Option("embed:minilm", "--generator", "-g", help="Who writes the benchmark items' "
                                      "messages (embed:... or llm:...)."),
        evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e",
                                            help="Evaluator spec for --add-bench (repeatable)."),
        seed: int = typer.Option(0, "--seed", help="Seed of the benchmark items' secrets and messages."),
        add_deep: Path | None = typer.Option(None, "--add-deep", help="First add DEEP items for members to rate: "
                                             "the JSON that hushtable deep --out wrote."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
    ) -> None:
        """The SNEAK paper's human study (Tables 6 and 7) and DEEP rated by members, from the answers to /judge."""
        from models.cli_files import read_input_option
        from models.eval.study import add_bench_items, add_deep_items, study_report
        from storage.store import Store

        _check_specs(evaluator)
        own = read_deck(deck)
        run: dict[str, Any] | None = None
        if add_deep is not None:
            try:
                run = json.loads(read_input_option(add_deep, "--add-deep"))
                from models.eval.deep_study import items_from_run

                if not isinstance(run, dict) or not items_from_run(run):
                    raise ValueError("no description with a rating in it")
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                raise typer.BadParameter(f"--add-deep: not the JSON of hushtable deep --out ({exc})") from None
        e = env()

        async def go() -> None:
            store = await Store.open(database or e.database_url, must_exist=True)
            pool = e.pool()
            try:
                if run is not None:
                    typer.echo(f"added {await add_deep_items(store, run)} DEEP item(s)")
                if add_bench:
                    try:
                        added = await add_bench_items(store, own, add_bench, generator=generator, evaluators=evaluator,
                                                      client_for=pool.get, embedder_for=_embedder_for(), seed=seed)
                    except ValueError as exc:
                        raise typer.BadParameter(str(exc)) from None
                    typer.echo(f"added {added} benchmark item(s)")
                typer.echo(await study_report(store))
            finally:
                await pool.aclose()
                await store.aclose()

        _run_on_log(go())

    @app.command()
    def judge(
        member: str = typer.Option(..., "--member", help="Who is judging (a name of yours; kept as console:NAME)."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
        evaluator: list[str] = typer.Option(list(DEFAULT_EVALUATORS), "--evaluator", "-e",
                                            help="The evaluators whose scored clues become items (repeatable)."),
    ) -> None:
        """The SNEAK human study at the console: one item at a time (an empty line or 'q' stops)."""
        from games.text import name_problem, person_name
        from models.eval.study import HumanStudy
        from storage.annotations import Scope
        from storage.store import Store

        # NFKC first: a fullwidth ａｄａ is the member ada, not a second one
        name = person_name(member) if name_problem(member) is None else ""
        if not name or len(name) > 40 or not name.replace("_", "").replace("-", "").isalnum():
            raise typer.BadParameter("--member takes a name of letters, digits, - and _ (at most 40)")
        e = env()

        async def go() -> None:
            store = await Store.open(database or e.database_url, must_exist=True)
            try:
                study = HumanStudy(store, evaluator)
                who = f"console:{name}"
                # The operator's CLI: the console's games in any place, and those from before tenants.
                scope = Scope("console", None, operator=True)
                text = await study.turn(who, scope)
                while True:
                    typer.echo(text)
                    if text.startswith("No item to judge") or "\nNo item to judge" in text:
                        return
                    answer = await asyncio.to_thread(input, "> ")
                    if answer.strip().lower() in ("", "q", "quit"):
                        return
                    text = await study.turn(who, scope, answer)
            except EOFError:
                return
            finally:
                await store.aclose()

        _run_on_log(go())

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

        _check_specs(evaluator)
        check_file_option(out, "--out")
        e = env()
        own = read_deck(deck)
        if write_record and cards:
            raise typer.BadParameter("--record keeps verdicts over every held-back card; drop --cards")
        if write_record and (n := len(held_back(own)[0])) < MIN_RECORD_CARDS:
            raise typer.BadParameter(f"--record needs at least {MIN_RECORD_CARDS} held-back cards; this deck has {n}")

        async def go() -> Any:
            pool = e.pool()
            try:
                with _Progress() as progress:
                    return await validate(evaluator, client_for=pool.get, embedder_for=_embedder_for(), deck=own,
                                          deck_name=str(deck) if deck else "bundled cards not used for calibration",
                                          seed=seed, progress=progress, limit=cards)
            finally:
                await pool.aclose()

        try:
            res = asyncio.run(go())
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
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
        _check_specs(evaluator)
        _check_folder(out)
        e = env()
        embedder_for = _embedder_for()
        own = read_deck(deck)

        async def go() -> BenchResult:
            pool = e.pool()
            try:
                with _Progress() as progress:
                    cfg = BenchConfig(generator=generator, evaluators=evaluator, cards=cards, setting=setting,
                                      refine=refine, deck=own, deck_name=str(deck) if deck else "bundled cards",
                                      decoys=decoys, baselines=baselines)
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

    def _analysis_cards(deck: Path | None, cards: int | None) -> list[tuple[str, list[str]]]:
        from games import decks

        own = read_deck(deck)
        chosen = own if own is not None else [(c, list(w)) for c, w in decks.cards()]
        return chosen[:cards] if cards else chosen

    def _analysis_run(work: Callable[[Any], Coroutine[Any, Any, T]], evaluators: list[str], seed: int) -> T:
        """Load the evaluators, then run ``work(scoring)``; a spec or card problem is one sentence."""
        from models.eval.analysis import make_scoring

        _check_specs(evaluators)
        e = env()
        embedder_for = _embedder_for()

        async def go() -> T:
            pool = e.pool()
            try:
                with _Progress() as progress:
                    s = await make_scoring(evaluators, client_for=pool.get, embedder_for=embedder_for, seed=seed,
                                           progress=progress)
                    return await work(s)
            finally:
                await pool.aclose()

        try:
            return asyncio.run(go())
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    def _save(out: Path, name: str, text: str, extra: list[Path] | None = None) -> None:
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text + "\n", encoding="utf-8")
        typer.echo("\nwrote " + ", ".join(str(p) for p in [out / name, *(extra or [])]))

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
    ) -> None:
        """SNEAK 4.1: do the evaluators agree? Spread of scores and rank correlation of the methods."""
        from models.eval.analysis import agreement as agree
        from models.eval.analysis import agreement_text, messages_for, score_all

        _check_folder(out)
        chosen = _analysis_cards(deck, cards)

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), generator, s)
            evals = await score_all(msgs, s)
            a = agree(evals)
            return "\n\n".join([render(a.rows, title=f"Per evaluator ({len(chosen)} cards, 12 words each, "
                                                       "WordNet decoys; 0-100)", order=method_order),
                                 agreement_text(a), _missing(msgs.missing)]).strip()

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

        _check_folder(out)
        chosen = _analysis_cards(deck, cards)

        async def work(s: Any) -> str:
            msgs = await messages_for(bench_instances(chosen, 12), [generator], s)
            evals = await score_all(msgs, s)
            parts = [similarity_text(sim(evals, s.wn, generator)),
                     "Beside it, the secret-synonym baseline (the same cards):",
                     similarity_text(sim(evals, s.wn, "secret-synonym")), _missing(msgs.missing)]
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

        _check_folder(out)
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
    def report(
        out: Path = typer.Option(Path("sneak-report"), "--out", help="Folder for the tables, CSV and plot."),
        since: datetime | None = typer.Option(None, "--since", help="Only games created on or after this date."),
        database: str | None = typer.Option(None, "--database", help="Database URL (default: HUSHTABLE_DATABASE_URL)."),
    ) -> None:
        """Tables and the utility-leakage plot from stored evaluations: humans vs each agent, by game type and role."""
        from models.eval.live import live_summary
        from storage.store import Store

        _check_folder(out)
        e = env()

        async def go() -> Any:
            store = await Store.open(database or e.database_url, must_exist=True)
            try:
                return await live_summary(store, secret=_secret(store, e), since=since)
            finally:
                await store.aclose()

        summary = _run_on_log(go())
        text = "\n\n".join([_tables("By player (humans by pseudonym, agents by spec, bluffs apart; 0-100)",
                                     summary.by_player, "Player"),
                             _tables("By game type (bluffs apart)", summary.by_game, "Game type"),
                             _tables("By role", summary.by_role, "Role")])
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

        result = fit(_embedder_for()("minilm"))
        typer.echo(json.dumps(result, indent=1))
        if write:
            path = Path(__file__).parent / "data" / "embed_calibration.json"
            path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
            typer.echo(f"wrote {path}")

    return app

"""Logged play and the human study: ``sneak score``, ``sneak human``, ``sneak judge``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import typer

from models.eval.bench import DEFAULT_EVALUATORS
from models.eval.cli_common import (
    GAME_ID_MAX,
    EvalEnv,
    StageProgress,
    check_specs,
    embedder_factory,
    log_secret,
    read_deck,
    run_on_log,
    tables,
)


def register(app: typer.Typer, env: Callable[[], EvalEnv]) -> None:
    """Add this group's commands to ``app``; each reads its environment from ``env()`` when it runs."""

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

        check_specs(evaluator)
        e = env()
        embedder_for = embedder_factory()

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
                with StageProgress() as progress:
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
                summary = await live_summary(store, secret=log_secret(store, e), game_ids=ids, since=since,
                                             evaluators=[ev.spec for ev in evs])
                typer.echo(tables("\nBy game type (0-100; bluffs apart)", summary.by_game, "Game type"))
                typer.echo(tables("\nBy player (bluffs apart)", summary.by_player, "Player"))
                typer.echo(tables("\nBy role", summary.by_role, "Role"))
            finally:
                await pool.aclose()
                await store.aclose()

        run_on_log(go())

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

        check_specs(evaluator)
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
                                                      client_for=pool.get, embedder_for=embedder_factory(), seed=seed)
                    except ValueError as exc:
                        raise typer.BadParameter(str(exc)) from None
                    typer.echo(f"added {added} benchmark item(s)")
                typer.echo(await study_report(store))
            finally:
                await pool.aclose()
                await store.aclose()

        run_on_log(go())

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
                study = HumanStudy(store, evaluator, consent=e.research_consent)
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

        run_on_log(go())

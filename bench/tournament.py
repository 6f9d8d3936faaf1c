"""Benchmark: the same tournament played sequentially and with our concurrency, in one run.

The Decrypto benchmark runs its grid one game after another; Hushtable runs a
tournament's games as concurrent AI-only tables, so the inference worker batches the
model calls of several games and reuses cached prompt prefixes. This script builds the
bot as ``hushtable run`` would (the bundled model in this process), loads the model
once with a warm-up game, then plays two identical tournaments (same entrants, seed,
deals and model): one with ``concurrency=1`` and one with ``--concurrency`` (default:
``default_concurrency()``). It prints games per hour for both, the ratio, and the
prefix cache during each run (token share served from cached prefixes and prefix
lookups that hit).

Usage: ``python bench/tournament.py [--game chameleon] [--seats 4] [--games 4]
[--entrant strategist --entrant random] [--concurrency N] [--threads N] [--json PATH]``
(``--json`` also writes both runs and the ratio; the model's device is ``HUSHTABLE_DEVICE``).

``--queries 2000 [--game spy --variant classic --seats 3]`` instead counts the SQL statements
that a tournament of about that many matches between two random players sends, from its run to
its leaderboard: reads of the tournament row, of its match list, of game logs, of agent calls,
the tournament's other statements, and every statement (the games' own play included). It says on
stderr how many matches are played every tenth of the way, and when the last is, that the standings
come next (their bootstrap refits every match 500 times: minutes at the cap, in a thread).
Timings depend on the machine and on whatever else runs on it: say which in notes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import build_app  # noqa: E402
from bot.core.memory import MemoryPlatform  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.tournaments import manage  # noqa: E402
from bot.tournaments.ratings import DEFAULT_ROUNDS  # noqa: E402
from bot.tournaments.runner import HEADLESS, Progress, ProgressHook, TournamentRunner, default_concurrency  # noqa: E402
from bot.tournaments.spec import TournamentSpec  # noqa: E402
from storage import tournaments as repo  # noqa: E402


@dataclass(frozen=True)
class Run:
    name: str
    concurrency: int
    games: int
    failed: int
    seconds: float
    prompt_tokens: int
    cached_tokens: int
    lookups: int
    hits: int
    busy_s: float
    batches: int
    batched: int

    @property
    def per_hour(self) -> float:
        return self.games / self.seconds * 3600 if self.seconds else float("nan")


def _cache(pool: Any) -> tuple[float, ...]:
    """(prompt tokens, cached tokens, prefix lookups, hits, backend busy seconds, batches, requests in
    batches) summed over the pool's in-process models."""
    prompt = cached = lookups = hits = batches = batched = 0
    busy = 0.0
    for client in list(pool._clients.values()):  # the bench reads the in-process batchers' counters
        task = getattr(client, "_task", None)
        batcher = task.result() if task is not None and task.done() and not task.exception() else None
        if batcher is None:
            continue
        prompt += batcher.stats.prompt_tokens
        cached += batcher.stats.cached_tokens
        busy += batcher.stats.busy_s
        batches += batcher.stats.batch_size.count
        batched += int(batcher.stats.batch_size.total)
        pc = getattr(batcher.backend, "prefix_cache", None)
        if pc is not None:
            s = pc.stats()
            lookups += s.hits + s.misses
            hits += s.hits
    return prompt, cached, lookups, hits, busy, batches, batched


async def _tournament(service: Any, args: argparse.Namespace, seed: int) -> int:
    spec = TournamentSpec(game=args.game, variant=args.variant, entrants=tuple(args.entrant), seats=args.seats,
                          games_per_pairing=args.games, seed=seed, name="bench")
    return await manage.create(service, "bench", spec)


async def _play(app: Any, args: argparse.Namespace, name: str, concurrency: int, seed: int) -> Run:
    tid = await _tournament(app.service, args, seed)
    before = _cache(app.pool)
    start = time.perf_counter()
    summary = await TournamentRunner(app.service, concurrency=concurrency, rounds=100).run(tid)
    seconds = time.perf_counter() - start
    after = _cache(app.pool)
    d = [a - b for a, b in zip(after, before, strict=True)]
    return Run(name, concurrency, summary.finished, summary.failed, seconds, int(d[0]), int(d[1]), int(d[2]),
               int(d[3]), d[4], int(d[5]), int(d[6]))


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{tmp}/bench.db",
                            agent_choices=",".join(args.entrant), default_agent=args.entrant[0],
                            fallback_agent="random", ai_timeout_s=600)  # type: ignore[call-arg]  # _env_file: see bench/table.py
        app = await build_app(settings)
        app.service.attach(MemoryPlatform(name=HEADLESS))
        await app.service.start()
        try:
            # Warm-up: load the model(s) and the embedding index outside the timed runs.
            warm = await manage.create(app.service, "bench", TournamentSpec(
                game=args.game, variant=args.variant, entrants=tuple(args.entrant), seats=args.seats,
                games_per_pairing=1, seed=999, concurrency=len(args.entrant)))
            await TournamentRunner(app.service, rounds=10).run(warm)
            n_games = len(await repo.matches(app.service.store, warm)) * args.games
            conc = args.concurrency or default_concurrency()
            seq = await _play(app, args, "sequential (one game at a time)", 1, args.seed)
            par = await _play(app, args, f"concurrent ({conc} games at once)", conc, args.seed)
        finally:
            await app.aclose()
    print(f"\nTournament: {args.game} ({args.variant or 'default'}), {args.seats} seats, entrants "
          f"{', '.join(args.entrant)}, {n_games} games per run, seed {args.seed}; cpu cores {os.cpu_count()}, "
          f"torch threads {args.threads or 'default'}")
    print(f"{'run':<36} {'games':>5} {'failed':>6} {'seconds':>8} {'games/hour':>11} {'cached tok':>11} "
          f"{'prefix hits':>12} {'model busy':>10} {'mean batch':>10}")
    for r in (seq, par):
        tok = f"{r.cached_tokens / r.prompt_tokens:.0%}" if r.prompt_tokens else "–"
        hit = f"{r.hits}/{r.lookups}" if r.lookups else "–"
        busy = f"{r.busy_s / r.seconds:.0%}" if r.seconds else "–"
        mean = f"{r.batched / r.batches:.2f}" if r.batches else "–"
        print(f"{r.name:<36} {r.games:>5} {r.failed:>6} {r.seconds:>8.1f} {r.per_hour:>11.0f} {tok:>11} {hit:>12} "
              f"{busy:>10} {mean:>10}")
    print(f"speed-up (games per hour, concurrent / sequential): {par.per_hour / seq.per_hour:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps({
            "game": args.game, "variant": args.variant, "seats": args.seats, "entrants": args.entrant,
            "games_per_run": n_games, "sequential": {**dataclasses.asdict(seq), "games_per_hour": seq.per_hour},
            "concurrent": {**dataclasses.asdict(par), "games_per_hour": par.per_hour},
            "speedup": par.per_hour / seq.per_hour if seq.per_hour else None,
        }, indent=2), encoding="utf-8")


# ---------------------------------------------------------------------------------- query counts


class _Statements:
    """SQL statements this process sends, by what they read or write (every engine: the turn log
    has a synchronous engine of its own on SQLite)."""

    KINDS = (
        ("tournament row reads", re.compile(r"^SELECT .* FROM tournaments WHERE tournaments\.id = ")),
        ("match list reads", re.compile(r"^SELECT .* FROM tournament_matches WHERE tournament_matches\.tournament_id = ")),
        ("game log reads", re.compile(r"^SELECT .* FROM seats WHERE seats\.game_id IN ")),
        ("agent call reads", re.compile(r"^SELECT .* FROM agent_calls\b")),
        ("other tournament statements", re.compile(r"\b(tournaments|tournament_matches|tournament_ratings|scheduler_leases)\b")),
    )

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __call__(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        text = " ".join(statement.split())
        self.counts["all statements (the games' own play included)"] += 1
        for name, pattern in self.KINDS:
            if pattern.search(text):
                self.counts[name] += 1
                break

    def take(self) -> Counter[str]:
        out, self.counts = self.counts, Counter()
        return out


def _progress_line(start: float) -> ProgressHook:
    """Matches played, on stderr, every tenth of the tournament, and what comes after the last one (the
    standings' bootstrap refits every match hundreds of times: minutes at the cap, with nothing else said)."""
    said: set[int] = set()

    async def hook(p: Progress) -> None:
        played = p.done + p.failed
        tenth = played * 10 // max(1, p.total)
        if p.total and tenth not in said and played < p.total:
            said.add(tenth)
            print(f"  {played}/{p.total} matches played ({time.perf_counter() - start:.0f} s)", file=sys.stderr,
                  flush=True)
        elif played == p.total and -1 not in said:
            said.add(-1)
            print(f"  all {p.total} matches played ({time.perf_counter() - start:.0f} s); now the standings "
                  f"({DEFAULT_ROUNDS} bootstrap refits of every match) and the leaderboard", file=sys.stderr, flush=True)

    return hook


async def count_queries(args: argparse.Namespace) -> None:
    """A tournament of about ``--queries`` matches between two random players, run as a scheduled
    run is (``TournamentService.run``) and its leaderboard built: the statements each step sends."""
    import sqlalchemy as sa

    from bot.tournaments.formats import count_matches

    statements = _Statements()
    sa.event.listen(sa.engine.Engine, "before_cursor_execute", statements)
    reps = max(1, args.queries // count_matches(args.game, args.variant, 2, games_per_pairing=1))
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(_env_file=None, database_url=f"sqlite+aiosqlite:///{tmp}/bench.db",
                            agent_choices="random,random:b", agents='{"random:b": {}}', default_agent="random",
                            fallback_agent="random")  # type: ignore[call-arg]  # _env_file: see bench/table.py
        app = await build_app(settings)
        app.service.attach(MemoryPlatform(name=HEADLESS))
        await app.service.start()
        try:
            t = await app.tournaments.create("console", TournamentSpec(
                game=args.game, variant=args.variant, entrants=("random", "random:b"), seats=args.seats,
                games_per_pairing=reps, seed=args.seed, name="queries", concurrency=args.concurrency or 32))
            assert t.id is not None
            statements.take()
            start = time.perf_counter()
            summary = await app.tournaments.run("console", t.id, TournamentRunner(
                app.service, on_progress=_progress_line(start)))
            seconds = time.perf_counter() - start
            await app.service.wait_idle(timeout=600)  # the last games' clue reports, on a loaded machine
            run = statements.take()
            board = await app.tournaments.board("console", t.id)
            shown = statements.take()
        finally:
            await app.aclose()
    assert board is not None, "the tournament has a leaderboard"
    print(f"Tournament: {args.game} ({args.variant}), {args.seats} seats, random against random:b, "
          f"{summary.finished} matches finished ({summary.failed} failed) in {seconds:.0f} s")
    names = [*(n for n, _ in _Statements.KINDS), "all statements (the games' own play included)"]
    print(f"{'statements':<48} {'run':>8} {'leaderboard':>12} {'per match':>10}")
    for name in names:
        total = run[name] + shown[name]
        print(f"{name:<48} {run[name]:>8} {shown[name]:>12} {total / max(1, summary.finished):>10.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"game": args.game, "variant": args.variant, "seats": args.seats,
                                               "matches": summary.finished, "run": dict(run),
                                               "leaderboard": dict(shown)}, indent=2), encoding="utf-8")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="chameleon")
    p.add_argument("--variant", default="classic")
    p.add_argument("--seats", type=int, default=4)
    p.add_argument("--games", type=int, default=4, help="games per pairing / rotation")
    p.add_argument("--entrant", action="append", default=None)
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own)")
    p.add_argument("--json", default=None, help="also write both runs and the ratio to this file")
    p.add_argument("--queries", type=int, default=None, metavar="MATCHES",
                   help="instead: count the SQL statements of a run and its leaderboard over about this many "
                        "matches between two random players (e.g. 2000, the cap)")
    a = p.parse_args()
    if a.queries:
        asyncio.run(count_queries(a))
        raise SystemExit(0)
    a.entrant = a.entrant or ["strategist", "random"]
    if a.threads:
        import torch

        torch.set_num_threads(a.threads)
    asyncio.run(main(a))

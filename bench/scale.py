"""Scale-out benchmark: the same stream of AI turns through one inference worker and through a pool
of two (``HUSHTABLE_WORKER_URL`` with two URLs), each worker a real ``hushtable worker`` process on
localhost.

A "game" is a conversation whose rules and table stay the same while its question changes from turn
to turn, as our agents' prompts do. For each setting it prints: moves per second, p50/p99 latency
of one move, the share of prompt tokens a worker served from its prefix cache (the locality the pool
must keep: within 10% of one worker's), where the moves went, and how many were retried. With
``--kill`` one of two workers is SIGKILLed halfway: every move must still be answered.

Two cores bound the absolute numbers (two workers share them, so the ratio, not the rate, is the
result here); on a machine with one GPU per worker the throughput ratio is what grows.

With ``--bots`` it measures the bot processes instead: 1, 2 and 3 bot processes on one PostgreSQL
(pgserver, as tests/postgres.py starts it), each opening its share of the tables through
console-style commands (create, add AIs, start, then a member asking for the status of their
table while it plays), every seat a ``random`` AI. It prints tables per second, command latency
p50/p99, and where the time goes (bot CPU seconds and database transactions per table), side by
side with the ratios to one process; then the takeover time p50/p99 when one of two processes is
SIGKILLed while it holds running tables (repeated ``--kills`` times, each on a fresh database).

Usage: ``python bench/scale.py [--model fake|default] [--games 8] [--turns 6] [--kill]``;
``python bench/scale.py --bots [--tables 12] [--kills 4] [--lease 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp  # noqa: E402

from models.client import HttpClient  # noqa: E402
from models.types import GenerateRequest, InferenceError, Message, ScoreRequest  # noqa: E402
from models.workers import WorkerPool  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RULES = ("You are playing Who-is-Spy. Each player holds a secret word; all but the spy share one. "
         "In turn, give a short clue about your word without saying it, then vote for the spy. ") * 6


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def start_worker(model: str) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = dict(os.environ, OMP_NUM_THREADS="1")  # two workers on two cores: one thread each
    proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--model", model, "--port", str(port)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return f"http://127.0.0.1:{port}", proc


async def wait_healthy(url: str, timeout: float = 600) -> None:
    end = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < end:
            try:
                async with http.get(f"{url}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.3)
    raise SystemExit(f"worker {url} did not come up")


def messages(game: int, turn: int) -> tuple[Message, ...]:
    return (Message("system", RULES), Message("user", f"Table {game}. Players: Ann, Bob, Cy, Dee. Your word is listed privately."),
            Message("assistant", "Understood."), Message("user", f"Turn {turn}: give your clue in one word."))


@dataclass
class Outcome:
    setting: str
    moves: int
    seconds: float
    latencies: list[float]
    prompt_tokens: int
    cached_tokens: int
    routed: dict[str, int]
    retried: int
    failed: int


async def play(setting: str, urls: list[str], games: int, turns: int, kill: subprocess.Popen[bytes] | None) -> Outcome:
    if len(urls) == 1:
        client: HttpClient | WorkerPool = HttpClient(urls[0], timeout_s=120, retries=1)
    else:
        client = WorkerPool([(u, HttpClient(u, timeout_s=120, retries=0)) for u in urls], poll_s=1.0, backoff_s=30)
        await client.start()
    lat: list[float] = []
    prompt = cached = failed = 0
    t0 = time.perf_counter()

    async def one_game(g: int) -> None:
        nonlocal prompt, cached, failed
        for t in range(turns):
            start = time.perf_counter()
            try:
                if t % 2:
                    out = await client.score_labels(ScoreRequest(messages=messages(g, t), labels=("A", "B", "C", "D")))
                else:
                    out = await client.generate(GenerateRequest(messages=messages(g, t), max_tokens=4, seed=g * 100 + t))  # type: ignore[assignment]
            except InferenceError:
                failed += 1
                continue
            lat.append(time.perf_counter() - start)
            prompt += out.prompt_tokens
            cached += out.cached_tokens

    tasks = [asyncio.create_task(one_game(g)) for g in range(games)]
    if kill is not None:
        while len(lat) < games * turns // 2:
            await asyncio.sleep(0.05)
        kill.send_signal(signal.SIGKILL)
    await asyncio.gather(*tasks)
    seconds = time.perf_counter() - t0
    routed = dict(client.routed) if isinstance(client, WorkerPool) else {urls[0]: len(lat)}
    retried = client.retried if isinstance(client, WorkerPool) else 0
    await client.aclose()
    return Outcome(setting, len(lat), seconds, lat, prompt, cached, routed, retried, failed)


def pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100)[int(q) - 1] if len(xs) >= 2 else (xs[0] if xs else float("nan"))


# The bot processes of this bench share a throwaway database; any key of 32 characters or more serves.
RELAY_KEY = "bench-scale-relay-key-0123456789abcdef0123456789"
BOT_TABLES = [("spy", "classic", 5), ("chameleon", "classic", 4), ("decrypto", "benchmark", 3)]


async def bot_process(url: str, owner: str, part: int, parts: int, tables: int, lease_s: float) -> None:
    """One bot process: opens every ``parts``-th table from ``part`` through console-style commands,
    asks for each table's status while it plays, and waits until no game of the database runs.
    Prints one JSON line: its command latencies, CPU seconds and the wall times of its first
    command and of its end."""
    import json
    from datetime import timedelta

    from bot.core.memory import MemoryPlatform
    from bot.core.messages import Command, CommandKind, Place, UserRef
    from bot.core.service import TableService
    from bot.settings import Settings
    from models.agents import AgentRegistry
    from storage.store import Store

    store = await Store.open(url)
    await store.own_tables(owner, timedelta(seconds=lease_s), relay_key=RELAY_KEY)
    service = TableService(store, settings=Settings(_env_file=None, default_agent="random", fallback_agent="random"),  # type: ignore[call-arg]
                           agents=AgentRegistry())
    service.attach(MemoryPlatform())
    await service.start()
    lat: list[tuple[str, float]] = []
    first, cpu0 = time.time(), time.process_time()

    async def command(kind: CommandKind, place: Place, args: dict[str, object], key: str | None) -> None:
        t = time.perf_counter()
        await service.handle(Command(kind, UserRef("memory", f"u{part}", "Host"), place, args, key))
        lat.append((kind.value, time.perf_counter() - t))

    mine = [i for i in range(tables) if i % parts == part]
    for i in mine:
        game, variant, seats = BOT_TABLES[i % len(BOT_TABLES)]
        place = Place("memory", f"chan-{i}")
        await command(CommandKind.CREATE, place, {"game": game, "variant": variant, "spectate": True}, f"create-{i}")
        await command(CommandKind.ADD_AI, place, {"agent": "random", "count": seats}, f"ai-{i}")
        await command(CommandKind.START, place, {"seed": 1000 + i}, f"start-{i}")
    print("STARTED", flush=True)
    while any(not t.over for t in service.tables.values()) or await store.unfinished_games():
        for i in mine:  # a member asking how their table stands, as the console's `status` does
            await command(CommandKind.STATUS, Place("memory", f"chan-{i}"), {}, None)
        await asyncio.sleep(0.05)
    end = time.time()
    await service.stop()
    await store.aclose()
    print(json.dumps({"lat": lat, "cpu": time.process_time() - cpu0, "first": first, "end": end}), flush=True)


def spawn_bot(url: str, owner: str, part: int, parts: int, tables: int, lease_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--bot-process", url, owner, str(part),
                             str(parts), str(tables), str(lease_s)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def pg_scalar(url: str, sql: str) -> int:
    import sqlalchemy as sa

    from storage.engine import make_engine

    async def go() -> int:
        engine = make_engine(url)
        try:
            async with engine.connect() as conn:
                return int((await conn.execute(sa.text(sql))).scalar() or 0)
        finally:
            await engine.dispose()

    return asyncio.run(go())


@dataclass
class BotOutcome:
    processes: int
    tables: int
    seconds: float
    latencies: list[tuple[str, float]]
    cpu: float
    transactions: int


def bots_run(server: object, processes: int, tables: int, lease_s: float) -> BotOutcome:
    import json

    url = server.create_database()  # type: ignore[attr-defined]
    procs = [spawn_bot(url, f"bench-{k}", k, processes, tables, lease_s) for k in range(processes)]
    try:
        reports = []
        for p in procs:
            out, err = p.communicate(timeout=600)
            if p.returncode != 0:
                raise SystemExit(f"a bot process failed: {err[-2000:]}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
        from sqlalchemy.engine import make_url

        name = make_url(url).database
        xacts = pg_scalar(url, f"select xact_commit from pg_stat_database where datname = '{name}'")
        finished = pg_scalar(url, "select count(*) from games where status = 'finished'")
        if finished != tables:
            raise SystemExit(f"{finished} of {tables} games finished")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        server.drop_database(url)  # type: ignore[attr-defined]
    seconds = max(r["end"] for r in reports) - min(r["first"] for r in reports)
    return BotOutcome(processes, tables, seconds, [x for r in reports for x in r["lat"]], sum(r["cpu"] for r in reports), xacts)


def takeover_once(server: object, tables: int, lease_s: float, rng: random.Random) -> float | None:
    """Two processes; SIGKILL the one holding running tables at a random moment; seconds until another
    process holds every running table the dead one held (None when it held none at the kill)."""
    from tests.storage.test_backends import Probe

    url = server.create_database()  # type: ignore[attr-defined]
    procs = [spawn_bot(url, f"bench-{k}", k, 2, tables, lease_s) for k in range(2)]
    probe = Probe(url)
    try:
        for p in procs:  # both have started their tables
            line = p.stdout.readline() if p.stdout else ""
            if "STARTED" not in line:
                raise SystemExit(f"a bot process failed: {p.communicate()[1][-2000:]}")
        time.sleep(rng.uniform(0.0, 0.3))
        victim = rng.randrange(2)
        procs[victim].kill()
        procs[victim].wait()
        killed = time.monotonic()
        held = {r[0] for r in probe(f"select l.game_id from table_leases l join games g on g.id = l.game_id "
                                    f"where l.owner = 'bench-{victim}' and g.status = 'running'")}
        if not held:
            return None
        ids = ",".join(str(g) for g in held)
        while probe(f"select 1 from table_leases where owner = 'bench-{victim}' and game_id in ({ids})"):
            if time.monotonic() - killed > 120:
                raise SystemExit("no takeover within 120 s")
            time.sleep(0.01)
        took = time.monotonic() - killed
        survivor = procs[1 - victim]
        out, err = survivor.communicate(timeout=300)
        if survivor.returncode != 0 or pg_scalar(url, "select count(*) from games where status = 'finished'") != tables:
            raise SystemExit(f"the games did not all finish after the takeover: {err[-2000:]}")
        return took
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        probe.close()
        server.drop_database(url)  # type: ignore[attr-defined]


def bots_main(tables: int, kills: int, lease_s: float) -> None:
    from tests.postgres import start_server

    server = start_server()
    try:
        outcomes = [bots_run(server, n, tables, lease_s) for n in (1, 2, 3)]
        rng = random.Random(22)
        takeovers = [t for t in (takeover_once(server, tables, lease_s, rng) for _ in range(kills)) if t is not None]
    finally:
        server.stop()
    print(f"bot processes on one PostgreSQL: tables={tables} (random AI seats) lease={lease_s}s cores={os.cpu_count()}")
    print(f"{'processes':>9} {'tables/s':>8} {'ratio':>6} {'cmds':>5} {'cmd p50 ms':>10} {'cmd p99 ms':>10} "
          f"{'bot cpu s/table':>15} {'db xacts/table':>14} {'wall s':>7}")
    base = outcomes[0].tables / outcomes[0].seconds
    for o in outcomes:
        rate, lat = o.tables / o.seconds, [x for _, x in o.latencies]
        print(f"{o.processes:>9} {rate:>8.2f} {rate / base:>6.2f} {len(lat):>5} {1000 * pct(lat, 50):>10.1f} "
              f"{1000 * pct(lat, 99):>10.1f} {o.cpu / o.tables:>15.3f} {o.transactions / o.tables:>14.1f} {o.seconds:>7.2f}")
    print("command latency by kind, p50/p99 ms (1 | 2 | 3 processes):")
    for kind in ("create", "add_ai", "start", "status"):
        cells = []
        for o in outcomes:
            xs = [x for k, x in o.latencies if k == kind]
            cells.append(f"{1000 * pct(xs, 50):.1f}/{1000 * pct(xs, 99):.1f}")
        print(f"  {kind:<7} " + " | ".join(cells))
    if takeovers:
        print(f"takeover after SIGKILL ({len(takeovers)} of {kills} kills hit a process holding running tables): "
              f"p50 {pct(takeovers, 50):.2f} s, p99 {pct(takeovers, 99):.2f} s, each: "
              + " ".join(f"{t:.2f}" for t in takeovers))
    else:
        print(f"takeover: none of {kills} kills hit a process holding running tables")


async def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--bot-process":
        url, owner, part, parts, tables, lease = sys.argv[2:8]
        await bot_process(url, owner, int(part), int(parts), int(tables), float(lease))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="fake", help="fake (routing and protocol cost only) or default (SmolLM2 on the CPU)")
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--kill", action="store_true", help="SIGKILL one of the two workers halfway through")
    ap.add_argument("--bots", action="store_true", help="measure 1, 2 and 3 bot processes on one PostgreSQL instead")
    ap.add_argument("--tables", type=int, default=12, help="with --bots: AI tables per run")
    ap.add_argument("--kills", type=int, default=4, help="with --bots: SIGKILLs for the takeover time")
    ap.add_argument("--lease", type=float, default=2.0, help="with --bots: the table lease in seconds")
    args = ap.parse_args()
    if args.bots:
        await asyncio.to_thread(bots_main, args.tables, args.kills, args.lease)
        return

    outcomes: list[Outcome] = []
    for n in (1, 2):
        started = [start_worker(args.model) for _ in range(n)]
        try:
            for url, _ in started:
                await wait_healthy(url)
            victim = started[-1][1] if (args.kill and n == 2) else None
            label = f"{n} worker{'s' if n > 1 else ''}" + (" (one killed halfway)" if victim else "")
            outcomes.append(await play(label, [u for u, _ in started], args.games, args.turns, victim))
        finally:
            for _, proc in started:
                proc.kill()
                proc.wait()

    print(f"model={args.model} games={args.games} turns={args.turns} cores={os.cpu_count()}")
    print(f"{'setting':<32} {'moves':>5} {'failed':>6} {'moves/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'cached %':>8} {'retried':>7}  moves per worker")
    for o in outcomes:
        share = 100 * o.cached_tokens / o.prompt_tokens if o.prompt_tokens else 0.0
        spread = " ".join(str(v) for v in o.routed.values())
        print(f"{o.setting:<32} {o.moves:>5} {o.failed:>6} {o.moves / o.seconds:>8.2f} {1000 * pct(o.latencies, 50):>8.1f} "
              f"{1000 * pct(o.latencies, 99):>8.1f} {share:>8.1f} {o.retried:>7}  {spread}")
    one, two = outcomes[0], outcomes[-1]
    print(f"throughput ratio (2 workers / 1): {(two.moves / two.seconds) / (one.moves / one.seconds):.2f}")
    if one.prompt_tokens and two.prompt_tokens:
        a, b = one.cached_tokens / one.prompt_tokens, two.cached_tokens / two.prompt_tokens
        print(f"prefix reuse, 2 workers vs 1: {b:.3f} vs {a:.3f} ({'within' if a - b <= 0.1 * max(a, 1e-9) else 'NOT within'} 10%)")


if __name__ == "__main__":
    asyncio.run(main())

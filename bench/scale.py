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

Usage: ``python bench/scale.py [--model fake|default] [--games 8] [--turns 6] [--kill]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
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


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="fake", help="fake (routing and protocol cost only) or default (SmolLM2 on the CPU)")
    ap.add_argument("--games", type=int, default=8)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--kill", action="store_true", help="SIGKILL one of the two workers halfway through")
    args = ap.parse_args()

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

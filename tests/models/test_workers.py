"""A pool of inference workers: rendezvous order keeps a game on one worker, a dead worker is skipped
with backoff and costs a request at most one retry, and a worker that comes back rejoins. The pool
runs over real worker processes (`hushtable worker --model fake`) on localhost."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from games.base import Choice, Text
from games.play import random_action
from models.client import ClientOptions, HttpClient, make_client
from models.types import GenerateRequest, Message, ScoreRequest, current_route, routed_by
from models.worker.fake_backend import fake_text
from models.workers import WorkerPool, affinity_key, rank, route_key, split_urls
from tests.bot.core.test_worker_fallback import free_port, wait_healthy
from tests.vocabulary import NONSENSE

ROOT = Path(__file__).resolve().parents[2]


def game(n: int, turn: int) -> tuple[Message, ...]:
    """The messages of turn ``turn`` of game ``n``: the same rules and table, a different question."""
    return (Message("system", "You play Who-is-Spy."), Message("user", f"Table {n}: seats Ann, Bob, Cy. " + "history " * 10),
            Message("assistant", "ok"), Message("user", f"turn {turn}: your clue?"))


def test_rendezvous_order_is_stable_and_moves_only_a_lost_workers_keys() -> None:
    urls = [f"http://w{i}" for i in range(3)]
    keys = [affinity_key(game(n, 0)) for n in range(300)]
    assert all(affinity_key(game(n, 0)) == affinity_key(game(n, 7)) for n in range(20)), "a game's turns share a key"
    first = {k: rank(k, urls)[0] for k in keys}
    assert min(Counter(first.values()).values()) > 60, "keys spread over every worker"
    after = {k: rank(k, urls[:2])[0] for k in keys}
    moved = [k for k in keys if first[k] != after[k]]
    assert moved and all(first[k] == urls[2] for k in moved), "only the lost worker's games move"
    routes = [route_key(GenerateRequest(messages=same_rules(0), route=f"game:{n}")) for n in range(300)]
    assert min(Counter(rank(k, urls)[0] for k in routes).values()) > 60, "games of one kind spread by their ids"
    assert split_urls(" http://a/ ,http://b,,http://a") == ["http://a", "http://b"]


def test_several_worker_urls_make_a_pool_and_one_makes_a_plain_client() -> None:
    assert isinstance(make_client("llm:default", ClientOptions(worker_url="http://a:1")), HttpClient)
    pool = make_client("llm:default", ClientOptions(worker_url="http://a:1,http://b:2", worker_token="t"))
    assert isinstance(pool, WorkerPool) and pool.healthy() == ["http://a:1", "http://b:2"]


def games_on_each(urls: list[str], per_worker: int, key: Callable[[int], bytes]) -> list[int]:
    """The first games that rendezvous order gives ``per_worker`` to every worker. The workers' ports
    are drawn at random, and so is which worker a handful of games hash to: eight games chosen blindly
    all landed on one worker in about 1 run of 128, and 7 of 8 on one in about 1 of 14. The spread over
    many games is checked with fixed URLs above; here the games are chosen so that both workers serve."""
    chosen: dict[str, list[int]] = {u: [] for u in urls}
    for n in range(10_000):
        if min(len(g) for g in chosen.values()) >= per_worker:
            break
        home = chosen[rank(key(n), urls)[0]]
        if len(home) < per_worker:
            home.append(n)
    short = [u for u, games in chosen.items() if len(games) < per_worker]
    assert not short, f"rendezvous order gave {short} fewer than {per_worker} of the first 10,000 games"
    return sorted(g for games in chosen.values() for g in games)


def test_the_game_search_names_a_worker_that_no_game_reaches() -> None:
    """Were every game's key to rank one worker first, the search fails at once, naming the other."""
    with pytest.raises(AssertionError, match="fewer than 1"):
        games_on_each(["http://a:1", "http://b:2"], 1, lambda n: b"one key for every game")
    assert len(games_on_each(["http://a:1", "http://b:2"], 2, lambda n: str(n).encode())) == 4


@pytest.fixture
def workers() -> Iterator[list[tuple[str, subprocess.Popen[bytes]]]]:
    procs = []
    for _ in range(2):
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--model", "fake", "--port", str(port)],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append((f"http://127.0.0.1:{port}", proc))
    yield procs
    for _, proc in procs:
        proc.kill()
        proc.wait(timeout=30)


async def test_killing_a_worker_mid_game_costs_at_most_a_retry(workers: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    for url, _ in workers:
        await wait_healthy(url)
    urls = [u for u, _ in workers]
    pool = WorkerPool([(u, HttpClient(u, timeout_s=5, retries=0)) for u in urls], poll_s=0.2, backoff_s=30)
    await pool.start()
    try:
        # Eight games, four on each worker, three turns each: every turn of a game goes to the same worker.
        games = games_on_each(urls, 4, lambda n: affinity_key(game(n, 0)))
        seen: dict[int, set[str]] = {}
        for turn in range(3):
            for n in games:
                req = GenerateRequest(messages=game(n, turn), max_tokens=4, seed=n)
                before = dict(pool.routed)
                out = await pool.generate(req)
                assert out.text == fake_text(req.messages, 4, n)
                seen.setdefault(n, set()).update(u for u in urls if pool.routed[u] > before[u])
        assert seen == {n: {rank(affinity_key(game(n, 0)), urls)[0]} for n in games}, seen
        assert {next(iter(s)) for s in seen.values()} == set(urls), "the games spread over both workers"

        # Kill the worker that serves the first game, then play on: every request is answered.
        victim = next(iter(seen[games[0]]))
        proc = dict(workers)[victim]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        retried = pool.retried
        for turn in range(3, 6):
            for n in games:
                scored = ScoreRequest(messages=game(n, turn), labels=("A", "B", "C"))
                probs = (await pool.score_labels(scored)).probs
                assert len(probs) == 3 and abs(sum(probs) - 1) < 1e-6
        assert pool.retried - retried <= 1, "after its first failure the dead worker is skipped, not retried per request"
        assert victim not in pool.healthy()

        # It comes back on its port: the next poll puts it back in rotation, and the first game returns to it.
        port = victim.rsplit(":", 1)[1]
        back = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker", "--model", "fake", "--port", port],
                                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        workers.append((victim, back))
        await wait_healthy(victim)
        for _ in range(100):
            if victim in pool.healthy():
                break
            await asyncio.sleep(0.1)
        routed = pool.routed[victim]
        await pool.generate(GenerateRequest(messages=game(games[0], 9), max_tokens=2, seed=0))
        assert pool.routed[victim] == routed + 1
    finally:
        await pool.aclose()


async def test_a_pool_with_every_worker_down_fails_fast_with_inference_error() -> None:
    urls = [f"http://127.0.0.1:{free_port()}" for _ in range(2)]
    pool = WorkerPool([(u, HttpClient(u, timeout_s=2, retries=0)) for u in urls], poll_s=0)
    from models.types import InferenceError

    with pytest.raises(InferenceError, match="unreachable"):
        await pool.generate(GenerateRequest(messages=game(1, 0)))
    assert pool.healthy() == [] and pool.retried == 2
    await pool.aclose()


def same_rules(turn: int) -> tuple[Message, ...]:
    """A turn of any game of one kind: the rules and the table's opening read alike in every game."""
    return (Message("system", "You play Who-is-Spy."), Message("user", "Seats Ann, Bob, Cy. " + "history " * 10),
            Message("assistant", "ok"), Message("user", f"turn {turn}: your clue?"))


async def test_games_of_one_kind_spread_over_the_pool_and_each_stays_on_its_worker(
        workers: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
    """Requests carry their table's id (routed_by, which the agent runner sets around each decision):
    games whose conversations start alike no longer pile onto one worker."""
    for url, _ in workers:
        await wait_healthy(url)
    urls = [u for u, _ in workers]
    pool = WorkerPool([(u, HttpClient(u, timeout_s=5, retries=0)) for u in urls], poll_s=0)
    try:
        # The old key, the conversation's start, is the same for every turn of every such game: one worker.
        assert len({affinity_key(same_rules(turn)) for turn in range(3)}) == 1

        def key(n: int) -> bytes:
            return route_key(GenerateRequest(messages=same_rules(0), route=f"game:{n}"))

        games = games_on_each(urls, 4, key)
        seen: dict[int, set[str]] = {}
        for turn in range(3):
            for n in games:
                with routed_by(f"game:{n}"):
                    req = ScoreRequest(messages=same_rules(turn), labels=("A", "B")) if turn % 2 else \
                        GenerateRequest(messages=same_rules(turn), max_tokens=2, seed=n)
                assert req.route == f"game:{n}"
                before = dict(pool.routed)
                await (pool.score_labels(req) if isinstance(req, ScoreRequest) else pool.generate(req))
                seen.setdefault(n, set()).update(u for u in urls if pool.routed[u] > before[u])
        assert seen == {n: {rank(key(n), urls)[0]} for n in games}, seen  # each game on its own worker, by its id
        assert pool.routed == dict.fromkeys(urls, 12), pool.routed  # four games of three turns on each
    finally:
        await pool.aclose()


async def test_the_agent_runner_names_the_table_on_every_model_request() -> None:
    from bot.core.agents import AgentRunner
    from games import get
    from models.agents.base import Decision

    routes: list[str] = []

    class Recorder:
        spec = "recorder"

        async def act(self, obs: object, spec: object, **kw: object) -> Decision:
            routes.append(GenerateRequest(messages=same_rules(0)).route)
            assert isinstance(spec, (Choice, Text))
            return Decision(random_action(spec, random.Random(0), NONSENSE))

    g = get("spy")
    state, _ = g.new(g.make_config("classic"), 4, 3)
    seat = min(g.to_act(state))
    await AgentRunner(lambda spec, seed: Recorder()).decide(g, state, seat, game_id=41, spec="recorder", seed=1)
    assert routes == ["game:41"] and current_route() == ""
    assert GenerateRequest(messages=same_rules(0)).route == ""


def test_a_worker_url_with_credentials_is_refused_without_its_password() -> None:
    for make in (lambda u: WorkerPool([(u, HttpClient("http://127.0.0.1:1", retries=0))]), lambda u: HttpClient(u)):
        with pytest.raises(ValueError, match="HUSHTABLE_WORKER_TOKEN") as err:
            make("http://bob:hunter2pw@10.0.0.5:8100")
        assert "hunter2pw" not in str(err.value) and "10.0.0.5:8100" in str(err.value)


class _Broken(HttpClient):
    async def health(self) -> dict[str, object]:
        raise RuntimeError("not an InferenceError")


async def test_a_health_check_that_raises_anything_keeps_the_poller_alive() -> None:
    pool = WorkerPool([(u, _Broken(u, retries=0)) for u in ("http://127.0.0.1:1", "http://127.0.0.1:2")], poll_s=0.01)
    await pool.start()
    try:
        await asyncio.sleep(0.2)
        assert pool._poller is not None and not pool._poller.done()
        assert pool.healthy() == []
    finally:
        await pool.aclose()


async def test_with_every_worker_hung_a_request_fails_at_once_instead_of_waiting_out_the_timeout() -> None:
    accepted: list[asyncio.StreamWriter] = []

    async def hang(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)  # read nothing, answer nothing

    servers = [await asyncio.start_server(hang, "127.0.0.1", 0) for _ in range(2)]
    urls = [f"http://127.0.0.1:{s.sockets[0].getsockname()[1]}" for s in servers]
    pool = WorkerPool([(u, HttpClient(u, timeout_s=0.5, retries=0)) for u in urls], poll_s=0, backoff_s=60)
    from models.types import WorkerUnavailable

    try:
        with pytest.raises(WorkerUnavailable):
            await pool.generate(GenerateRequest(messages=game(1, 0)))
        tried = len(accepted)
        assert tried == 2 and pool.healthy() == []
        for n in range(5):
            with pytest.raises(WorkerUnavailable, match="no inference worker is healthy"):
                await pool.generate(GenerateRequest(messages=game(2 + n, 0)))
        assert len(accepted) == tried  # no request went to a hung worker again
    finally:
        await pool.aclose()
        for w in accepted:
            w.close()
        for s in servers:
            s.close()

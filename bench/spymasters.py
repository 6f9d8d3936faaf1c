"""Spymasters self-play on seeded boards: the single-team measure of the Codenames AI competition.

One team (the starting team, 9 words) plays a board alone: its spymaster and guesser are
the agent under test, and the other team passes every turn (the bench hands the turn
back; the engine otherwise plays its own rules: a wrong card ends the turn, the assassin
ends the game). Printed per agent, on the same boards:

- turns to clear the team's words (mean over boards cleared), and the competition's score
  (turns, 25 for a board lost to the assassin or to the other team's words);
- assassin hits; the clue numbers given (distribution and mean); words found per clue;
- clues that are a variant of any word on the board (``games.text.reveals_secret`` both
  ways, hidden or revealed): the rules refuse the hidden ones, this counts all;
- first-try legal moves, where each move came from (its decision row), and the move
  latency p50 for clues (text) and for numbers and guesses (choices).

    PYTHONPATH=$PWD .venv/bin/python bench/spymasters.py --boards 20
    PYTHONPATH=$PWD .venv/bin/python bench/spymasters.py --boards 20 --agents strategist,embed:minilm --out after.json
    PYTHONPATH=$PWD .venv/bin/python bench/spymasters.py --agents llm:default-assoc,embed:assoc \
        --define '{"llm:default-assoc": {"model": "default", "params": {"embed": "assoc"}}}'

The same script runs on an older checkout (``PYTHONPATH=<that checkout>``) for the before column.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402
from bot.core.agents import AgentRunner  # noqa: E402
from games.base import Choice  # noqa: E402
from games.text import reveals_secret  # noqa: E402
from models.agents.provenance import decision_of  # noqa: E402
from storage.tables import ActionSource  # noqa: E402

LOST = 25  # the competition's score of a board lost before it is cleared
SEATS = 4


def build_factory(define: str = "") -> tuple[Any, Any]:
    """The agent factory; ``define`` adds named entries (HUSHTABLE_AGENTS' JSON), e.g. the default
    on another embedder: ``{"llm:default-assoc": {"model": "default", "params": {"embed": "assoc"}}}``."""
    from bot.settings import default_model_cache
    from models.agents import AgentRegistry
    from models.agents.registry import entries_from_json
    from models.agents.wiring import VOCAB_CACHE, register_agents
    from models.client import ClientOptions, ClientPool
    from models.worker.embedding_backend import embedder_for

    pool = ClientPool(ClientOptions())
    registry = AgentRegistry()
    for entry in entries_from_json(define):
        registry.define(entry)
    # The app's vocabulary cache: a second run reads the embedded vocabulary instead of computing it.
    register_agents(registry, connect=pool.get, embedder_for=embedder_for,
                    vocab_cache=default_model_cache() / VOCAB_CACHE)
    return registry, pool


def variant_of_board(clue: str, board: tuple[str, ...]) -> str | None:
    for word in board:
        if reveals_secret(clue, word) or reveals_secret(word, clue):
            return word
    return None


async def play_board(agent: str, seed: int, registry: Any, table_no: int) -> dict[str, Any]:
    g = games.get("spymasters")
    s, _ = g.new(g.make_config(), SEATS, seed)
    team = s.turn
    runner = AgentRunner(registry, timeout_s=180.0, retries=3, fallback_spec="random")
    moves: list[dict[str, Any]] = []
    clues: list[dict[str, Any]] = []
    for _ in range(400):
        if g.result(s) is not None:
            break
        if s.turn != team:  # the other team passes: the single-team measure
            s = dataclasses.replace(s, turn=team)
        seat = min(g.to_act(s))
        spec = g.legal(s, seat)
        started = time.perf_counter()
        out = await runner.decide(g, s, seat, game_id=table_no, spec=agent, seed=seed * 100 + seat)
        wall = (time.perf_counter() - started) * 1000
        s, _ = g.apply(s, seat, out.action)
        decided = next((d for c in reversed(out.calls) if (d := decision_of(c.prompt)) is not None), None)
        errors = sum(1 for c in out.calls if c.error)
        moves.append({"kind": out.action.kind, "choice": isinstance(spec, Choice), "wall_ms": wall,
                      "first_try": out.source is ActionSource.AI and errors == 0,
                      "source": decided.get("source") if decided else str(out.source)})
        if out.action.kind == "clue":
            clue = out.action.value[0]
            clues.append({"clue": clue, "variant_of": variant_of_board(clue, s.words)})
        elif out.action.kind == "number":
            clues[-1]["number"] = int(out.action.value[0])
    turns = [c for c in s.history if c.team == team]
    found = [sum(1 for gss in c.guesses if gss.card == team) for c in turns]
    assassin = any(gss.card == "assassin" for c in turns for gss in c.guesses)
    cleared = s.winner == team and not assassin
    for c, n in zip(clues, found, strict=False):
        c["found"] = n
    return {"agent": agent, "seed": seed, "turns": len(turns), "cleared": cleared, "assassin": assassin,
            "score": len(turns) if cleared else LOST, "clues": clues, "moves": moves}


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    clues = [c for r in runs for c in r["clues"]]
    numbers = [c["number"] for c in clues if "number" in c]
    moves = [m for r in runs for m in r["moves"]]
    cleared = [r for r in runs if r["cleared"]]
    return {
        "boards": len(runs),
        "cleared": len(cleared),
        "turns to clear": statistics.mean(r["turns"] for r in cleared) if cleared else float("nan"),
        "score": statistics.mean(r["score"] for r in runs),
        "assassin hits": sum(r["assassin"] for r in runs),
        "numbers": dict(sorted(Counter(numbers).items())),
        "mean number": statistics.mean(numbers) if numbers else float("nan"),
        "found per clue": statistics.mean(c.get("found", 0) for c in clues) if clues else float("nan"),
        "variant clues": sum(1 for c in clues if c["variant_of"]),
        "clues": len(clues),
        "first-try legal": sum(m["first_try"] for m in moves) / len(moves) if moves else float("nan"),
        "sources": dict(Counter(m["source"] for m in moves)),
        "text p50 ms": pct([m["wall_ms"] for m in moves if not m["choice"]], 0.5),
        "choice p50 ms": pct([m["wall_ms"] for m in moves if m["choice"]], 0.5),
    }


def show(by_agent: dict[str, dict[str, Any]]) -> None:
    names = list(by_agent)
    keys = list(next(iter(by_agent.values())))
    print(f"{'':<18}" + "".join(f"{n:>28}" for n in names))
    for k in keys:
        cells = []
        for n in names:
            v = by_agent[n][k]
            cells.append(f"{v:.2f}" if isinstance(v, float) else str(v))
        print(f"{k:<18}" + "".join(f"{c:>28}" for c in cells))


async def main(args: argparse.Namespace) -> None:
    registry, pool = build_factory(args.define)
    runs: dict[str, list[dict[str, Any]]] = {}
    try:
        for a_no, agent in enumerate(args.agents.split(",")):
            warm = getattr(registry(agent, 0), "warm", None)
            if warm is not None:
                warm()  # the vocabulary's embeddings, outside every move's time
            runs[agent] = [await play_board(agent, args.first + i, registry, a_no * 10_000 + i) for i in range(args.boards)]
    finally:
        await pool.aclose()
    show({a: summary(r) for a, r in runs.items()})
    if args.verbose:
        for agent, rs in runs.items():
            for r in rs:
                print(agent, r["seed"], r["score"], [(c["clue"], c.get("number"), c.get("found")) for c in r["clues"]])
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1), encoding="utf-8")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--boards", type=int, default=20)
    p.add_argument("--first", type=int, default=0, help="seed of the first board")
    p.add_argument("--agents", default="strategist,embed:minilm")
    p.add_argument("--define", default="", help="extra agent entries, HUSHTABLE_AGENTS' JSON")
    p.add_argument("--out", default="")
    p.add_argument("-v", "--verbose", action="store_true")
    asyncio.run(main(p.parse_args()))

"""AI players head to head: seeded AI-only games of every game and variant, the same deals for every agent.

Each agent plays every seat of its own copy of each game (seed i gives every agent
the same deal), through the table's AgentRunner with the app's defaults (3 re-asks,
the embedding baseline as fallback, the random player behind it). The bundled model
is loaded once and shared. Printed per agent and role:

- first-try legal: share of moves where the agent's first answer was played (no
  refusal by its own parser, no refusal by the engine, no fallback);
- fallback: share of moves played by the fallback chain; retries: refused answers per move;
- move latency p50/p95, free text and choices apart: the wall time of the move, and
  the sum of the latencies its log rows carry (equal when the log is truthful);
- outcomes: Decrypto miscommunications, interceptions, team wins and turns; Who-is-Spy
  spy wins; Chameleon caught / guessed / escaped;
- the chosen-position histogram of label-scored choices with four options or more
  (position in the first ordering shown to the model);
- the mean SoftScore of Chameleon clues (non-chameleon seats) by the embedding
  estimate in models/agents/strategy.py, where that module exists.

- where each move came from (its decision row: model, specialist, fallback, random, rules),
  the mean model share, and the moves that reached a deadline (``timeouts``);
- ``--ablation``: the default again with the bundled model in every use (``llm:default+model``:
  choices, proposals, shortlist; one scoring pass, fixed tokens) on the same deals;
- ``--human-replay N``: N recorded Decrypto games of our own (an embedding encoder with k=16 and
  one with k=120; decoder embed:minilm; a random interceptor; every turn played), replayed by the
  paper's Table 1 protocol with each agent in Eve's and in Bob's seat;
- ``--pairs N``: Decrypto encoder-decoder pairs (default, embedding) against the same
  interceptors on the same N deals: interceptions, miscommunications, turns, wins.

``--out FILE`` keeps the raw moves as JSON; ``--compare FILE`` prints a stored run
(e.g. one made on an older checkout) beside this one, rescoring its clues with
this checkout's evaluator so both columns use the same yardstick.

    PYTHONPATH=$PWD python bench/players.py --games 1 --out after.json --compare before.json
    PYTHONPATH=$PWD python bench/players.py --games 2 --agents strategist,embed:minilm --ablation --human-replay 6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import games  # noqa: E402
from bot.core.agents import AgentRunner  # noqa: E402
from games import catalog  # noqa: E402
from games.base import Action, Choice, Game, Text  # noqa: E402
from games.metrics import GameNotOver, seat_outcomes  # noqa: E402
from games.record import Record  # noqa: E402
from models.agents.provenance import decision_of  # noqa: E402
from storage.tables import ActionSource, AgentOperation  # noqa: E402

# (game, variant, seats, options): small enough for a shared 2-core machine.
TABLES: list[tuple[str, str, int, dict[str, Any]]] = [
    ("decrypto", "benchmark", 3, {"max_turns": 4}),
    ("decrypto", "teams", 4, {"max_rounds": 3}),
    ("spy", "classic", 5, {}),
    ("spy", "spygame", 4, {}),
    ("chameleon", "classic", 4, {}),
    ("chameleon", "sneak", 4, {}),
]
DEFAULT_AGENTS = "strategist,llm:plain,embed:minilm,random"
WITH_MODEL = "llm:default+model"
ABLATION = '{"llm:default+model": {"model": "default", "params": {"model": "all", "orderings": "1"}}}'
LOOSE = '{"embed:loose": {"model": "minilm", "params": {"k": "120"}}}'


def build_factory(define: str = "") -> tuple[Any, Any]:
    """The agent factory over one shared client pool (works on this checkout and on older ones).

    ``define`` is extra named entries, HUSHTABLE_AGENTS' JSON (e.g. a variant's budget)."""
    from models.agents import AgentRegistry
    from models.agents.wiring import register_agents
    from models.client import ClientOptions, ClientPool
    from models.worker.embedding_backend import embedder_for

    pool = ClientPool(ClientOptions())
    registry = AgentRegistry()
    if define:
        from models.agents.registry import entries_from_json

        for entry in entries_from_json(define):
            registry.define(entry)
    register_agents(registry, connect=pool.get, embedder_for=embedder_for)
    return registry, pool


def seat_role(game_id: str, variant: str, seat: int, view: Any) -> str | None:
    """The seat's role at this move, from what the game declares: the seat's own role where the
    variant fixes roles to seats (the descriptor's seat shape), else the role the seat's view shows
    (the role of this round where roles rotate, as Decrypto's teams do). None: a role dealt and hidden
    from the seat itself (Who-is-Spy), which ``dealt_roles`` reads once the game is over."""
    shape = catalog.descriptor(game_id).seat_shape(variant)
    if shape is not None:
        return str(shape.roles[seat])
    role = view.get("role") if isinstance(view, dict) else None
    return role if isinstance(role, str) and role else None


def dealt_roles(g: Game, cfg: Any, seats: int, seed: int, actions: Sequence[tuple[int, Action]]) -> list[str]:
    """Each seat's role over the whole game by the descriptor's seat reader ("?" for a game cut short)."""
    try:
        return [str(o.role) for o in seat_outcomes(Record(g, cfg, seats, seed, tuple(actions), None))]
    except GameNotOver:
        return ["?"] * seats


def chosen_position(calls: Sequence[Any]) -> tuple[int, int] | None:
    """(position of the chosen option in the first ordering shown, number of options) of a scored choice."""
    for c in calls:
        if c.operation == "score" and isinstance(c.prompt, dict) and isinstance(c.prompt.get("labels"), dict):
            labels = list(c.prompt["labels"])
            if c.raw_output in labels:
                return labels.index(c.raw_output), len(labels)
    return None


async def play(game_id: str, variant: str, seats: int, opts: dict[str, Any], seed: int, agent: str,
               factory: Any, table_no: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    g: Game = games.get(game_id)
    cfg = g.make_config(variant, **opts)
    s, _ = g.new(cfg, seats, seed)
    runner = AgentRunner(factory, timeout_s=180.0, retries=3, fallback_spec="embed:minilm")
    moves: list[dict[str, Any]] = []
    actions: list[tuple[int, Action]] = []
    hidden: list[tuple[dict[str, Any], int]] = []  # moves whose seat's role is read when the game is over
    for _ in range(500):
        if g.result(s) is not None:
            break
        seat = min(g.to_act(s))
        spec = g.legal(s, seat)
        obs = g.observe(s, seat)
        started = time.perf_counter()
        out = await runner.decide(g, s, seat, game_id=table_no, spec=agent, seed=seed * 100 + seat)
        wall = (time.perf_counter() - started) * 1000
        s, _ = g.apply(s, seat, out.action)
        actions.append((seat, out.action))
        if isinstance(spec, Choice) and len(spec.options) == 1:
            continue  # "ready": nothing to decide
        errors = sum(1 for c in out.calls if c.error)
        decided = next((d for c in reversed(out.calls) if (d := decision_of(c.prompt)) is not None), None)
        move: dict[str, Any] = {
            "agent": agent, "game": f"{game_id}:{variant}", "role": seat_role(game_id, variant, seat, obs.view),
            "kind": "choice" if isinstance(spec, Choice) else "text", "source": out.source,
            "first_try": out.source is ActionSource.AI and errors == 0, "errors": errors,
            "wall_ms": wall, "log_ms": sum(c.latency_ms for c in out.calls),
            "position": chosen_position(out.calls) if out.source is ActionSource.AI else None,
            "decided_by": decided.get("source") if decided else None,
            "model_share": float(decided.get("model_share") or 0.0) if decided else None,
            "timeout": bool(decided.get("timeout")) if decided else None,
            "model_calls": sum(1 for c in out.calls if c.operation in (AgentOperation.GENERATE, AgentOperation.SCORE) and c.model_id),
        }
        scored = SCORED_CLUES.get(game_id) if isinstance(spec, Text) and spec.kind in catalog.descriptor(game_id).clue_kinds else None
        if scored is not None and (clue := scored(obs.view, out.action)) is not None:
            move["clue"] = clue
        if move["role"] is None:
            hidden.append((move, seat))
        moves.append(move)
    if hidden:
        dealt = dealt_roles(g, cfg, seats, seed, actions)
        for move, seat in hidden:
            move["role"] = dealt[seat]
    res = g.result(s)
    return moves, {"agent": agent, "game": f"{game_id}:{variant}", "seed": seed,
                   "details": _outcome(game_id, variant, res.details if res else None)}


def _outcome(game_id: str, variant: str, d: Any) -> dict[str, Any]:
    read = OUTCOMES.get(game_id)
    return {"unfinished": 1} if d is None else read(variant, d) if read is not None else {}


def decrypto_outcome(variant: str, d: Any) -> dict[str, Any]:
    if variant == "benchmark":
        return {"misc": d["miscommunications"], "intercepts": d["interceptions"], "team_won": int(d["team_won"]), "turns": d["turns"]}
    toks = d["tokens"].values()
    return {"misc": sum(t["miscommunications"] for t in toks), "intercepts": sum(t["interceptions"] for t in toks), "turns": d["rounds"]}


def chameleon_clue(v: Any, action: Action) -> dict[str, Any] | None:
    """An innocent seat's clue with its card (its view ``v``), for the SoftScore columns (not the chameleon's own)."""
    return None if v.get("is_chameleon") else {"clue": action.value[0], "secret": v["secret"], "card": list(v["card"]), "category": v.get("category", "")}


# This bench's per-game parts, found by game id as models.parts finds a game's modules (no function here asks which
# game it holds): a result as the outcome columns, the clue moves (descriptor's clue_kinds) the SoftScore scores.
OUTCOMES: dict[str, Callable[[str, Any], dict[str, Any]]] = {
    "decrypto": decrypto_outcome,
    "spy": lambda variant, d: {"spies_won": int(d["team"] != "villagers"), "rounds": d["rounds"]},
    "chameleon": lambda variant, d: {k: d["metrics"][k] for k in ("caught", "guessed", "escaped")}}
SCORED_CLUES: dict[str, Callable[[Any, Action], dict[str, Any] | None]] = {"chameleon": chameleon_clue}


def pct(xs: Sequence[float], q: float) -> float:
    if not xs:
        return float("nan")
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


def soft_scores(clues: Sequence[dict[str, Any]]) -> dict[str, float] | None:
    """Mean SoftScore of the clues by the SNEAK issue's bundled embedding evaluator (models/eval, with its
    embedding decoys and calibrated temperatures) and by the strategy's own estimate (models/agents/strategy.py)."""
    if not clues:
        return None
    out: dict[str, float] = {}
    try:
        from models.agents.embed import VocabIndex
        from models.agents.strategy import EmbeddingJudge
        from models.worker.embedding_backend import embedder_for
    except ImportError:
        return None
    embedder = embedder_for("minilm")
    judge = EmbeddingJudge(VocabIndex(embedder))
    out["own"] = float(statistics.mean(judge.soft_score(c["clue"], c["secret"], c["card"]) for c in clues))
    try:
        from models.eval.decoys import EmbeddingDecoys, pick
        from models.eval.evaluators import EmbeddingEvaluator, secret_index
        from models.eval.instances import Instance
        from models.eval.metrics import score
    except ImportError:
        return out
    ev, decoys = EmbeddingEvaluator(embedder, "embed:minilm"), EmbeddingDecoys(embedder)
    soft = []
    for c in clues:
        inst = Instance("chameleon", c.get("category", ""), tuple(c["card"]), c["secret"], c["clue"])
        chosen = pick(decoys.pool_now(inst.category, inst.candidates), inst.message)
        ally, cham = ev.ally_now(inst, (inst.message, *chosen)), ev.chameleon_now(inst)
        soft.append(score(ally.probs, 0, cham.probs, secret_index(inst)).soft)
    out["sneak_embed"] = float(statistics.mean(soft))
    return out


def _sources(ms: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Shares of the moves by where they came from, deadline hits, mean model share and model calls per move
    (None for a run recorded before moves said where they came from)."""
    known = [m for m in ms if m.get("decided_by")]
    if not known:
        return {}
    n = len(known)
    return {"by_model": sum(m["decided_by"] == "model" for m in known) / n,
            "by_specialist": sum(m["decided_by"] == "specialist" for m in known) / n,
            "by_fallback": sum(m["decided_by"] in ("fallback", "rules") for m in known) / n,
            "by_random": sum(m["decided_by"] == "random" for m in known) / n,
            "timeouts": sum(bool(m["timeout"]) for m in known),
            "model_share": statistics.mean(m["model_share"] or 0.0 for m in known),
            "model_calls": statistics.mean(m.get("model_calls", 0) for m in known)}


def summarize(moves: Sequence[dict[str, Any]], results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    by: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for m in moves:
        by[(m["agent"], m["game"].split(":")[0], m["role"])].append(m)
        by[(m["agent"], "all", m["kind"])].append(m)
    for key, ms in sorted(by.items()):
        out["|".join(key)] = {
            "moves": len(ms),
            "first_try": sum(m["first_try"] for m in ms) / len(ms),
            "fallback": sum(m["source"] != "ai" for m in ms) / len(ms),
            "retries": sum(m["errors"] for m in ms) / len(ms),
            "p50_s": pct([m["wall_ms"] for m in ms], 0.5) / 1000, "p95_s": pct([m["wall_ms"] for m in ms], 0.95) / 1000,
            "log_p50_s": pct([m["log_ms"] for m in ms], 0.5) / 1000,
            **_sources(ms),
        }
    for agent in dict.fromkeys(m["agent"] for m in moves):
        sizes = sorted({m["position"][1] for m in moves if m["agent"] == agent and m["kind"] == "choice" and m["position"]})
        for size in [*sizes, "all"]:
            pos = Counter(m["position"][0] for m in moves if m["agent"] == agent and m["kind"] == "choice" and m["position"]
                          and (size == "all" or m["position"][1] == size))
            n = sum(pos.values())
            hist = {"ABCDE"[min(p, 4)]: 0.0 for p in range(5)}
            for p, c in pos.items():
                hist["ABCDE"[min(p, 4)]] += c / n if n else 0
            out[f"{agent}|positions|{size} options"] = {"n": n, **hist}
        out[f"{agent}|softscore"] = soft_scores([m["clue"] for m in moves if m["agent"] == agent and "clue" in m])
        for game in dict.fromkeys(r["game"] for r in results):
            rows = [r["details"] for r in results if r["agent"] == agent and r["game"] == game]
            keys = sorted({k for r in rows for k in r})
            out[f"{agent}|outcome|{game}"] = {k: statistics.mean(r.get(k, 0) for r in rows) for k in keys} | {"games": len(rows)}
    return out


def print_tables(label: str, summary: dict[str, Any], other: dict[str, Any] | None = None) -> None:
    def cell(d: dict[str, Any] | None, k: str) -> str:
        if d is None or d.get(k) is None:
            return "-"
        v = d[k]
        return (f"{v:.0%}" if k in ("first_try", "fallback", "by_model", "by_specialist", "by_fallback", "by_random")
                else f"{v:.2f}" if isinstance(v, float) else str(v))

    cols = ["moves", "first_try", "fallback", "retries", "p50_s", "p95_s", "log_p50_s"]
    source_cols = ["by_model", "by_specialist", "by_fallback", "by_random", "timeouts", "model_share", "model_calls"]
    print(f"\n== moves ({label}{'; before -> after' if other else ''})")
    print(f"{'agent|game|role':44s} " + " ".join(f"{c:>16s}" for c in cols))
    for key, d in summary.items():
        if not isinstance(d, dict) or "first_try" not in d:
            continue
        b = other.get(key) if other else None
        print(f"{key:44s} " + " ".join(f"{(cell(b, c) + ' -> ' if other else '') + cell(d, c):>16s}" for c in cols))
    print(f"\n== where the moves came from ({label}{'; before -> after' if other else ''}; '-': the run logged no sources)")
    print(f"{'agent|game|role':44s} " + " ".join(f"{c:>16s}" for c in source_cols))
    for key, d in summary.items():
        if not isinstance(d, dict) or "first_try" not in d:
            continue
        b = other.get(key) if other else None
        print(f"{key:44s} " + " ".join(f"{(cell(b, c) + ' -> ' if other else '') + cell(d, c):>16s}" for c in source_cols))
    print("\n== chosen positions of label-scored choices, by number of options (E = the fifth position or later)")
    for key, d in summary.items():
        if "|positions|" in key:
            b = other.get(key) if other else None
            row = " ".join(f"{p}={(cell(b, p) + '->' if other else '') + cell(d, p)}" for p in "ABCDE")
            print(f"{key:44s} n={(cell(b, 'n') + '->' if other else '') + cell(d, 'n')} {row}")
    print("\n== outcomes (mean per game)")
    for key, d in summary.items():
        if "|outcome|" in key:
            b = other.get(key) if other else None
            print(f"{key:44s} " + " ".join(f"{k}={(cell(b, k) + '->' if other else '') + cell(d, k)}" for k in d))
    print("\n== mean SoftScore of Chameleon clues (non-chameleon seats): sneak_embed = models/eval's bundled embedding"
          " evaluator (strategist ranks its clues by it: judge=sneak); own = the strategy's own estimate")
    for key, v in summary.items():
        if key.endswith("|softscore"):
            b = other.get(key) if other else None
            print(f"{key:44s} " + " ".join(f"{k}={(cell(b, k) + '->' if other else '') + cell(v, k)}"
                                           for k in ("sneak_embed", "own")))


async def human_replay(registry: Any, agents: Sequence[str], n: int) -> None:
    """Record n games of our own per encoder kind, then replay them by the paper's Table 1 protocol."""
    from bot.research.human_replay import ReplaySeat, evaluate, record_game, render
    from games.record import parse

    sets: dict[str, list[Any]] = {}
    for encoder in ("embed:minilm", "embed:loose"):
        recs = []
        for i in range(n):
            lines = await record_game(registry, [encoder, "embed:minilm", "random"], 9000 + i, game_no=90000 + i)
            recs.append(parse(json.dumps(x) for x in lines))
        sets[encoder] = recs
    for encoder, recs in sets.items():
        for role in ReplaySeat:
            for agent in agents:
                t0 = time.perf_counter()
                mine, original, _ = await evaluate(recs, role, agent, registry, seeds=2, timeout_s=180.0)
                print(f"\n== human-replay protocol: {n} recorded games (encoder {encoder}), {agent} as {role.value}, "
                      f"{time.perf_counter() - t0:.0f} s")
                print(render(role, mine, original), end="")


async def pairs(registry: Any, n: int) -> None:
    """Decrypto benchmark: each encoder-decoder pair against each interceptor, on the same n deals."""
    g = games.get("decrypto")
    print(f"\n== Decrypto encoder-decoder pairs against the same interceptor, {n} deals (8 turns, 2 tokens)")
    for eve in ("embed:minilm", "strategist"):
        for pair in ("embed:minilm", "strategist"):
            t0 = time.perf_counter()
            misc = inter = turns = won = 0
            for i in range(n):
                s, _ = g.new(g.make_config("benchmark"), 3, 500 + i)
                runner = AgentRunner(registry, timeout_s=180.0, retries=3, fallback_spec="random")
                agents = [pair, pair, eve]
                while g.result(s) is None:
                    seat = min(g.to_act(s))
                    out = await runner.decide(g, s, seat, game_id=80000 + i, spec=agents[seat], seed=(500 + i) * 10 + seat)
                    s, _ = g.apply(s, seat, out.action)
                d = g.result(s).details  # type: ignore[union-attr]  # the loop ends with a result
                misc, inter = misc + d["miscommunications"], inter + d["interceptions"]
                turns, won = turns + d["turns"], won + int(d["team_won"])
            print(f"interceptor {eve:14s} pair {pair:14s} miscommunications {misc:3d}  interceptions {inter:3d}  "
                  f"mean turns {turns / n:.2f}  team won {won}/{n}  ({time.perf_counter() - t0:.0f} s)", flush=True)


async def main(args: argparse.Namespace) -> None:
    merged: dict[str, Any] = {}
    for extra in (args.define, ABLATION if args.ablation else "", LOOSE if args.human_replay else ""):
        merged.update(json.loads(extra) if extra.strip() else {})
    define = json.dumps(merged) if merged else ""
    registry, pool = build_factory(define)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    if args.ablation and WITH_MODEL not in agents:
        agents.append(WITH_MODEL)
    for name in agents:  # one-off set-up (the vocabulary's embedding) is no move's work
        warm = getattr(registry(name, 0), "warm", None)
        if callable(warm):
            await asyncio.to_thread(warm)
    tables = [t for t in TABLES if not args.only or f"{t[0]}:{t[1]}" in args.only.split(",")]
    moves: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    started = time.perf_counter()
    table_no = 0
    try:
        for seed in range(args.games):
            for game_id, variant, seats, opts in tables:
                for agent in agents:
                    table_no += 1
                    t0 = time.perf_counter()
                    ms, res = await play(game_id, variant, seats, opts, 1000 + seed, agent, registry, table_no)
                    moves += ms
                    results.append(res)
                    print(f"  {game_id}:{variant} seed {seed} {agent}: {len(ms)} moves, {time.perf_counter() - t0:.1f} s, "
                          f"{res['details']}", flush=True)
    finally:
        await pool.aclose()
    load = os.getloadavg()
    label = (f"{args.games} game(s) per variant, {time.perf_counter() - started:.0f} s, {os.cpu_count()} cores, "
             f"load avg {load[0]:.1f}/{load[1]:.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"label": label, "moves": moves, "results": results}, indent=1))
    summary = summarize(moves, results)
    other = None
    if args.compare:
        before = json.loads(Path(args.compare).read_text())
        other = summarize(before["moves"], before["results"])
        print(f"before: {before['label']}")
    print_tables(label, summary, other)
    if args.human_replay or args.pairs:
        registry, pool = build_factory(define)
        try:
            if args.pairs:
                await pairs(registry, args.pairs)
            if args.human_replay:
                await human_replay(registry, [a for a in agents if a != "random"], args.human_replay)
        finally:
            await pool.aclose()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1, help="seeded games per game and variant (same deals for every agent)")
    parser.add_argument("--agents", default=DEFAULT_AGENTS, help="comma-separated configured agent names")
    parser.add_argument("--only", default="", help="comma-separated game:variant to play (default: all)")
    parser.add_argument("--define", default="", help="extra agent entries, as HUSHTABLE_AGENTS JSON")
    parser.add_argument("--out", default="", help="write the raw moves and results here (JSON)")
    parser.add_argument("--compare", default="", help="a stored run to print beside this one (before -> after)")
    parser.add_argument("--ablation", action="store_true", help=f"add {WITH_MODEL}: the default with the model in every use")
    parser.add_argument("--pairs", type=int, default=0, metavar="N",
                        help="Decrypto: the default and the embedding encoder-decoder pairs against the same interceptors, N deals")
    parser.add_argument("--human-replay", type=int, default=0, metavar="N",
                        help="record N Decrypto games per encoder kind and replay them by the paper's Table 1 protocol")
    asyncio.run(main(parser.parse_args()))

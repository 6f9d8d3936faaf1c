"""``hushtable eval decrypto-refine --rounds 0,1,2,4 --games N``: hint refinement against a model of Eve.

The Decrypto paper's Figures 5 and 10: Alice (the encoder) may refine her hints for up to N
steps against a prediction of Eve's guess. Here the prediction comes from an explicit model of
Eve: an interceptor agent (``--eve-model``, by default the interceptor's own agent name, the
paper's "Eve's model, with Eve's context") shown exactly what the real interceptor will be shown,
the public history and the hints, with its own seed (a copy of Eve, not her dice). Each turn:

1. Alice's hints, as the agent gives them when nobody checks (the runner's move, with its
   re-asks and fallbacks);
2. while the model of Eve would intercept them (its guess is the code) and fewer than N
   refinements were made: Alice is asked again (the next attempt: an embedding encoder draws
   anew from its top K, an ``llm:`` encoder is told which code the interceptor would read from
   which hints), and the new hints take the old ones' place when the rules accept them (refused,
   late or failed, the last ones stand);
3. the turn is played with the last hints, the decoder's and the real interceptor's guesses.

Every hint the model of Eve would place is a hint of an intercepted code (a code is intercepted
only whole), so a refinement rewrites all three. A turn is ``refined`` when the model of Eve
intercepted Alice's first hints, and ``converged`` when refinement found hints it does not
intercept within the budget (the paper: the same hints twice in a row; an embedding encoder
draws anew at every ask, so unchanged hints would say nothing of it: ours is the condition that ends the loop).

Every budget plays the same deals (``games.base.rng(seed, ...)``-seeded engine seeds) with the
same agent seeds, so the budgets differ by refinement alone; budget 0 is the game as the agents
play it. The paper's figures give no numbers in its text; what it states is printed beside ours.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import typer

from bot.research.decrypto_tally import tally
from games.base import rng

DEFAULT_ROUNDS = "0,1,2,4"
MAX_ROUNDS = 16
PAPER_NOTE = (
    "The paper (Fig. 5 and Fig. 10; Alice and Bob GPT-4o, Eve Llama 3.1-70B, up to 8 refinement steps) gives no numbers\n"
    "in its text, only the figures. What it states: with an explicit model of Eve, episode length and win rate increase\n"
    "significantly, most with Eve's own model and context, and the gains saturate with more iterations (Alice overfits\n"
    "an imperfect proxy); Alice's own prediction (the perspective-taking prompt) hardly converges and trades\n"
    "interceptions for miscommunications (Fig. 10: 'increasingly challenging hints, which reduces interception rates,\n"
    "but at the cost of more miscommunications').\n"
)


class RefineError(ValueError):
    """Bad input to the command (one sentence for the person who typed it)."""


def parse_rounds(text: str) -> list[int]:
    """``"0,1,4"`` -> [0, 1, 4]; RefineError with one sentence otherwise."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) > MAX_ROUNDS:
            raise RefineError(f"--rounds takes whole numbers from 0 to {MAX_ROUNDS} separated by commas, not {part!r}")
        if int(part) not in out:
            out.append(int(part))
    return out


@dataclass(frozen=True)
class Agents:
    """The agent names of the three seats and of the model of Eve."""

    encoder: str
    decoder: str
    interceptor: str
    eve_model: str


@dataclass(frozen=True)
class TurnLog:
    """One turn: the code, the hints played, the guesses, and what refinement did."""

    turn: int
    code: str
    first_hints: tuple[str, ...]
    hints: tuple[str, ...]
    decoder_guess: str
    interceptor_guess: str
    refined: bool  # the model of Eve intercepted the first hints
    rounds: int  # refinements made (new hints asked for)
    converged: bool  # the hints played are ones the model of Eve does not intercept


@dataclass(frozen=True)
class Game:
    game_no: int
    miscommunications: int
    interceptions: int
    team_won: bool
    turns: int
    log: tuple[TurnLog, ...]


def game_seed(seed: int, game_no: int) -> int:
    """The engine seed (keywords and codes) of game ``game_no``: the same at every budget."""
    return rng(seed, "decrypto-refine", "deal", game_no).randrange(2**31)


def _agent_seed(seed: int, game_no: int, who: str) -> int:
    return rng(seed, "decrypto-refine", who, game_no).randrange(2**31)


def feedback_for(code: str, hints: Sequence[str]) -> str:
    """What an ``llm:`` encoder is told when the model of Eve would intercept its hints."""
    return (f"An interceptor who sees only the public hint history would guess the code {code} from the hints "
            f"{', '.join(hints)}. Give other hints for the same code: ones your decoder can still read from the "
            "keywords but the interceptor cannot place from the history.")


async def play(factory: Any, agents: Agents, budget: int, seed: int, game_no: int, *, timeout_s: float = 60.0) -> Game:
    """One benchmark game through the engine; the encoder refines up to ``budget`` times a turn."""
    from bot.core.agents import AgentRunner
    from games import get
    from games.base import Action
    from games.labels import fill_spec

    g = get("decrypto")
    state, _ = g.new(g.make_config("benchmark"), 3, game_seed(seed, game_no))
    runner = AgentRunner(factory, timeout_s=timeout_s, retries=3, fallback_spec="random")
    # The model of Eve has its own runner (its own player) and seed: a copy of Eve, not Eve.
    proxy = AgentRunner(factory, timeout_s=timeout_s, retries=3, fallback_spec="random")
    seeds = {0: _agent_seed(seed, game_no, "encoder"), 1: _agent_seed(seed, game_no, "decoder"),
             2: _agent_seed(seed, game_no, "interceptor")}
    proxy_seed = _agent_seed(seed, game_no, "model-of-eve")
    specs = {0: agents.encoder, 1: agents.decoder, 2: agents.interceptor}
    pending: dict[str, Any] = {}
    guesses: dict[int, str] = {}
    turns: list[TurnLog] = []

    async def eve_would_intercept(hints: Action, code: str) -> bool:
        after, _ = g.apply(state, 0, hints)
        out = await proxy.decide(g, after, 2, game_id=game_no, spec=agents.eve_model, seed=proxy_seed)
        return bool(out.action.value[0] == code)

    for _ in range(200):
        if g.result(state) is not None:
            break
        seat = min(g.to_act(state))
        if seat == 0:
            code = str(g.observe(state, 0).view["code"])
            first = (await runner.decide(g, state, 0, game_id=game_no, spec=specs[0], seed=seeds[0])).action
            hints, rounds = first, 0
            refined = converged = False
            if budget > 0:
                refined = await eve_would_intercept(hints, code)
                converged = not refined
                player = runner.player(game_no, 0, specs[0], seeds[0])
                raw = g.legal(state, 0)
                assert raw is not None  # the encoder is to act
                obs, legal = g.observe(state, 0), fill_spec(raw)
                while refined and not converged and rounds < budget:
                    rounds += 1
                    try:
                        decision = await asyncio.wait_for(
                            player.act(obs, legal, feedback=feedback_for(code, hints.value), attempt=rounds), timeout_s)
                        g.apply(state, 0, decision.action)
                    except Exception:  # refused by the rules, too slow, or the agent failed: the last hints stand
                        continue
                    hints = decision.action
                    converged = not await eve_would_intercept(hints, code)
            state, _ = g.apply(state, 0, hints)
            pending = {"code": code, "first": tuple(first.value), "hints": tuple(hints.value), "refined": refined,
                       "rounds": rounds, "converged": converged}
            continue
        out = await runner.decide(g, state, seat, game_id=game_no, spec=specs[seat], seed=seeds[seat])
        state, _ = g.apply(state, seat, out.action)
        guesses[seat] = str(out.action.value[0])
        if 1 in guesses and 2 in guesses:
            turns.append(TurnLog(len(turns) + 1, pending["code"], pending["first"], pending["hints"], guesses[1], guesses[2],
                                 pending["refined"], pending["rounds"], pending["converged"]))
            guesses = {}
    runner.forget(game_no)
    proxy.forget(game_no)
    result = g.result(state)
    if result is None:  # the engine always ends a benchmark game within max_turns
        raise RuntimeError(f"game {game_no} did not end")
    d = result.details
    return Game(game_no, int(d["miscommunications"]), int(d["interceptions"]), bool(d["team_won"]), int(d["turns"]),
                tuple(turns))


@dataclass(frozen=True)
class Row:
    """One refinement budget over the games."""

    rounds: int
    games: int
    miscommunications: int
    interceptions: int
    ended_miscommunication: float
    ended_interception: float
    ended_both: float
    team_won: float
    turns: float
    turns_se: float
    turns_played: int
    refined: int  # turns whose first hints the model of Eve intercepted
    converged: int  # of them, turns where refinement found hints it does not intercept
    rounds_used: int  # refinements made over all turns
    wall_s: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def row_of(rounds: int, played: Sequence[Game], wall_s: float) -> Row:
    t = tally(played)
    logs = [x for g in played for x in g.log]
    return Row(rounds, t.games, t.miscommunications, t.interceptions, t.ended_miscommunication, t.ended_interception,
               t.ended_both, t.team_won, t.turns, t.turns_se, len(logs), sum(x.refined for x in logs),
               sum(x.refined and x.converged for x in logs), sum(x.rounds for x in logs), wall_s)


async def sweep(factory: Any, agents: Agents, budgets: Sequence[int], games: int, seed: int, *, timeout_s: float = 60.0,
                progress: Callable[[str], None] | None = None) -> tuple[list[Row], list[list[Game]]]:
    rows, played = [], []
    for budget in budgets:
        t0 = time.perf_counter()
        done = []
        for i in range(1, games + 1):
            done.append(await play(factory, agents, budget, seed, i, timeout_s=timeout_s))
            if progress is not None:
                progress(f"rounds {budget}: game {i}/{games}")
        rows.append(row_of(budget, done, time.perf_counter() - t0))
        played.append(done)
    return rows, played


def render(rows: Sequence[Row], agents: Agents, *, games: int, seed: int, load_s: float) -> str:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    same = " (the interceptor's own model, its own seed)" if agents.eve_model == agents.interceptor else ""
    lines = [f"Decrypto hint refinement against a model of Eve: encoder {agents.encoder}, decoder {agents.decoder}, "
             f"interceptor {agents.interceptor}; model of Eve {agents.eve_model}{same}; {games} games per budget, seed {seed}",
             "rounds: the most refinements a turn; misc/int: tokens summed over the games; end:*: share of games ended by two "
             "miscommunications, two interceptions, both on one turn; turns: mean ± s.e.",
             "refined: turns whose first hints the model of Eve intercepted; conv: of them, turns where refinement found "
             "hints it does not intercept; asks: refinements made",
             f"{'rounds':>6} {'games':>5} {'misc':>5} {'int':>5} {'end:misc':>9} {'end:int':>8} {'end:both':>9} "
             f"{'team win':>9} {'turns':>12} {'refined':>10} {'conv':>5} {'asks':>5} {'wall s':>7}"]
    for r in rows:
        refined = f"{r.refined}/{r.turns_played}" if r.rounds else "-"
        conv = str(r.converged) if r.rounds else "-"
        lines.append(f"{r.rounds:>6} {r.games:>5} {r.miscommunications:>5} {r.interceptions:>5} {r.ended_miscommunication:>9.0%} "
                     f"{r.ended_interception:>8.0%} {r.ended_both:>9.0%} {r.team_won:>9.0%} {r.turns:>6.2f} ± {r.turns_se:<4.2f} "
                     f"{refined:>10} {conv:>5} {r.rounds_used:>5} {r.wall_s:>7.1f}")
    lines.append(f"wall time: {sum(r.wall_s for r in rows):.1f} s for the games plus {load_s:.1f} s building and warming the agents, "
                 f"one process on a machine with {cores} core(s) available")
    lines.append("")
    lines.append(PAPER_NOTE)
    return "\n".join(lines)


def command(
    rounds: str = typer.Option(DEFAULT_ROUNDS, "--rounds", help="Refinement budgets to compare, comma-separated (0: none; the paper: up to 8)."),
    games: int = typer.Option(20, "--games", min=1, help="Games per budget (the same deals at every budget)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the deals and of the agents."),
    encoder: str = typer.Option("embed:minilm", "--encoder", help="Alice's agent name."),
    decoder: str = typer.Option("embed:minilm", "--decoder", help="Bob's agent name."),
    interceptor: str = typer.Option("embed:assoc", "--interceptor", help="Eve's agent name."),
    eve_model: str | None = typer.Option(None, "--eve-model", help="The agent that predicts Eve's guess (default: the interceptor's name; "
                                         "the encoder's name is the paper's 'Alice's model' proxy)."),
    timeout_s: float = typer.Option(60.0, "--timeout", help="Deadline of one move in seconds."),
    as_json: bool = typer.Option(False, "--json", help="One JSON object per budget instead of the table."),
) -> None:
    """The Decrypto paper's hint refinement against a model of Eve (Fig. 5 and 10): interceptions and
    miscommunications with 0, 1, 2.. refinement rounds."""
    import json

    from bot.app import build_agents
    from bot.settings import Settings
    from models.client import ClientPool

    try:
        budgets = parse_rounds(rounds)
    except RefineError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    agents = Agents(encoder, decoder, interceptor, eve_model or interceptor)
    settings = Settings()
    pool = ClientPool(settings.client_options())

    async def go() -> tuple[list[Row], float]:
        try:
            t0 = time.perf_counter()
            registry = build_agents(settings, pool)
            for name in dict.fromkeys((agents.encoder, agents.decoder, agents.interceptor, agents.eve_model)):
                registry.entry(name)  # an unknown name is refused before any game
                # An embedding agent's vocabulary is embedded now, so the first budget's time is its games' alone.
                warm = getattr(registry(name, 0), "warm", None)
                if callable(warm):
                    await asyncio.to_thread(warm)
            load_s = time.perf_counter() - t0
            rows, _ = await sweep(registry, agents, budgets, games, seed, timeout_s=timeout_s,
                                  progress=lambda line: typer.echo(line, err=True))
            return rows, load_s
        finally:
            await pool.aclose()

    try:
        rows, load_s = asyncio.run(go())
    except ValueError as exc:  # an unknown agent name, a misconfigured entry
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        for r in rows:
            typer.echo(json.dumps(r.to_json()))
        return
    typer.echo(render(rows, agents, games=games, seed=seed, load_s=load_s), nl=False)


__all__ = ["Agents", "DEFAULT_ROUNDS", "Game", "RefineError", "Row", "TurnLog", "command", "feedback_for", "game_seed",
           "parse_rounds", "play", "render", "row_of", "sweep"]

"""``hushtable eval decrypto-human FILE --role interceptor|decoder --agent NAME``: the Decrypto paper's human replay.

The paper's Table 1 protocol: recorded benchmark games are replayed with an agent in
Eve's seat (``interceptor``) or Bob's (``decoder``); the other seats play their recorded
moves, turn by turn (the recorded hints and codes; the recorded guesses of the other
guesser). The game ends by the benchmark's rules (two interception or two
miscommunication tokens, or ``max_turns`` survived), so an agent that intercepts sooner
shortens the game. It ends and counts as the benchmark's own replay loop does on the same
guesses: the team wins only by surviving ``max_turns``; a replay that runs out of
recorded turns first ends there, neither side's win, so it is not a team win (the table
says how many games ended so, ``outlived``). The paper's humans played on to turn 8
whatever the tokens, and those later turns are what a replay in which the agent guesses
otherwise goes on with: the benchmark's file (``[{"summarized_history": ...}]``) is read
with every turn as a move (``decrypto_fair.every_turn``). Record your own games with the
token limits raised (``max_interceptions``/``max_miscommunications``) to get every turn.

Printed: the Table 1 row of the agent (miscommunications and interceptions summed over
the games, the encoder-decoder team's win rate, mean turns; mean ± s.e. over ``--seeds``
agent seeds) beside the paper's rows and the row of the records as recorded, where each
AI move came from, and with ``--transcript`` each turn as each seat saw it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import typer

from bot.core.agents import AgentFactory, AgentRunner
from games.base import Action, Seat
from games.decrypto import Decrypto
from games.record import Record
from models.agents.provenance import Tally, decision_of


class ReplaySeat(StrEnum):
    INTERCEPTOR = "interceptor"
    DECODER = "decoder"

    @property
    def seat(self) -> Seat:
        """The benchmark's seats: 0 encoder (Alice), 1 decoder (Bob), 2 interceptor (Eve)."""
        return 2 if self is ReplaySeat.INTERCEPTOR else 1


@dataclass(frozen=True)
class PaperRow:
    name: str
    miscommunications: float
    interceptions: float
    win_rate: float
    turns: float
    se: tuple[float, float, float, float] | None = None  # the paper's standard errors over its 3 seeds, same order

    def cells(self) -> tuple[str, ...]:
        """The row as the paper prints it: mean ± s.e. (percentages for the win rate)."""
        values = (self.miscommunications, self.interceptions, self.win_rate, self.turns)
        shown = tuple(f"{v:.2%}" if i == 2 else f"{v:.2f}" for i, v in enumerate(values))
        if self.se is None:
            return shown
        return tuple(f"{s} ± {e:.2%}" if i == 2 else f"{s} ± {e:.2f}" for i, (s, e) in enumerate(zip(shown, self.se, strict=True)))


PAPER_TABLE = "Decrypto Table 2, the expanded Table 1: its 10 human games, mean ± s.e. over 3 seeds"
PAPER: Mapping[ReplaySeat, tuple[PaperRow, ...]] = {
    # Table 2 of the Decrypto paper (the expanded Table 1), every row as printed.
    ReplaySeat.INTERCEPTOR: (
        PaperRow("Word2Vec", 11.00, 8.00, 0.40, 7.00, (0, 0, 0, 0)),
        PaperRow("GloVe", 9.00, 9.00, 0.20, 6.50, (0, 0, 0, 0)),
        PaperRow("Llama 3.1-8B-Instruct", 11.67, 6.33, 0.4667, 6.97, (0.33, 0.88, 0.0333, 0.13)),
        PaperRow("ExploreToM-8B", 11.67, 4.00, 0.4333, 6.90, (0.33, 2.31, 0.0667, 0.20)),
        PaperRow("Llama 3.1-70B-Instruct", 11.33, 8.33, 0.4667, 6.80, (0.33, 1.76, 0.0333, 0.21)),
        PaperRow("DeepSeek-R1-Dist-32B", 9.33, 10.67, 0.30, 6.33, (0.33, 0.88, 0.0577, 0.03)),
        PaperRow("GPT-4o", 10.67, 10.00, 0.3667, 6.50, (0.88, 0.58, 0.0333, 0.15)),
        PaperRow("o1-high", 9.33, 15.67, 0.20, 6.23, (0.33, 0.88, 0.0577, 0.12)),
        PaperRow("o3-high", 6.67, 19.33, 0.0667, 5.50, (0.33, 0.33, 0.0333, 0.15)),
        PaperRow("Claude 3.7 (+ ext. thinking)", 8.33, 14.00, 0.20, 6.30, (0.33, 0.58, 0, 0.12)),
    ),
    ReplaySeat.DECODER: (
        PaperRow("Word2Vec", 20.00, 3.00, 0.0, 2.70, (0, 0, 0, 0)),
        PaperRow("GloVe", 20.00, 5.00, 0.0, 3.10, (0, 0, 0, 0)),
        PaperRow("Llama 3.1-8B-Instruct", 20.00, 4.33, 0.0, 3.00, (0, 0.88, 0, 0.15)),
        PaperRow("ExploreToM-8B", 20.00, 3.00, 0.0, 2.53, (0, 0, 0, 0.09)),
        PaperRow("Llama 3.1-70B-Instruct", 18.67, 7.67, 0.0333, 4.70, (0.88, 0.33, 0.0333, 0.12)),
        PaperRow("DeepSeek-R1-Dist-32B", 19.67, 6.67, 0.0, 4.43, (0.33, 1.20, 0, 0.22)),
        PaperRow("GPT-4o", 17.33, 8.67, 0.0333, 5.23, (0.88, 0.67, 0.0333, 0.12)),
        PaperRow("o1-high", 14.33, 8.00, 0.2667, 5.77, (0.67, 1.00, 0.0333, 0.15)),
        PaperRow("o3-high", 10.67, 9.67, 0.20, 6.30, (1.20, 0.33, 0.0577, 0.12)),
        PaperRow("Claude 3.7 (+ ext. thinking)", 12.67, 11.00, 0.1667, 6.57, (0.67, 0.58, 0.0667, 0.12)),
    ),
}
PAPER_HUMANS = PaperRow("Human (original games)", 11, 12, 0.40, 6.90)  # one play, no seeds


class NotReplayable(ValueError):
    """A record that is not a Decrypto benchmark game."""


@dataclass(frozen=True)
class Turn:
    """One resolved turn as the table saw it; ``agent`` marks the guess the agent made."""

    turn: int
    code: str
    hints: tuple[str, ...]
    decoder_guess: str
    interceptor_guess: str
    seen: str = ""  # what the agent's seat saw before guessing (its view's hint history and hints)


@dataclass(frozen=True)
class GameReplay:
    game_no: int
    miscommunications: int
    interceptions: int
    team_won: bool
    turns: int
    outlived: bool  # the replay needed more turns than the record holds: ended there, not a team win
    transcript: tuple[Turn, ...] = ()
    decisions: tuple[Mapping[str, Any], ...] = ()
    timeouts: int = 0


@dataclass(frozen=True)
class Stat:
    mean: float
    se: float

    def show(self, pct: bool = False) -> str:
        if pct:
            return f"{self.mean:.2%} ± {self.se:.2%}"
        return f"{self.mean:.2f} ± {self.se:.2f}"


@dataclass(frozen=True)
class ReplayRow:
    """A Table 1 row over the games (sums and rates per seed), as mean ± s.e. over seeds."""

    name: str
    miscommunications: Stat
    interceptions: Stat
    win_rate: Stat
    turns: Stat
    games: int
    seeds: int
    outlived: int = 0
    sources: Mapping[str, Tally] = field(default_factory=dict)


def is_benchmark_decrypto(rec: Record) -> bool:
    """A three-seat game of the Decrypto engine in its benchmark variant (asked of the engine, not of its name)."""
    return isinstance(rec.game, Decrypto) and str(rec.config.variant) == "benchmark" and rec.seats == 3


def standard_config(rec: Record) -> Any:
    """The record's game under the benchmark's end rules (two tokens of either kind; an imported game that played
    on after its end, ``play_on``, ends there too)."""
    return dataclasses.replace(rec.config, max_interceptions=2, max_miscommunications=2, play_on=False)


def _queues(rec: Record) -> dict[Seat, list[Action]]:
    out: dict[Seat, list[Action]] = {0: [], 1: [], 2: []}
    for seat, action in rec.actions:
        out.setdefault(seat, []).append(action)
    return out


def _seen(view: Mapping[str, Any]) -> str:
    history = view.get("hint_history") or {}
    slots = "; ".join(f"{d}: {', '.join(history.get(str(d), [])) or '-'}" for d in range(1, 5))
    current = view.get("current_hints") or {}
    keywords = view.get("keywords")
    own = f"keywords {', '.join(keywords[str(d)] for d in range(1, 5))}; " if keywords else ""
    return f"{own}history [{slots}]; hints {', '.join(current.get('hints', []))}"


async def replay_game(rec: Record, role: ReplaySeat | None, agent: str, runner: AgentRunner | None, *,
                      seed: int, game_no: int) -> GameReplay:
    """One recorded game with ``agent`` in ``role``'s seat (``role`` None: every seat replays its record)."""
    if not is_benchmark_decrypto(rec):
        raise NotReplayable(f"game {game_no} is not a three-seat Decrypto benchmark game")
    g = rec.game
    state, _ = g.new(standard_config(rec), rec.seats, rec.seed)
    queues = _queues(rec)
    agent_seat = role.seat if role is not None else None
    decisions: list[Mapping[str, Any]] = []
    seen: dict[int, str] = {}
    timeouts = 0
    outlived = False
    for _ in range(200):
        if g.result(state) is not None:
            break
        seat = min(g.to_act(state))
        if seat == agent_seat and runner is not None:
            view = g.observe(state, seat).view
            seen[int(view.get("round") or 0)] = _seen(view)
            out = await runner.decide(g, state, seat, game_id=game_no, spec=agent, seed=seed)
            action = out.action
            timeouts += int(out.deadline_hit)
            decisions += [d for c in out.calls if (d := decision_of(c.prompt)) is not None]
            # The recorded guess of this seat for this turn is passed over.
            if queues.get(seat):
                queues[seat].pop(0)
        else:
            if not queues.get(seat):
                outlived = True
                break
            action = queues[seat].pop(0)
        state, _ = g.apply(state, seat, action)
    result = g.result(state)
    details = result.details if result is not None else _partial(g.observe(state, 0).view)
    view = g.observe(state, 0).view
    transcript = tuple(
        Turn(int(t["round"]), str(t["code"]), tuple(t["hints"]), str(t["decoder_guess"]), str(t["interceptor_guess"] or "-"),
             seen.get(int(t["round"]), ""))
        for t in view.get("turns", []))
    return GameReplay(game_no, int(details["miscommunications"]), int(details["interceptions"]),
                      bool(details.get("team_won")), int(details["turns"]), outlived or result is None, transcript,
                      tuple(decisions), timeouts)


def _partial(view: Mapping[str, Any]) -> dict[str, Any]:
    """The counts of a replay that outlived its record, at the record's last turn: no side has its second token
    and ``max_turns`` were not survived, so, as the benchmark's loop counts it, not a team win."""
    tokens = view.get("tokens") or {}
    return {"miscommunications": tokens.get("miscommunications", 0), "interceptions": tokens.get("interceptions", 0),
            "team_won": False, "turns": len(view.get("turns", []))}


def _stat(xs: Sequence[float]) -> Stat:
    if not xs:
        return Stat(float("nan"), float("nan"))
    se = statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0
    return Stat(statistics.mean(xs), se)


def row_of(name: str, per_seed: Sequence[Sequence[GameReplay]]) -> ReplayRow:
    """Sums of tokens over the games, the team's win rate and mean turns, per seed; then mean ± s.e. over seeds."""
    misc = [float(sum(g.miscommunications for g in games)) for games in per_seed]
    inter = [float(sum(g.interceptions for g in games)) for games in per_seed]
    win = [sum(g.team_won for g in games) / len(games) for games in per_seed if games]
    turns = [statistics.mean(g.turns for g in games) for games in per_seed if games]
    sources: dict[str, Tally] = {}
    for games in per_seed:
        for g in games:
            for d in g.decisions:
                sources.setdefault(str(d.get("role", "?")), Tally()).add(d)
    n_games = len(per_seed[0]) if per_seed else 0
    return ReplayRow(name, _stat(misc), _stat(inter), _stat(win), _stat(turns), n_games, len(per_seed),
                     sum(g.outlived for games in per_seed for g in games), sources)


async def evaluate(records: Sequence[Record], role: ReplaySeat, agent: str, factory: AgentFactory, *, seeds: int = 3,
                   timeout_s: float = 60.0, fallback: str = "random",
                   progress: Callable[[str], None] | None = None) -> tuple[ReplayRow, ReplayRow, list[list[GameReplay]]]:
    """The agent's row, the records' own row (every seat replayed), and the agent's games per seed."""
    originals = [[await replay_game(r, None, "", None, seed=0, game_no=i + 1) for i, r in enumerate(records)]]
    warm = getattr(factory(agent, 0), "warm", None)
    if callable(warm):  # one-off set-up (the vocabulary's embedding) is not a move's work
        await asyncio.to_thread(warm)
    per_seed: list[list[GameReplay]] = []
    for s in range(seeds):
        runner = AgentRunner(factory, timeout_s=timeout_s, retries=3, fallback_spec=fallback)
        games_ = []
        for i, rec in enumerate(records):
            games_.append(await replay_game(rec, role, agent, runner, seed=1000 * s + i, game_no=1000 * s + i + 1))
            runner.forget(1000 * s + i + 1)
        per_seed.append(games_)
        if progress is not None:
            progress(f"seed {s + 1}/{seeds}: {sum(g.interceptions for g in games_)} interceptions, "
                     f"{sum(g.miscommunications for g in games_)} miscommunications")
    return row_of(agent, per_seed), row_of("the records as played", originals), per_seed


def render(role: ReplaySeat, mine: ReplayRow, original: ReplayRow, *, transcript: Sequence[GameReplay] = ()) -> str:
    arrow = {"misc": "↓" if role is ReplaySeat.DECODER else "", "inter": "↑" if role is ReplaySeat.INTERCEPTOR else "",
             "win": "↓" if role is ReplaySeat.INTERCEPTOR else "↑", "turns": "↓" if role is ReplaySeat.INTERCEPTOR else "↑"}
    head = (f"Model as {role.value.capitalize()}", f"Miscomms{arrow['misc']}", f"Intercepts{arrow['inter']}",
            f"Win rate{arrow['win']}", f"Game length{arrow['turns']}")
    rows: list[tuple[str, ...]] = [head]
    for row in (mine, original):
        rows.append((f"{row.name} ({row.games} games, {row.seeds} seed{'s' if row.seeds != 1 else ''})",
                     row.miscommunications.show(), row.interceptions.show(), row.win_rate.show(pct=True), row.turns.show()))
    rows.append((f"-- the paper ({PAPER_TABLE}; not these games) --", "", "", "", ""))
    for p in (*PAPER[role], PAPER_HUMANS):
        rows.append((p.name, *p.cells()))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.append(f"outlived the record (ended at its last turn, as the benchmark's loop ends it: not a team win): "
                 f"{mine.outlived} of {mine.games * mine.seeds} replayed game(s), {original.outlived} of "
                 f"{original.games} as recorded")
    if mine.sources:
        lines.append("")
        lines.append(f"where {mine.name}'s moves came from:")
        for seat_role, tal in sorted(mine.sources.items()):
            shares = ", ".join(f"{k} {v / tal.moves:.0%}" for k, v in sorted(tal.sources.items()))
            lines.append(f"  {seat_role}: {tal.moves} moves ({shares}); timeouts {tal.timeouts}; mean model share {tal.model_share:.2f}")
    for g in transcript:
        lines.append("")
        lines.append(f"game {g.game_no}: {g.turns} turns, {g.miscommunications} miscommunications, "
                     f"{g.interceptions} interceptions, team {'won' if g.team_won else 'lost'}"
                     f"{' (outlived the record)' if g.outlived else ''}")
        for t in g.transcript:
            lines.append(f"  turn {t.turn}: code {t.code}; hints {', '.join(t.hints)}; decoder {t.decoder_guess}; "
                         f"interceptor {t.interceptor_guess}")
            if t.seen:
                lines.append(f"    the {role.value} saw: {t.seen}")
    return "\n".join(lines) + "\n"


async def record_game(factory: AgentFactory, agents: Sequence[str], seed: int, *, max_turns: int = 8,
                      game_no: int = 1, timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """A benchmark game played by ``agents`` (encoder, decoder, interceptor) through every turn (the token
    limits raised, as the paper's humans played), as record lines (``games.record`` format)."""
    from games import get
    from games.record import to_lines

    g = get("decrypto")
    cfg = g.make_config("benchmark", max_turns=max_turns, max_interceptions=max_turns + 1,
                        max_miscommunications=max_turns + 1)
    state, _ = g.new(cfg, 3, seed)
    runner = AgentRunner(factory, timeout_s=timeout_s, retries=3, fallback_spec="random")
    actions: list[tuple[Seat, Action]] = []
    for _ in range(200):
        if g.result(state) is not None:
            break
        seat = min(g.to_act(state))
        out = await runner.decide(g, state, seat, game_id=game_no, spec=agents[seat], seed=seed * 10 + seat)
        actions.append((seat, out.action))
        state, _ = g.apply(state, seat, out.action)
    runner.forget(game_no)
    return to_lines(g, cfg, 3, seed, actions, [], g.result(state))


def _fair_records(text: str) -> list[Record] | None:
    """The benchmark's human-play file, every recorded turn a move; None when ``text`` is not that format."""
    from bot.research import decrypto_fair

    if not text.lstrip().startswith("["):
        return None
    episodes, issues = decrypto_fair.read(text)
    if issues or not episodes:
        return None
    records = [decrypto_fair.every_turn(ep) for ep in episodes]
    bad = [ep.index for ep, r in zip(episodes, records, strict=True) if r is None]
    if bad:
        raise ValueError(f"episode {bad[0]} cannot be played through our engine (hushtable import decrypto-fair "
                         "--lenient says why)")
    return [r for r in records if r is not None]


def load(path: str) -> list[Record]:
    """The three-seat Decrypto benchmark games of a records file (sim --json output or exports) or of the benchmark's
    human-play file; ValueError if none."""
    from pathlib import Path

    from bot.research.recordfile import read_input, split_games

    text = read_input(Path(path))  # a regular file of bounded size: /dev/zero once filled the memory
    fair = _fair_records(text)
    if fair is not None:
        return fair
    found = split_games(text.splitlines())
    bad = [f for f in found if f.record is None]
    if bad:
        raise ValueError(f"game {bad[0].index} of {path} cannot be read: {bad[0].error}")
    records = [f.record for f in found if f.record is not None and is_benchmark_decrypto(f.record)]
    if not records:
        raise ValueError(f"{path} holds no three-seat Decrypto benchmark game")
    return records


def command(
    file: str = typer.Argument(..., help="Records of Decrypto benchmark games (sim --json output, exports, or the benchmark's human-play JSON)."),
    role: ReplaySeat = typer.Option(..., "--role", help="The seat the agent takes: interceptor (Eve) or decoder (Bob)."),
    agent: str = typer.Option("strategist", "--agent", help="A configured agent name (default: the default AI)."),
    seeds: int = typer.Option(3, "--seeds", min=1, help="Agent seeds (the paper: 3)."),
    timeout_s: float = typer.Option(60.0, "--timeout", help="Deadline of one move in seconds (a move past it is logged as a timeout)."),
    transcript: bool = typer.Option(False, "--transcript", help="Each turn of the first seed's games, and what the agent's seat saw."),
) -> None:
    """The Decrypto paper's human-replay protocol (Table 1) on recorded games."""

    from bot.app import build_agents
    from bot.settings import Settings
    from models.client import ClientOptions, ClientPool

    try:
        records = load(file)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    settings = Settings()
    pool = ClientPool(ClientOptions(worker_url=settings.worker_url, device=settings.device, dtype=settings.dtype,
                                    model_cache=str(settings.model_cache), openai_api_key=settings.openai_api_key))

    async def go() -> tuple[ReplayRow, ReplayRow, list[list[GameReplay]]]:
        try:
            registry = build_agents(settings, pool)
            registry.entry(agent)
            return await evaluate(records, role, agent, registry, seeds=seeds, timeout_s=timeout_s,
                                  progress=lambda line: typer.echo(line, err=True))
        finally:
            await pool.aclose()

    try:
        mine, original, per_seed = asyncio.run(go())
    except ValueError as exc:  # an unknown agent name, a misconfigured entry
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(render(role, mine, original, transcript=per_seed[0] if transcript else ()), nl=False)


__all__ = ["PAPER", "PAPER_HUMANS", "GameReplay", "NotReplayable", "PaperRow", "ReplayRow", "ReplaySeat", "Turn",
           "command", "evaluate", "load", "record_game", "is_benchmark_decrypto", "render", "replay_game", "row_of", "standard_config"]

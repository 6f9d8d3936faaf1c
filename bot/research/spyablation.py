"""SpyGame's action ablation (section 4.1, Table 5): ``hushtable spygame ablation``.

The paper plays its guest agent (GPT-4) as the spy against three fixed hosts (GPT-3.5-Turbo),
once whole and once without each of two actions, and compares the guest's **Win** (win rate),
**Round** (rounds it survives) and **Voted** (votes it receives per round):

- *word guessing*: the agent guesses the other side's word from the descriptions;
- *reasoning*: the agent infers the other players' identities before it votes.

Here the guest is a strategic agent (``strategist`` or any ``llm:`` entry in the strategic
mode) and each arm is the same agent with its ``ablate`` option set: ``ablate=guess`` and
``ablate=reason`` switch off those two steps inside the agent's Who-is-Spy strategy
(``models/agents/games/spy.py``, ``ABLATIONS``). Every arm plays the same seeded deals
(word pair, spy seat, guest seat, engine seed, every seat's agent seed), four seats in the
SpyGame setting, so the arms differ only by the switched-off step and the differences are
read pair by pair. Besides the paper's spy rows, the guest also plays one villager seat (the
paper's guest was always the spy), where Win is the villagers' win.

Intervals are 95%: Wilson's for a win rate, 1.96 standard errors for Round, for the pooled
Voted (a ratio: votes over the rounds voted in) and for each arm's paired difference in
Win from the whole agent. Each guest move's source is read from the runner's decision row:
``specialist`` is the algorithm (the embedding strategy), ``model`` the language model
(only where the agent's entry asks it, ``model=choices`` and the like), ``fallback`` the
table's fallback agent, ``rules`` a move with one legal option.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.core.agents import AgentFactory, AgentRunner
from games.base import rng
from models.agents.provenance import decision_of

SEATS = 4
ROLES = ("spy", "villager")
FULL = "full"
ARM_NAMES = {FULL: "full agent", "guess": "w/o word guessing", "reason": "w/o reasoning"}
PAPER_TABLE5: dict[str, tuple[float, float, float]] = {  # GPT-4 as the spy: Win, Round, Voted
    FULL: (0.33, 2.18, 1.31),
    "guess": (0.26, 2.12, 1.34),
    "reason": (0.21, 2.08, 1.40),
}
Z = 1.96
MAX_MOVES = 400
"""A four-seat game ends in at most three rounds; far more moves than that means an engine fault."""


@dataclass(frozen=True, slots=True)
class Deal:
    """One seeded game: the engine's seed, the word pair, the spy's seat and the guest's seat."""

    index: int
    seed: int
    villager_word: str
    spy_word: str
    spy: int
    guest: int


def design(games: int, seed: int, role: str) -> list[Deal]:
    """``games`` deals for the guest in ``role`` (spy or villager): pair, sides and seats drawn from ``seed``."""
    from games import decks

    if role not in ROLES:
        raise ValueError(f"the guest plays the spy or a villager, not {role!r}")
    pairs = decks.pairs()
    out = []
    for i in range(games):
        r = rng(seed, "spygame-ablation", role, i)
        a, b = pairs[r.randrange(len(pairs))]
        villager, spy_word = (a, b) if r.random() < 0.5 else (b, a)
        spy = r.randrange(SEATS)
        guest = spy if role == "spy" else r.choice([x for x in range(SEATS) if x != spy])
        out.append(Deal(i, r.randrange(1 << 30), villager, spy_word, spy, guest))
    return out


@dataclass(frozen=True, slots=True)
class Move:
    """One decision of the guest: the action kind, where it came from, and (votes) its logged evidence."""

    kind: str
    source: str
    model_share: float = 0.0
    evidence: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True)
class GameRow:
    """The guest's outcome in one game of one arm."""

    arm: str
    role: str
    deal: int
    won: bool
    rounds: int  # rounds the guest took part in (the round it was voted out included)
    votes: int  # votes it received in the rounds' main votes
    voted_rounds: int  # main votes it took part in
    moves: tuple[Move, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"arm": self.arm, "role": self.role, "deal": self.deal, "won": self.won, "rounds": self.rounds,
                "votes": self.votes, "voted_rounds": self.voted_rounds,
                "moves": [{"kind": m.kind, "source": m.source, "model_share": m.model_share} for m in self.moves]}


def _evidence_of(calls: Sequence[Any]) -> Mapping[str, float] | None:
    for c in calls:
        if isinstance(c.prompt, Mapping) and isinstance(c.prompt.get("evidence"), Mapping):
            return {str(k): float(v) for k, v in c.prompt["evidence"].items()}
    return None


async def play(deal: Deal, role: str, arm: str, guest: str, hosts: str, runner: AgentRunner, table: int) -> GameRow:
    """One game: the guest agent in its seat, the hosts in the other three; the guest's outcome and moves."""
    import games

    g = games.get("spy")
    cfg = g.make_config("spygame", deal={"pair": [deal.villager_word, deal.spy_word], "spies": [deal.spy]})
    s, _ = g.new(cfg, SEATS, deal.seed)
    moves: list[Move] = []
    for _ in range(MAX_MOVES):
        if g.result(s) is not None:
            break
        seat = min(g.to_act(s))
        spec = guest if seat == deal.guest else hosts
        # The same agent seed for a seat in every arm: the arms differ only by the ablated step.
        out = await runner.decide(g, s, seat, game_id=table, spec=spec, seed=deal.seed * 10 + seat)
        kind = g.legal(s, seat).kind  # type: ignore[union-attr]
        s, _ = g.apply(s, seat, out.action)
        if seat == deal.guest:
            d = next((d for c in reversed(out.calls) if (d := decision_of(c.prompt)) is not None), {})
            moves.append(Move(kind, str(d.get("source", "?")), float(d.get("model_share") or 0.0),
                              _evidence_of(out.calls) if kind == "vote" else None))
    result = g.result(s)
    if result is None:
        raise RuntimeError(f"deal {deal.index} did not end within {MAX_MOVES} moves")
    details = result.details
    received = [v for v in details["votes_received"][str(deal.guest)] if v is not None]
    return GameRow(arm, role, deal.index, deal.guest in result.winners, int(details["rounds_survived"][str(deal.guest)]),
                   int(sum(received)), len(received), tuple(moves))


# --------------------------------------------------------------------------- numbers


def wilson(k: int, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a proportion k/n (NaN ends without games)."""
    if n == 0:
        return (math.nan, math.nan)
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return (float(ci.low), float(ci.high))


def mean_hw(xs: Sequence[float]) -> tuple[float, float]:
    """Mean and 95% half-width (1.96 standard errors; NaN with fewer than two values)."""
    if not xs:
        return (math.nan, math.nan)
    mu = sum(xs) / len(xs)
    if len(xs) < 2:
        return (mu, math.nan)
    var = sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)
    return (mu, Z * math.sqrt(var / len(xs)))


def ratio_hw(num: Sequence[float], den: Sequence[float]) -> tuple[float, float]:
    """The pooled ratio sum(num)/sum(den) and its 95% half-width (the ratio estimator's standard error)."""
    total = sum(den)
    if total <= 0:
        return (math.nan, math.nan)
    r = sum(num) / total
    n = len(den)
    if n < 2:
        return (r, math.nan)
    resid = [x - r * y for x, y in zip(num, den, strict=True)]
    se = math.sqrt(sum(e * e for e in resid) / (n * (n - 1))) / (total / n)
    return (r, Z * se)


@dataclass(slots=True)
class ArmResult:
    """One arm in one role: the paper's three numbers with intervals, the paired difference, the sources."""

    arm: str
    role: str
    games: int
    wins: int
    win_ci: tuple[float, float]
    round: tuple[float, float]
    voted: tuple[float, float]
    diff: tuple[float, float] | None  # paired difference in Win from the full agent (None for the full agent)
    sources: dict[str, Counter[str]] = field(default_factory=dict)  # action kind -> source -> moves

    @property
    def win(self) -> float:
        return self.wins / self.games if self.games else math.nan


def summarize(rows: Sequence[GameRow]) -> list[ArmResult]:
    """Per role and arm (in the order first met), from the games' rows; arms are paired with the full agent by deal."""
    out: list[ArmResult] = []
    keys = list(dict.fromkeys((r.role, r.arm) for r in rows))
    for role, arm in keys:
        mine = sorted((r for r in rows if r.role == role and r.arm == arm), key=lambda r: r.deal)
        wins = sum(r.won for r in mine)
        diff = None
        if arm != FULL:
            full = {r.deal: r for r in rows if r.role == role and r.arm == FULL}
            paired = [float(r.won) - float(full[r.deal].won) for r in mine if r.deal in full]
            diff = mean_hw(paired) if paired else None
        sources: dict[str, Counter[str]] = {}
        for r in mine:
            for m in r.moves:
                sources.setdefault(m.kind, Counter())[m.source] += 1
        out.append(ArmResult(arm, role, len(mine), wins, wilson(wins, len(mine)),
                             mean_hw([float(r.rounds) for r in mine]),
                             ratio_hw([float(r.votes) for r in mine], [float(r.voted_rounds) for r in mine]),
                             diff, sources))
    return out


# --------------------------------------------------------------------------- text


def _num(x: float, digits: int = 2) -> str:
    return "  -  " if math.isnan(x) else f"{x:.{digits}f}"


def _pm(m: tuple[float, float], digits: int = 2) -> str:
    return f"{_num(m[0], digits)} ± {_num(m[1], digits)}"


SOURCE_WORDS = {"specialist": "algorithm", "model": "model", "fallback": "fallback", "rules": "rules"}


def render(results: Sequence[ArmResult], *, guest: str, hosts: str, games: int, seed: object,
           seconds: float | None = None) -> str:
    """Table 5 as text: per role, each arm's Win [95% CI], its paired change from the full agent, Round and
    Voted, beside the paper; then where the guest's decisions came from."""
    lines = [f"SpyGame action ablation (section 4.1, Table 5): guest {guest}, hosts {hosts}; {games} seeded games "
             f"per arm and role (seed {seed}), 4 seats, 1 spy, the same deals in every arm"
             + (f"; {seconds:.0f} s" if seconds is not None else "")]
    for role in ROLES:
        mine = [r for r in results if r.role == role]
        if not mine:
            continue
        title = ("Guest as the spy (the paper's setting)" if role == "spy"
                 else "Guest in one villager seat (not in the paper: its guest was always the spy); Win = villagers' win")
        lines.append(f"\n{title}")
        lines.append((f"{'arm':<19}{'Win [95% CI]':<22}{'Win - full [95% CI]':<23}{'Round ± 95%':<15}{'Voted ± 95%':<15}"
                      + ("paper Win / Round / Voted" if role == "spy" else "")).rstrip())
        for r in mine:
            win = f"{_num(r.win)} [{_num(r.win_ci[0])}, {_num(r.win_ci[1])}]"
            diff = "-" if r.diff is None else (f"{r.diff[0]:+.2f} [{r.diff[0] - r.diff[1]:+.2f}, {r.diff[0] + r.diff[1]:+.2f}]"
                                              if not math.isnan(r.diff[1]) else f"{r.diff[0]:+.2f}")
            paper = PAPER_TABLE5.get(r.arm) if role == "spy" else None
            ref = f"{paper[0]:.2f} / {paper[1]:.2f} / {paper[2]:.2f}" if paper else ""
            lines.append(f"{ARM_NAMES.get(r.arm, r.arm):<19}{win:<22}{diff:<23}{_pm(r.round):<15}{_pm(r.voted):<15}{ref}"
                         .rstrip())
    lines.append("\nWhere the guest's decisions came from (algorithm: the embedding strategy; model: the language "
                 "model; fallback: the table's fallback agent)")
    for r in results:
        parts = []
        for kind, counts in sorted(r.sources.items()):
            total = sum(counts.values())
            parts.append(f"{kind} " + ", ".join(f"{SOURCE_WORDS.get(s, s)} {n}" for s, n in counts.most_common())
                         + f" (of {total})")
        lines.append(f"{r.role:<9}{ARM_NAMES.get(r.arm, r.arm):<19}" + "; ".join(parts))
    lines.append("\nThe paper: GPT-4 as the spy against three GPT-3.5-Turbo hosts, 100 games per row, no intervals "
                 "given. Without reasoning our algorithm's vote is a seeded uniform draw; a model asked for choices "
                 "(model=choices in the agent's entry) would decide it alone.")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the run


def arm_specs(agent: str, ablations: Sequence[str]) -> dict[str, str]:
    """Arm -> agent name: the agent itself, then one ablated entry per step (``name?ablate=step``)."""
    return {FULL: agent, **{a: f"{agent}?ablate={a}" for a in ablations}}


def define_arms(registry: Any, agent: str, ablations: Sequence[str]) -> dict[str, str]:
    """Define the ablated entries of ``agent`` in ``registry`` (an AgentRegistry); ValueError when it cannot be ablated."""
    from dataclasses import replace

    from models.agents.registry import AgentKind
    from models.agents.strategy import parse_ablations

    entry = registry.entry(agent)
    if entry.kind is not AgentKind.LLM or entry.params.get("mode", "strategic") != "strategic":
        raise ValueError(f"{agent} has no strategy steps to switch off: ablations are options of the strategic agent "
                         "(strategist, or an llm: entry in the strategic mode)")
    if parse_ablations(entry.params.get("ablate", "")):
        raise ValueError(f"{agent} already leaves out a step (ablate={entry.params['ablate']}); name the whole agent")
    parse_ablations("+".join(ablations))
    specs = arm_specs(entry.name, ablations)
    for arm, name in specs.items():
        if arm != FULL:
            registry.define(replace(entry, name=name, params={**entry.params, "ablate": arm}))
    registry.check()
    return specs


async def run(factory: AgentFactory, specs: Mapping[str, str], hosts: str, *, games: int, seed: int,
              roles: Sequence[str] = ROLES, timeout_s: float = 120.0, progress: Callable[[str], None] | None = None,
              each: Callable[[GameRow], None] | None = None) -> list[GameRow]:
    """Every arm on the same deals, per role; the guest's rows. A deal is played in every arm before the next
    one, so a run stopped early still holds paired games (``each`` sees every row as it is played)."""
    runner = AgentRunner(factory, timeout_s=timeout_s, retries=3, fallback_spec="random")
    rows: list[GameRow] = []
    table = 0
    for role in roles:
        started = time.perf_counter()
        deals = design(games, seed, role)
        for n, deal in enumerate(deals, start=1):
            for arm, spec in specs.items():
                table += 1
                rows.append(await play(deal, role, arm, spec, hosts, runner, table))
                runner.forget(table)
                if each is not None:
                    each(rows[-1])
            if progress is not None and (n % 20 == 0 or n == len(deals)):
                won = Counter(r.arm for r in rows if r.role == role and r.won)
                progress(f"  {role}: {n}/{len(deals)} deals, {time.perf_counter() - started:.0f} s; won "
                         + ", ".join(f"{ARM_NAMES.get(a, a)} {won[a]}" for a in specs))
    return rows


def row_of(data: Mapping[str, Any]) -> GameRow:
    """A row back from ``GameRow.to_json`` (a stored run, to print again)."""
    moves = tuple(Move(str(m["kind"]), str(m["source"]), float(m.get("model_share", 0.0))) for m in data.get("moves", ()))
    return GameRow(str(data["arm"]), str(data["role"]), int(data["deal"]), bool(data["won"]), int(data["rounds"]),
                   int(data["votes"]), int(data["voted_rounds"]), moves)


async def warm(factory: AgentFactory, names: Sequence[str]) -> None:
    """Embed the strategies' vocabularies before the first game, so no move waits for it."""
    for name in dict.fromkeys(names):
        w = getattr(factory(name, 0), "warm", None)
        if callable(w):
            await asyncio.to_thread(w)


__all__ = ["ARM_NAMES", "FULL", "PAPER_TABLE5", "ROLES", "ArmResult", "Deal", "GameRow", "Move", "arm_specs", "define_arms",
           "design", "mean_hw", "play", "ratio_hw", "render", "row_of", "run", "summarize", "warm", "wilson"]

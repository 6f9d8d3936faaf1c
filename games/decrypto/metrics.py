"""Decrypto's numbers over finished games, for ``games.metrics``.

- Benchmark (the Decrypto paper's Table 1): total miscommunications and total
  interceptions over the set of games, the encoder-decoder team's win rate, and the mean
  game length in turns; also how games ended (its Figure 10: interceptions,
  miscommunications, both on the same turn, survived).
- Teams (no paper): the same tokens per team, rounds, win rates, draws.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from games.base import Result
from games.decrypto.config import Variant
from games.descriptor import Measured, SeatOutcome, SeatRole, Side
from games.metrics import rate, won
from games.record import Record


def read_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Benchmark: encoder, decoder (the team) and interceptor with the game's tokens and turns; teams:
    every seat a team member, with its team's tokens and the rounds it encoded and decoded."""
    d = result.details
    history: Sequence[Mapping[str, Any]] = d["history"]
    if variant == Variant.BENCHMARK:
        common = {
            "turns": float(d["turns"]),
            "miscommunications": float(d["miscommunications"]),
            "interceptions": float(d["interceptions"]),
        }
        roles = ((SeatRole.ENCODER, Side.TEAM), (SeatRole.DECODER, Side.TEAM), (SeatRole.INTERCEPTOR, Side.INTERCEPTOR))
        return [SeatOutcome(seat, role, side, won(result, seat), dict(common)) for seat, (role, side) in enumerate(roles)]
    out = []
    for seat in range(rec.seats):
        label = "A" if seat % 2 == 0 else "B"
        tokens = d["tokens"][label]
        stats = {
            "rounds": float(d["rounds"]),
            "miscommunications": float(tokens["miscommunications"]),
            "interceptions": float(tokens["interceptions"]),
            "encoded": float(sum(1 for t in history if t["encoder"] == seat)),
            "decoded": float(sum(1 for t in history if t["decoder"] == seat)),
        }
        side = Side.TEAM_A if label == "A" else Side.TEAM_B
        out.append(SeatOutcome(seat, SeatRole.TEAM_MEMBER, side, won(result, seat), stats))
    return out


_SPY_ROLE = {"villager": (SeatRole.VILLAGER, Side.VILLAGERS), "spy": (SeatRole.SPY, Side.SPIES),
             "mr_white": (SeatRole.MR_WHITE, Side.MR_WHITE)}


def summarize(games: Sequence[Measured]) -> dict[str, Any]:
    """The Decrypto paper's metrics over benchmark games (Table 1), or the teams' analogue."""
    bench = [g for g in games if g.variant == Variant.BENCHMARK]
    teams = [g for g in games if g.variant == Variant.TEAMS]
    if bench and teams:
        raise ValueError("benchmark and teams games are measured separately")
    if bench or not teams:
        n = len(bench)
        details = [g.result.details for g in bench]
        ended = Counter(str(x["reason"]) for x in details)
        return {
            "games": n,
            "miscommunications": sum(int(x["miscommunications"]) for x in details),
            "interceptions": sum(int(x["interceptions"]) for x in details),
            "miscommunications_per_game": rate(sum(int(x["miscommunications"]) for x in details), n),
            "interceptions_per_game": rate(sum(int(x["interceptions"]) for x in details), n),
            "team_win_rate": rate(sum(1 for x in details if x["team_won"]), n),
            "mean_turns": rate(sum(int(x["turns"]) for x in details), n),
            "ended_by": {k: ended.get(k, 0) for k in ("interceptions", "miscommunications", "both", "survived")},
        }
    n = len(teams)
    details = [g.result.details for g in teams]
    winners = Counter(x["winning_team"] for x in details)
    ended = Counter(str(x["reason"]) for x in details)
    return {
        "games": n,
        "miscommunications": {t: sum(int(x["tokens"][t]["miscommunications"]) for x in details) for t in "AB"},
        "interceptions": {t: sum(int(x["tokens"][t]["interceptions"]) for x in details) for t in "AB"},
        "win_rate": {t: rate(winners.get(t, 0), n) for t in "AB"},
        "draw_rate": rate(winners.get(None, 0), n),
        "mean_rounds": rate(sum(int(x["rounds"]) for x in details), n),
        "ended_by": {k: ended.get(k, 0) for k in ("tokens", "score", "tiebreak", "tie")},
    }

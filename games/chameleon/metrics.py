"""The Chameleon's numbers over finished games, for ``games.metrics``.

SNEAK's game (the paper scores clues, not games): catch rate (the chameleon was the
accused), escape rate (not caught, or caught and named the secret), and points per round
for the chameleon and for the other players.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from games.base import Result
from games.descriptor import Measured, SeatOutcome, SeatRole, Side
from games.metrics import rate, won
from games.record import Record


def read_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """A single round: the chameleon and the players; a match: every seat plays for its own points."""
    d = result.details
    rounds: Sequence[Mapping[str, Any]] = d["rounds"]
    single = d["mode"] == "single"
    out = []
    for seat in range(rec.seats):
        as_cham = [r for r in rounds if r["chameleon"] == seat]
        first_votes = [v for r in rounds for b in r["votes"] if b["ballot"] == "first" for v in b["votes"]]
        stats = {
            "points": float(d["scores"][seat]),
            "rounds": float(len(rounds)),
            "rounds_as_chameleon": float(len(as_cham)),
            "escapes": float(sum(1 for r in as_cham if r["outcome"] != "caught")),
            "caught": float(sum(1 for r in as_cham if r["caught"])),
            "votes_received": float(sum(1 for v in first_votes if v["target"] == seat)),
        }
        if single:
            cham = as_cham != []
            role, side = (SeatRole.CHAMELEON, Side.CHAMELEON) if cham else (SeatRole.PLAYER, Side.PLAYERS)
        else:
            role, side = SeatRole.PLAYER, Side.SELF
        out.append(SeatOutcome(seat, role, side, won(result, seat), stats))
    return out


def summarize(games: Sequence[Measured]) -> dict[str, Any]:
    """Catch rate, escape rate and points per round over every round of every game."""
    rounds = [r for g in games for r in g.result.details["rounds"]]
    n = len(rounds)
    outcomes = Counter(str(r["outcome"]) for r in rounds)
    cham_points = sum(int(r["points"][r["chameleon"]]) for r in rounds)
    other_points = sum(sum(int(p) for i, p in enumerate(r["points"]) if i != r["chameleon"]) for r in rounds)
    other_seats = sum(len(r["points"]) - 1 for r in rounds)
    return {
        "games": len(games),
        "rounds": n,
        "catch_rate": rate(sum(1 for r in rounds if r["caught"]), n),
        "escape_rate": rate(outcomes["escaped"] + outcomes["guessed"], n),
        "guessed_when_caught": rate(outcomes["guessed"], outcomes["guessed"] + outcomes["caught"]),
        "outcomes": {k: outcomes.get(k, 0) for k in ("escaped", "guessed", "caught")},
        "chameleon_points_per_round": rate(cham_points, n),
        "player_points_per_round": rate(other_points, other_seats),
    }

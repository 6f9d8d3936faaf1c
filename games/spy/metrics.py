"""Who-is-Spy's numbers over finished games, for ``games.metrics``: the SpyGame paper's Table 4.

The spies' win rate ("Win"), the mean number of rounds a spy survives ("Round") and the
votes a spy receives per round ("Voted"); the same three for villagers (and Mr. White) for
comparison. "Voted" is pooled: all votes a spy received in the rounds' main votes divided
by the number of main votes it took part in (a run-off is not a new round).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from games.base import Result
from games.descriptor import Measured, SeatOutcome, SeatRole, Side
from games.metrics import rate, won
from games.record import Record

_SPY_ROLE = {"villager": (SeatRole.VILLAGER, Side.VILLAGERS), "spy": (SeatRole.SPY, Side.SPIES),
             "mr_white": (SeatRole.MR_WHITE, Side.MR_WHITE)}


def read_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Each seat's role and side as dealt, with the rounds it survived and the votes it received."""
    d = result.details
    out = []
    for seat, raw_role in enumerate(d["roles"]):
        role, side = _SPY_ROLE[raw_role]
        votes = [v for v in d["votes_received"][str(seat)] if v is not None]
        stats = {
            "rounds_survived": float(d["rounds_survived"][str(seat)]),
            "votes_received": float(sum(votes)),
            "voted_rounds": float(len(votes)),
            "eliminated": float(seat in d["eliminated"]),
        }
        out.append(SeatOutcome(seat, role, side, won(result, seat), stats))
    return out


def _spy_role_metrics(seats: Sequence[SeatOutcome]) -> dict[str, Any]:
    voted = sum(s.stats["voted_rounds"] for s in seats)
    return {
        "seats": len(seats),
        "win_rate": rate(sum(1 for s in seats if s.won), len(seats)),
        "rounds_survived": rate(sum(s.stats["rounds_survived"] for s in seats), len(seats)),
        "votes_per_round": rate(sum(s.stats["votes_received"] for s in seats), voted),
    }


def summarize(games: Sequence[Measured]) -> dict[str, Any]:
    """The SpyGame paper's Win, Round and Voted for spies (and villagers, Mr. White)."""
    seats = [s for g in games for s in g.seats]
    by_role = {role: [s for s in seats if s.role is role] for role in (SeatRole.SPY, SeatRole.VILLAGER, SeatRole.MR_WHITE)}
    n = len(games)
    spies_won = sum(1 for g in games if g.result.details["team"] == "infiltrators"
                    and any(g.result.details["roles"][w] == "spy" for w in g.result.winners))
    out: dict[str, Any] = {
        "games": n,
        "spy_game_win_rate": rate(spies_won, n),
        "mean_rounds": rate(sum(int(g.result.details["rounds"]) for g in games), n),
        "spy": _spy_role_metrics(by_role[SeatRole.SPY]),
        "villager": _spy_role_metrics(by_role[SeatRole.VILLAGER]),
    }
    if by_role[SeatRole.MR_WHITE]:
        out["mr_white"] = _spy_role_metrics(by_role[SeatRole.MR_WHITE])
    return out

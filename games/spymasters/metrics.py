"""Spymasters numbers: per game (in ``Result.details["metrics"]``) and over many games.

- Wins per side: how often red, blue, and the starting team won.
- Assassin hits: games that ended on the assassin.
- Clue-number accuracy: for each clue, the share of its number the team then found
  (``min(found, number) / number``), averaged over clues; and the share of clues whose
  number was met (``found >= number``). Words found per clue, too.

Pure functions over finished games' ``Result.details``; the engine wrote every number.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from games.base import Result
from games.descriptor import Measured, SeatOutcome
from games.spymasters.config import TEAMS, Role, Team
from games.spymasters.state import ClueRecord, Ending

if TYPE_CHECKING:
    from games.record import Record


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


def clue_metrics(history: Sequence[ClueRecord], ending: Ending, left: Mapping[Team, int]) -> dict[str, Any]:
    """One finished game's numbers."""
    clues = len(history)
    return {
        "turns": clues,
        "assassin": ending is Ending.ASSASSIN,
        "words_left": {t.value: left[t] for t in TEAMS},
        "clue_accuracy": _rate(sum(min(c.found, c.number) / c.number for c in history), clues),
        "clues_met": sum(1 for c in history if c.found >= c.number),
        "words_per_clue": _rate(sum(c.found for c in history), clues),
    }


def seat_roles(details: Mapping[str, Any], seats: int) -> list[tuple[Role, Team]]:
    """Each seat's role and team in a finished game."""
    masters = details["spymasters"]
    out = []
    for seat in range(seats):
        team = Team.RED if seat in details["teams"]["red"] else Team.BLUE
        out.append((Role.SPYMASTER if masters[team.value] == seat else Role.GUESSER, team))
    return out


def seat_stats(details: Mapping[str, Any], seat: int, role: Role, team: Team) -> dict[str, float]:
    """A seat's numbers: the game's length, its team's words found and clue accuracy, whether its
    team met the assassin; a spymaster's clues given."""
    clues = [c for c in details["clues"] if c["team"] == team.value]
    found = len(details["cards"][team.value]) - int(details["metrics"]["words_left"][team.value])
    lost_to_assassin = details["ending"] == Ending.ASSASSIN.value and details["winner"] != team.value
    accuracy = _rate(sum(min(int(c["found"]), int(c["number"])) / int(c["number"]) for c in clues), len(clues))
    return {
        "turns": float(details["metrics"]["turns"]),
        "clues_given": float(len(clues) if role is Role.SPYMASTER else 0),
        "words_found": float(found),
        "clue_accuracy": float(accuracy or 0.0),
        "assassin": float(lost_to_assassin),
    }


def read_seats(rec: Record, variant: str, result: Result) -> list[SeatOutcome]:
    """Each seat's role (spymaster or guesser), side (its team), win and numbers."""
    d = result.details
    return [SeatOutcome(seat, role, team, seat in result.winners, seat_stats(d, seat, role, team))
            for seat, (role, team) in enumerate(seat_roles(d, rec.seats))]


def summarize(measured: Sequence[Measured]) -> dict[str, Any]:
    """The game's numbers over measured games of one variant (``hushtable stats``)."""
    return game_metrics(m.result.details for m in measured)


def game_metrics(games: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Wins per side, assassin hits and clue-number accuracy over finished games' details."""
    details = list(games)
    n = len(details)
    clues = [c for d in details for c in d["clues"]]
    wins = {t.value: sum(1 for d in details if d["winner"] == t.value) for t in TEAMS}
    return {
        "games": n,
        "win_rate": {t: _rate(w, n) for t, w in wins.items()},
        "starting_team_win_rate": _rate(sum(1 for d in details if d["winner"] == d["starting"]), n),
        "assassin_hits": sum(1 for d in details if d["ending"] == "assassin"),
        "assassin_rate": _rate(sum(1 for d in details if d["ending"] == "assassin"), n),
        "mean_turns": _rate(sum(int(d["metrics"]["turns"]) for d in details), n),
        "clues": len(clues),
        "clue_accuracy": _rate(sum(min(int(c["found"]), int(c["number"])) / int(c["number"]) for c in clues), len(clues)),
        "clues_met_rate": _rate(sum(1 for c in clues if int(c["found"]) >= int(c["number"])), len(clues)),
        "words_per_clue": _rate(sum(int(c["found"]) for c in clues), len(clues)),
        "mean_clue_number": _rate(sum(int(c["number"]) for c in clues), len(clues)),
    }

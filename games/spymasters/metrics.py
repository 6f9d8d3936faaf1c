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
from typing import Any

from games.spymasters.config import TEAMS, Role, Team
from games.spymasters.state import ClueRecord, Ending


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


def seat_stats(details: Mapping[str, Any], seat: int) -> dict[str, float]:
    """A seat's numbers: clues given (spymasters) and the accuracy of those clues."""
    mine = [c for c in details["clues"] if c["spymaster"] == seat]
    return {
        "turns": float(details["metrics"]["turns"]),
        "clues_given": float(len(mine)),
        "words_found_on_clues": float(sum(int(c["found"]) for c in mine)),
        "assassin": float(details["metrics"]["assassin"]),
    }


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

"""How a set of Decrypto benchmark games ended, as the paper's sweeps count them: the tokens, which end each
game reached (two miscommunications, two interceptions, both), team wins and the mean length with its
standard error. The word-embedding K sweep and the hint-refinement budgets print the same columns."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


class Played(Protocol):
    @property
    def miscommunications(self) -> int: ...
    @property
    def interceptions(self) -> int: ...
    @property
    def team_won(self) -> bool: ...
    @property
    def turns(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Tally:
    games: int
    miscommunications: int
    interceptions: int
    ended_miscommunication: float  # shares of the games
    ended_interception: float
    ended_both: float
    team_won: float
    turns: float
    turns_se: float


def tally(played: Sequence[Played]) -> Tally:
    n = len(played)
    turns = [float(g.turns) for g in played]
    return Tally(n, sum(g.miscommunications for g in played), sum(g.interceptions for g in played),
                 sum(g.miscommunications >= 2 and g.interceptions < 2 for g in played) / n,
                 sum(g.interceptions >= 2 and g.miscommunications < 2 for g in played) / n,
                 sum(g.interceptions >= 2 and g.miscommunications >= 2 for g in played) / n,
                 sum(g.team_won for g in played) / n, statistics.fmean(turns),
                 statistics.stdev(turns) / math.sqrt(n) if n > 1 else 0.0)

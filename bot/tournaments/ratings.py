"""Ratings, bootstrap intervals and per-role metrics of entrants over finished games (pure).

A match is the per-seat outcomes of one game (``games.metrics.seat_outcomes``) with
the entrant of each seat. Ratings are openskill's Plackett-Luce, one set per game
and variant: seats are grouped into teams by their side (Decrypto's team against the
interceptor, villagers against spies, the chameleon against the rest), the winning
sides share rank 0, the others rank 1, and a draw is a tie of all sides.

Sides differ in size (three villagers and one spy; the chameleon against the rest),
and openskill's team strength is the *sum* of its members, which would expect the
bigger side to win and move ratings by team size. Each side is therefore rated as one
composite player (mean of its seats' means, root-mean-square of their sigmas); the
side's change in mean is shared among its seats (an entrant holding the whole side
gets all of it, one seat of three a third) and its sigma shrinks by the side's
factor. Entrants on both sides of a game (fewer entrants than seats) get both
shares, which partly cancel. What a role is worth (spies win less often than
villagers) is not modelled: the formats give every entrant every role equally often.

Intervals are the percentile bootstrap Chatbot Arena uses: resample the *deal
groups* with replacement (a duplicate set of games travels together, so the luck the
duplicates cancel stays cancelled), refit from scratch, and read the 2.5th and 97.5th
percentiles of each entrant's mean. ``DEFAULT_ROUNDS`` = 500: with the seed fixed the
result is deterministic; across seeds, on a real 12-game Decrypto tournament, the largest
standard deviation of an interval end was 0.58 rating points at 200 rounds, 0.38 at 500 and
0.32 at 1000 (widths there: 5-13 points). Past 500 the rest comes from how few deal groups
there are (the bootstrap distribution is discrete), not from too few rounds.

With fewer than ``MIN_GROUPS`` = 5 deal groups there is no interval (NaN ends, and the board
says "not enough games for an interval"): resampling one group gives it back every round, so
the "interval" is a point (``[28.3, 28.3]`` after two games), and two to four groups give a
handful of distinct refits whose percentiles are far narrower than the truth. Five groups
give 126 distinct resamples.

SoftScore (the SNEAK clue score) is kept on the 0-100 scale the clue reports use.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import fsum, sqrt
from statistics import fmean
from typing import Any

from openskill.models import PlackettLuce

from games.metrics import SeatOutcome

DEFAULT_ROUNDS = 500
LEVEL = 0.95
MIN_GROUPS = 5
"""Deal groups a bootstrap interval needs; with fewer there is none (see the module docstring)."""
NO_INTERVAL = (float("nan"), float("nan"))


@dataclass(frozen=True)
class MatchResult:
    """One finished game of a tournament: entrant per seat, the seats' outcomes, its deal group."""

    entrants: tuple[str, ...]
    seats: tuple[SeatOutcome, ...]
    group: int = 0
    game_id: int | None = None


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float


@dataclass(frozen=True)
class Standing:
    rank: int
    entrant: str
    mu: float
    sigma: float
    lo: float
    hi: float
    games: int
    roles: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # role -> metric -> value

    @property
    def width(self) -> float:
        return self.hi - self.lo

    @property
    def has_interval(self) -> bool:
        """False when too few deal groups were played for a bootstrap interval (NaN ends)."""
        return self.lo == self.lo and self.hi == self.hi


def _model() -> PlackettLuce:
    # Fixed defaults (mu 25, sigma 25/3): ratings from different runs stay comparable.
    return PlackettLuce()


def fit(matches: Sequence[MatchResult], entrants: Sequence[str] = ()) -> dict[str, Rating]:
    """Rate the matches in order, from the model's prior; entrants without games keep the prior."""
    online = OnlineFit(entrants)
    for m in matches:
        online.add(m)
    return online.ratings()


class OnlineFit:
    """``fit`` kept up to date one match at a time: after the same matches in the same order it holds the
    same ratings, for the cost of the new match alone (a running tournament's status after each game;
    refitting every game so far each time made a 2,000-game run quadratic)."""

    def __init__(self, entrants: Sequence[str] = ()) -> None:
        self._model = _model()
        self._ratings: dict[str, tuple[float, float]] = {e: (self._model.mu, self._model.sigma) for e in entrants}
        self.games = 0

    def add(self, m: MatchResult) -> None:
        _rate_match(self._model, self._ratings, m)
        self.games += 1

    def ratings(self) -> dict[str, Rating]:
        return {e: Rating(mu, sigma) for e, (mu, sigma) in self._ratings.items()}

    def ahead(self) -> str | None:
        """The entrant highest on rating (ties broken by name), None before any game counted."""
        if not self.games:
            return None
        return max(self._ratings, key=lambda e: (self._ratings[e][0], e))


def fit_orders(matches: Sequence[MatchResult], entrants: Sequence[str] = (), *, orders: int = 16,
               seed: int = 0) -> dict[str, Rating]:
    """The point estimate: ``fit`` averaged over ``orders`` shuffled orders of the deal groups.

    openskill updates online, so one fixed order weighs the last games most; the bootstrap
    refits in random orders too, so its interval and this estimate agree in what they mean.
    """
    groups = _groups(matches)
    if not groups:
        return fit([], entrants)
    rnd = random.Random(seed)
    keys = sorted(groups)
    fits = []
    for _ in range(orders):
        rnd.shuffle(keys)
        fits.append(fit([m for k in keys for m in groups[k]], entrants))
    names = list(fits[0])
    return {e: Rating(fmean(f[e].mu for f in fits), fmean(f[e].sigma for f in fits)) for e in names}


def _groups(matches: Sequence[MatchResult]) -> dict[int, list[MatchResult]]:
    groups: dict[int, list[MatchResult]] = defaultdict(list)
    for m in matches:
        groups[m.group].append(m)
    return groups


def _rate_match(model: PlackettLuce, ratings: dict[str, tuple[float, float]], m: MatchResult) -> None:
    # Ratings are kept as (mu, sigma) floats: only the sides' composites go through the model's rating
    # objects (each one draws a uuid, which cost more than the update itself in a bootstrap's refits).
    for e in m.entrants:
        if e not in ratings:
            ratings[e] = (model.mu, model.sigma)
    sides: dict[str, list[SeatOutcome]] = defaultdict(list)
    for s in m.seats:
        sides[str(s.side)].append(s)
    if len(sides) < 2:
        return  # nobody to be ranked against
    order = sorted(sides)
    # One composite player per side: the mean of its seats' ratings (see the module docstring).
    composite = []
    for name in order:
        rs = [ratings[m.entrants[s.seat]] for s in sides[name]]
        composite.append([model.create_rating([fsum(mu for mu, _ in rs) / len(rs),
                                               sqrt(fsum(sigma**2 for _, sigma in rs) / len(rs))])])
    draw = all(s.won is None for s in m.seats)
    ranks = [0.0 if draw or any(s.won for s in sides[name]) else 1.0 for name in order]
    rated = model.rate(composite, ranks=ranks)
    delta: dict[str, float] = defaultdict(float)
    shrink: dict[str, float] = {}
    for name, (old,), (new,) in zip(order, composite, rated, strict=True):
        seats = sides[name]
        for s in seats:
            e = m.entrants[s.seat]
            delta[e] += (new.mu - old.mu) / len(seats)
            shrink[e] = min(shrink.get(e, 1.0), new.sigma / old.sigma)
    for e, d in delta.items():
        mu, sigma = ratings[e]
        ratings[e] = (mu + d, sigma * shrink[e])


def bootstrap(
    matches: Sequence[MatchResult],
    entrants: Sequence[str] = (),
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    level: float = LEVEL,
) -> dict[str, tuple[float, float]]:
    """Percentile intervals of each entrant's mean over ``rounds`` refits on resampled deal groups;
    ``NO_INTERVAL`` (NaN ends) for everyone when fewer than ``MIN_GROUPS`` deal groups were played."""
    names = list(dict.fromkeys([*entrants, *(e for m in matches for e in m.entrants)]))
    groups = _groups(matches)
    if len(groups) < MIN_GROUPS:
        return {e: NO_INTERVAL for e in names}
    keys = sorted(groups)
    rnd = random.Random(seed)
    samples: dict[str, list[float]] = {e: [] for e in names}
    for _ in range(rounds):
        picked = [m for _ in keys for m in groups[keys[rnd.randrange(len(keys))]]]
        fitted = fit(picked, names)
        for e in names:
            samples[e].append(fitted[e].mu)
    tail = (1 - level) / 2
    return {e: (_percentile(v, tail), _percentile(v, 1 - tail)) for e, v in samples.items()}


def _percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def role_metrics(
    matches: Sequence[MatchResult], clue_scores: Mapping[tuple[int, int], float] | None = None,
    describes: Callable[[str, str], bool] | None = None, bluff_scores: Mapping[tuple[int, int], float] | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """``{entrant: {role: {metric: value}}}``: seats played, win rate and the mean of each
    number the game reports per seat; ``sneak_softscore`` when clue scores are given
    (keyed by (game id, seat)), ``sneak_bluff`` apart for bluffs (clues given without the
    secret). ``describes(metric, role)``: whether a number describes seats of
    that role (the game's descriptor knows; a chameleon's escapes say nothing of a player)."""
    acc: dict[str, dict[str, list[SeatOutcome]]] = defaultdict(lambda: defaultdict(list))
    soft: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    bluff: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for m in matches:
        for s in m.seats:
            e = m.entrants[s.seat]
            acc[e][str(s.role)].append(s)
            if clue_scores and m.game_id is not None and (m.game_id, s.seat) in clue_scores:
                soft[e][str(s.role)].append(clue_scores[(m.game_id, s.seat)])
            if bluff_scores and m.game_id is not None and (m.game_id, s.seat) in bluff_scores:
                bluff[e][str(s.role)].append(bluff_scores[(m.game_id, s.seat)])
    out: dict[str, dict[str, dict[str, float]]] = {}
    for e, roles in acc.items():
        out[e] = {}
        for role, seats in sorted(roles.items()):
            decided = [s for s in seats if s.won is not None]
            row: dict[str, float] = {"seats": float(len(seats))}
            row["win_rate"] = fmean(1.0 if s.won else 0.0 for s in decided) if decided else float("nan")
            for key in sorted({k for s in seats for k in s.stats}):
                if describes is None or describes(key, role):
                    row[key] = fmean(float(s.stats.get(key, 0.0)) for s in seats)
            if soft[e][role]:  # evaluations hold 0-1; shown, like every SoftScore, on 0-100
                row["sneak_softscore"] = 100 * fmean(soft[e][role])
            if bluff[e][role]:
                row["sneak_bluff"] = 100 * fmean(bluff[e][role])
            out[e][role] = row
    return out


def standings(
    matches: Sequence[MatchResult],
    entrants: Sequence[str] = (),
    *,
    rounds: int = DEFAULT_ROUNDS,
    seed: int = 0,
    clue_scores: Mapping[tuple[int, int], float] | None = None,
    describes: Callable[[str, str], bool] | None = None,
    bluff_scores: Mapping[tuple[int, int], float] | None = None,
) -> list[Standing]:
    """The leaderboard: rating (``fit_orders`` mean) with its bootstrap interval, games and
    per-role metrics, best first (ties broken by name so the order is stable)."""
    names = list(dict.fromkeys([*entrants, *(e for m in matches for e in m.entrants)]))
    point = fit_orders(matches, names, seed=seed)
    ci = bootstrap(matches, names, rounds=rounds, seed=seed)
    games: dict[str, int] = defaultdict(int)
    for m in matches:
        for e in set(m.entrants):
            games[e] += 1
    metrics = role_metrics(matches, clue_scores, describes, bluff_scores)
    order = sorted(names, key=lambda e: (-point[e].mu, e))
    return [
        Standing(i + 1, e, point[e].mu, point[e].sigma, ci[e][0], ci[e][1], games[e], metrics.get(e, {}))
        for i, e in enumerate(order)
    ]


def summary(rows: Sequence[Standing]) -> list[dict[str, Any]]:
    """JSON-able standings (for export and storage)."""
    return [
        {"rank": r.rank, "entrant": r.entrant, "rating": round(r.mu, 3), "sigma": round(r.sigma, 3),
         "lo": round(r.lo, 3) if r.has_interval else None, "hi": round(r.hi, 3) if r.has_interval else None,
         "games": r.games,
         "roles": {role: {k: (None if v != v else round(v, 4)) for k, v in m.items()} for role, m in r.roles.items()}}
        for r in rows
    ]

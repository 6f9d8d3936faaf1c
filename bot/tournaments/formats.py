"""Tournament formats: which entrant sits in which seat of which game, with which deal (pure).

Roles follow seats: a variant whose game declares a seat shape (``SeatShape``: the Decrypto
benchmark's seat 0 encodes, 1 decodes, 2 intercepts) has its roles fixed to seats, and every
other variant deals roles to seats from the game's seed. So a format balances roles by
balancing seats, and cancels the luck of the deal by replaying the same seed with the
entrants moved:

- ``round_robin`` on a variant without a seat shape: rotation ``k`` puts entrant
  ``(seat + k) mod E`` in each seat, for ``k`` in ``0..E-1``; every entrant sits in every
  seat equally often. With ``duplicate`` the ``E`` rotations of a repetition share one seed
  (a *deal group*): the same deal is played ``E`` times and every entrant holds every dealt
  role of it exactly once.
- ``round_robin`` on a seat shape: an entrant plays a whole side (the benchmark's team of
  encoder and decoder, or the interceptor). Every ordered tuple of distinct entrants, one per
  side, plays; with ``duplicate`` the tuples of one set of entrants share a seed, so each
  faces the same deal from every side.
- ``grid`` (seat shapes only; the Decrypto benchmark paper's grid): every combination of
  entrants, one per seat; with ``duplicate`` all combinations of a repetition share one seed.

Seeds are drawn from the tournament seed, so a plan is reproducible.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from games.base import rng
from games.catalog import find
from games.descriptor import SeatShape


class Format(StrEnum):
    ROUND_ROBIN = "round_robin"
    GRID = "grid"


class FormatError(ValueError):
    """A format that cannot be planned with these entrants and seats; the message says why."""


@dataclass(frozen=True, slots=True)
class MatchPlan:
    idx: int
    seats: tuple[str, ...]  # entrant per seat
    seed: int
    deal_group: int  # matches with the same group share the seed (duplicates)


def _seed(tournament_seed: int, *salt: object) -> int:
    return rng(tournament_seed, "tournament", *salt).getrandbits(62)


def seat_shape(game: str, variant: str) -> SeatShape | None:
    """The roles and sides fixed to seats in this variant, as its game declares (None: dealt)."""
    d = find(game)
    return d.seat_shape(variant) if d is not None else None


def _sided(shape: SeatShape, entrants: Sequence[str]) -> list[list[tuple[str, ...]]]:
    """Per set of entrants (one per side), the rosters of its orderings: each side's seats held
    by one entrant, every entrant on every side once."""
    if len(entrants) == 1:
        return [[(entrants[0],) * len(shape.roles)]]
    units = []
    for group in itertools.combinations(entrants, len(shape.sides)):
        rosters = []
        for order in itertools.permutations(group):
            seat_of = {seat: order[i] for i, side in enumerate(shape.sides) for seat in side}
            rosters.append(tuple(seat_of[s] for s in range(len(shape.roles))))
        units.append(rosters)
    return units


def count_matches(game: str, variant: str, entrants: int, *, fmt: Format = Format.ROUND_ROBIN,
                  games_per_pairing: int = 1) -> int:
    """How many matches ``plan_matches`` would plan, by arithmetic alone: sizes are checked with
    this before anything is planned (a huge ``games_per_pairing`` costs nothing here)."""
    shape = seat_shape(game, variant)
    if fmt is Format.GRID:
        per = math.prod([entrants] * (len(shape.roles) if shape is not None else 0))
    elif shape is not None:
        per = 1 if entrants == 1 else math.perm(entrants, len(shape.sides))
    else:
        per = entrants
    return per * max(games_per_pairing, 0)


def plan_matches(
    game: str,
    variant: str,
    entrants: Sequence[str],
    *,
    seats: int,
    fmt: Format = Format.ROUND_ROBIN,
    games_per_pairing: int = 1,
    duplicate: bool = True,
    seed: int = 0,
) -> list[MatchPlan]:
    """Every match of a tournament in play order."""
    if not entrants:
        raise FormatError("a tournament needs at least one entrant")
    if len(set(entrants)) != len(entrants):
        raise FormatError("each entrant may be listed once")
    if games_per_pairing < 1:
        raise FormatError("games per pairing must be at least 1")
    rosters: list[list[tuple[str, ...]]]  # per deal unit: the rosters that share it when duplicated
    shape = seat_shape(game, variant)
    if fmt is Format.GRID:
        if shape is None:
            raise FormatError("the grid format needs roles fixed to seats (the Decrypto benchmark's "
                              "encoder × decoder × interceptor)")
        rosters = [list(itertools.product(entrants, repeat=len(shape.roles)))]
    elif shape is not None:
        rosters = _sided(shape, entrants)
    else:
        e = len(entrants)
        rosters = [[tuple(entrants[(s + k) % e] for s in range(seats)) for k in range(e)]]
    plans: list[MatchPlan] = []
    group = 0
    for rep in range(games_per_pairing):
        for unit, unit_rosters in enumerate(rosters):
            for pos, roster in enumerate(unit_rosters):
                if duplicate:
                    s, g = _seed(seed, rep, unit), group
                else:
                    s, g = _seed(seed, rep, unit, pos), group + pos
                plans.append(MatchPlan(len(plans), roster, s, g))
            group += 1 if duplicate else len(unit_rosters)
    return plans


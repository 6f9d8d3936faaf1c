"""Tournament formats: which entrant sits in which seat of which game, with which deal (pure).

Roles follow seats: Decrypto's benchmark seats are fixed roles (0 encoder, 1 decoder,
2 interceptor) and the other games deal roles to seats from the game's seed. So a
format balances roles by balancing seats, and cancels the luck of the deal by
replaying the same seed with the entrants moved:

- ``round_robin`` on Who-is-Spy, Chameleon and Decrypto teams: rotation ``k`` puts
  entrant ``(seat + k) mod E`` in each seat, for ``k`` in ``0..E-1``; every entrant
  sits in every seat equally often. With ``duplicate`` the ``E`` rotations of a
  repetition share one seed (a *deal group*): the same deal is played ``E`` times and
  every entrant holds every dealt role of it exactly once.
- ``round_robin`` on the Decrypto benchmark: an entrant plays the team (encoder and
  decoder) or the interceptor. Every ordered pair (team, interceptor) of distinct
  entrants plays; with ``duplicate`` the pair and its swap share a seed, so both face
  the same keywords and codes from each side.
- ``grid`` (Decrypto benchmark only, the benchmark paper's grid): every
  encoder × decoder × interceptor combination of entrants; with ``duplicate`` all
  combinations of a repetition share one seed.

Seeds are drawn from the tournament seed, so a plan is reproducible.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from games.base import rng
from games.catalog import find

BENCHMARK_ROLES: tuple[str, ...] = ("encoder", "decoder", "interceptor")


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


def is_benchmark(game: str, variant: str) -> bool:
    """A variant whose roles are fixed to seats (encoder, decoder, interceptor), as its game declares."""
    d = find(game)
    return d is not None and d.fixed_roles(variant) is not None


def count_matches(game: str, variant: str, entrants: int, *, fmt: Format = Format.ROUND_ROBIN,
                  games_per_pairing: int = 1) -> int:
    """How many matches ``plan_matches`` would plan, by arithmetic alone: sizes are checked with
    this before anything is planned (a huge ``games_per_pairing`` costs nothing here)."""
    if fmt is Format.GRID:
        per = entrants**3
    elif is_benchmark(game, variant):
        per = 1 if entrants == 1 else entrants * (entrants - 1)
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
    if fmt is Format.GRID:
        if not is_benchmark(game, variant):
            raise FormatError("the grid format is the Decrypto benchmark's (encoder × decoder × interceptor)")
        rosters = [list(itertools.product(entrants, repeat=3))]
    elif is_benchmark(game, variant):
        if len(entrants) == 1:
            rosters = [[(entrants[0],) * 3]]
        else:
            rosters = [[(a, a, b), (b, b, a)] for a, b in itertools.combinations(entrants, 2)]
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


def seat_counts(plans: Sequence[MatchPlan]) -> Counter[tuple[str, int]]:
    """How often each entrant sat in each seat: the balance a round robin promises."""
    return Counter((entrant, seat) for p in plans for seat, entrant in enumerate(p.seats))

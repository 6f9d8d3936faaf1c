"""Who-is-Spy (Undercover): describe your word, find the spy whose word differs, as a pure engine.

One job per module: ``config`` (seats, variants, roles and phases, the config and deal as
data, dealing roles), ``state`` (the frozen records, who acts, the deal so far, the result),
``transitions`` (rounds, votes, eliminations, the end), ``rules`` (the engine, opening with
the rules it plays in prose), ``view`` (the typed view a seat reads), ``narration`` (events
and rules in words), ``metrics`` (numbers over finished games). ``DESCRIPTOR`` registers it.
"""

from __future__ import annotations

from games.descriptor import (
    ClueScoring,
    DealFormat,
    GameDescriptor,
    Golden,
    MenuEntry,
    Metric,
    MetricScope,
    SeatRole,
    Side,
    SneakScoring,
)
from games.spy.config import (
    MAX_SEATS,
    MIN_SEATS,
    ROLE_NAMES,
    Phase,
    Role,
    SpyConfig,
    SpyDeal,
    Team,
    TieRule,
    Variant,
    default_spies,
    description_chars,
    spies_for,
)
from games.spy.metrics import read_seats, summarize
from games.spy.rules import GAME, SpyGame
from games.spy.state import SpyState, VoteRecord
from games.spy.view import SpyView

_ROLES = (SeatRole.VILLAGER, SeatRole.SPY, SeatRole.MR_WHITE)
_GAMES = MetricScope.GAMES

DESCRIPTOR = GameDescriptor(
    id=SpyGame.id,
    title="Who-is-Spy",
    blurb="describe your word; find the spy who holds a slightly different one",
    engine=GAME,
    seats=(MIN_SEATS, MAX_SEATS),
    variants=tuple(Variant),
    roles=_ROLES,
    sides=(Side.VILLAGERS, Side.SPIES, Side.MR_WHITE),
    metrics=(
        Metric("rounds_survived", "rounds the seat survived", MetricScope.SEAT, _ROLES, "survived"),
        Metric("votes_received", "votes the seat received in the rounds' main votes", MetricScope.SEAT, _ROLES, "votes"),
        Metric("voted_rounds", "main votes the seat took part in", MetricScope.SEAT, _ROLES),
        Metric("eliminated", "1 when the seat was voted out", MetricScope.SEAT, _ROLES),
        Metric("games", "games", _GAMES),
        Metric("spy_game_win_rate", "games won by the spies", _GAMES, (SeatRole.SPY,)),
        Metric("mean_rounds", "mean rounds per game", _GAMES),
        Metric("spy", "spy seats", MetricScope.ROLE_BLOCK, (SeatRole.SPY,)),
        Metric("villager", "villager seats", MetricScope.ROLE_BLOCK, (SeatRole.VILLAGER,)),
        Metric("mr_white", "Mr. White seats", MetricScope.ROLE_BLOCK, (SeatRole.MR_WHITE,)),
        Metric("seats", "seats", _GAMES, _ROLES),
        Metric("win_rate", "win rate", _GAMES, _ROLES),
        Metric("rounds_survived", "rounds survived (mean)", _GAMES, _ROLES),
        Metric("votes_per_round", "votes received per round", _GAMES, _ROLES),
    ),
    read_seats=read_seats,
    summarize=summarize,
    clue_kinds=frozenset({"describe"}),
    sneak=SneakScoring.ON_REQUEST,
    clue_scoring=ClueScoring.ONE_SECRET,
    view=SpyView,
    deal=DealFormat(("pair", "spies", "blank", "order"), "pair: [villager word, spy word]; spies and blank: seats; "
                    "order: each round's speaking order, every seat once; any key left out is drawn from the seed"),
    golden=(Golden("classic", 6, 1), Golden("classic", 6, 2), Golden("spygame", 4, 1), Golden("spygame", 4, 2)),
    menu=MenuEntry(order=2, seats=4),  # a spy game reads best with four or more
    aliases=("whoisspy", "who-is-spy", "undercover"),
)
"""What the rest of the system knows of Who-is-Spy (``games.catalog``)."""

__all__ = [
    "DESCRIPTOR", "GAME", "MAX_SEATS", "MIN_SEATS", "ROLE_NAMES", "Phase", "Role", "SpyConfig", "SpyDeal", "SpyGame",
    "SpyState", "SpyView", "Team", "TieRule", "Variant", "VoteRecord", "default_spies", "description_chars", "spies_for",
]

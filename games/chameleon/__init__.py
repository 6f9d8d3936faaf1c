"""The Chameleon: the party game and its SNEAK-style variant (everyone but the chameleon knows the
secret word; one-word clues, then a vote), as a pure engine.

One job per module: ``config`` (seats, cards, variants, modes, the config and deal as data),
``state`` (ballots, rounds, the frozen state, who acts, the result), ``transitions`` (dealing
a round, clues, ballots, the guess, scoring), ``rules`` (the engine, opening with the rules it
plays in prose), ``view`` (the typed view a seat reads), ``narration`` (events and rules in
words), ``metrics`` (numbers over finished games). ``DESCRIPTOR`` registers it.
"""

from __future__ import annotations

from games.chameleon.config import (
    CLUE_MAX_CHARS,
    MAX_CARD_SIZE,
    MAX_SEATS,
    MIN_CARD_SIZE,
    MIN_SEATS,
    VARIANT_CARD_SIZE,
    BallotKind,
    Card,
    ChameleonConfig,
    Mode,
    Outcome,
    Phase,
    Role,
    RoundDeal,
    TieRule,
    Variant,
)
from games.chameleon.metrics import read_seats, summarize
from games.chameleon.rules import GAME, ChameleonGame
from games.chameleon.state import ChameleonState, RoundRecord
from games.chameleon.view import ChameleonView, OpenBallot
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

_ROLES = (SeatRole.CHAMELEON, SeatRole.PLAYER)
_CHAMELEON = (SeatRole.CHAMELEON,)
_GAMES = MetricScope.GAMES

DESCRIPTOR = GameDescriptor(
    id=ChameleonGame.id,
    title="Chameleon",
    blurb="everyone but the chameleon knows the secret word; give one-word clues, then vote",
    engine=GAME,
    seats=(MIN_SEATS, MAX_SEATS),
    variants=tuple(Variant),
    roles=_ROLES,
    sides=(Side.CHAMELEON, Side.PLAYERS, Side.SELF),
    metrics=(
        Metric("points", "the seat's points", MetricScope.SEAT, _ROLES, "pts"),
        Metric("escapes", "rounds the seat was the chameleon and was not caught (or named the secret)",
               MetricScope.SEAT, _CHAMELEON, "escapes"),
        Metric("caught", "rounds the seat was the chameleon and was caught", MetricScope.SEAT, _CHAMELEON,
               "caught"),
        Metric("rounds", "rounds the game lasted", MetricScope.SEAT, _ROLES),
        Metric("rounds_as_chameleon", "rounds the seat was the chameleon", MetricScope.SEAT, _ROLES),
        Metric("votes_received", "first-ballot votes the seat received", MetricScope.SEAT, _ROLES),
        Metric("games", "games", _GAMES),
        Metric("rounds", "rounds", _GAMES),
        Metric("catch_rate", "catch rate", _GAMES, _CHAMELEON),
        Metric("escape_rate", "escape rate", _GAMES, _CHAMELEON),
        Metric("guessed_when_caught", "named the secret when caught", _GAMES, _CHAMELEON),
        Metric("outcomes", "round outcomes", _GAMES),
        Metric("chameleon_points_per_round", "chameleon points per round", _GAMES, _CHAMELEON),
        Metric("player_points_per_round", "other players' points per round", _GAMES, (SeatRole.PLAYER,)),
    ),
    read_seats=read_seats,
    summarize=summarize,
    clue_kinds=frozenset({"clue"}),
    sneak=SneakScoring.ALWAYS,
    clue_scoring=ClueScoring.ONE_SECRET,
    view=ChameleonView,
    deal=DealFormat(("card", "secret", "chameleon", "first"), "card: a category name or [category, [words]]; secret: "
                    "a word of the card; chameleon and first: seats; one mapping, or a list of them for a match's "
                    "rounds; any key left out is drawn from the seed"),
    golden=(Golden("classic", 5, 1), Golden("classic", 5, 2), Golden("sneak", 5, 1), Golden("sneak", 5, 2)),
    menu=MenuEntry(order=3),
)
"""What the rest of the system knows of the Chameleon (``games.catalog``)."""

__all__ = [
    "CLUE_MAX_CHARS", "DESCRIPTOR", "GAME", "MAX_CARD_SIZE", "MAX_SEATS", "MIN_CARD_SIZE", "MIN_SEATS", "VARIANT_CARD_SIZE",
    "BallotKind", "Card", "ChameleonConfig", "ChameleonGame", "ChameleonState", "ChameleonView", "Mode", "OpenBallot",
    "Outcome", "Phase", "Role", "RoundDeal", "RoundRecord", "TieRule", "Variant",
]

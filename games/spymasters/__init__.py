"""Spymasters: a team word game of clues and a hidden key (two spymasters, a 5x5 board).

One job per module: ``config`` (teams, cards, word bank, deals), ``state`` (the frozen
records), ``rules`` (the engine: deal, turns, transitions, results), ``view`` (the typed view
a seat reads), ``narration`` (events and rules in words), ``metrics`` (numbers over games).
"""

from __future__ import annotations

from games.descriptor import ClueScoring, DealFormat, GameDescriptor, Golden, MenuEntry, Metric, MetricScope, SneakScoring
from games.spymasters.config import MAX_SEATS, MIN_SEATS, Role, Team, Variant
from games.spymasters.metrics import read_seats, summarize
from games.spymasters.rules import GAME, SpymastersGame
from games.spymasters.view import SpymastersView

_BOTH = (Role.SPYMASTER, Role.GUESSER)
_GAMES = MetricScope.GAMES

DESCRIPTOR = GameDescriptor(
    id=SpymastersGame.id,
    title="Spymasters",
    blurb="two teams, 25 words: spymasters give one-word clues, guessers find their team's words and dodge the assassin",
    engine=GAME,
    seats=(MIN_SEATS, MAX_SEATS),
    variants=tuple(Variant),
    roles=_BOTH,
    sides=(Team.RED, Team.BLUE),
    metrics=(
        Metric("words_found", "words of the seat's team revealed by the end", MetricScope.SEAT, _BOTH, "found"),
        Metric("clue_accuracy", "share of its team's clue numbers met, per clue", MetricScope.SEAT, _BOTH, "acc"),
        Metric("assassin", "games the seat's team lost to the assassin", MetricScope.SEAT, _BOTH, "assn"),
        Metric("clues_given", "clues the seat gave", MetricScope.SEAT, (Role.SPYMASTER,)),
        Metric("turns", "turns the game lasted", MetricScope.SEAT, _BOTH),
        Metric("games", "games", _GAMES),
        Metric("win_rate", "win rate per team", _GAMES),
        Metric("starting_team_win_rate", "the starting team's win rate", _GAMES),
        Metric("assassin_hits", "games ended by the assassin", _GAMES),
        Metric("assassin_rate", "share of games ended by the assassin", _GAMES),
        Metric("mean_turns", "mean turns per game", _GAMES),
        Metric("clues", "clues given", _GAMES),
        Metric("clue_accuracy", "clue-number accuracy (share of each clue's number found)", _GAMES, (Role.SPYMASTER,)),
        Metric("clues_met_rate", "share of clues whose number was met", _GAMES, (Role.SPYMASTER,)),
        Metric("words_per_clue", "own words found per clue", _GAMES),
        Metric("mean_clue_number", "mean clue number", _GAMES, (Role.SPYMASTER,)),
    ),
    read_seats=read_seats,
    summarize=summarize,
    clue_kinds=frozenset({"clue"}),
    # A clue points at several board words at once: SNEAK's one-secret pair does not fit it, so
    # models/eval/games/spymasters.py scores each clue on its board (utility and leakage), when
    # the table was opened with sneak_report=yes.
    sneak=SneakScoring.ON_REQUEST,
    clue_scoring=ClueScoring.BOARD,
    view=SpymastersView,
    deal=DealFormat(("words", "key", "starting", "spymasters"), "words: the 25 board words; key: 25 of red, blue, "
                    "bystander, assassin; starting: red or blue; spymasters: [red's seat, blue's seat]; any key left "
                    "out is drawn from the seed"),
    golden=(Golden("classic", 4, 1), Golden("classic", 6, 2), Golden("classic", 8, 3, (("guessing", "captain"),))),
    menu=MenuEntry(order=4),
    aliases=("spymaster",),
)
"""What the rest of the system knows of Spymasters (``games.catalog``)."""

__all__ = ["DESCRIPTOR", "GAME", "SpymastersGame"]

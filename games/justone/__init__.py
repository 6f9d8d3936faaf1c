"""Just One: a cooperative word game: everyone but the guesser writes a one-word clue, identical
clues cancel out, and the guesser has one try per card.

One job per module: ``config`` (seats, the round, the word bank, the config and deal as data),
``state`` (the frozen records), ``rules`` (the engine, opening with the rules it plays in
prose), ``view`` (the typed view a seat reads), ``narration`` (events and rules in words),
``metrics`` (numbers over finished games). ``DESCRIPTOR`` registers it.
"""

from __future__ import annotations

from games.descriptor import ClueScoring, DealFormat, GameDescriptor, Golden, MenuEntry, Metric, MetricScope, SneakScoring
from games.justone.config import MAX_SEATS, MIN_SEATS, PASS, JustOneConfig, JustOneDeal, Role, Side, Variant
from games.justone.metrics import read_seats, summarize
from games.justone.rules import GAME, JustOneGame
from games.justone.state import JustOneState
from games.justone.view import JustOneView

_ALL = (Role.PLAYER,)
_GAMES = MetricScope.GAMES

DESCRIPTOR = GameDescriptor(
    id=JustOneGame.id,
    title="Just One",
    blurb="cooperative: everyone writes a one-word clue for the guesser, and identical clues cancel out",
    engine=GAME,
    seats=(MIN_SEATS, MAX_SEATS),
    variants=tuple(Variant),
    roles=_ALL,
    sides=(Side.TABLE,),
    metrics=(
        Metric("found", "cards the seat guessed right", MetricScope.SEAT, _ALL, "found"),
        Metric("guessed", "cards the seat guessed", MetricScope.SEAT, _ALL),
        Metric("clues_given", "clues the seat wrote", MetricScope.SEAT, _ALL),
        Metric("clues_kept", "clues of the seat the guesser saw", MetricScope.SEAT, _ALL, "kept"),
        Metric("duplicates", "clues of the seat removed as the same as another's", MetricScope.SEAT, _ALL, "dup"),
        Metric("invalid", "clues of the seat removed for naming the word", MetricScope.SEAT, _ALL),
        Metric("score", "cards the table found", MetricScope.SEAT, _ALL, "score"),
        Metric("games", "games", _GAMES),
        Metric("mean_score", "cards found per game", _GAMES),
        Metric("win_rate", "games the table reached its target", _GAMES),
        Metric("found_rate", "share of played cards found", _GAMES),
        Metric("pass_rate", "share of played cards passed", _GAMES),
        Metric("duplicate_rate", "share of clues removed as duplicates", _GAMES),
        Metric("invalid_rate", "share of clues removed for naming the word", _GAMES),
    ),
    read_seats=read_seats,
    summarize=summarize,
    clue_kinds=frozenset({"clue"}),
    # Its clue report is its own (models/eval/games/justone.py): which clues led the guesser to
    # the word and which duplicates cost the table, read from the log.
    clue_scoring=ClueScoring.OUTCOME,
    sneak=SneakScoring.ON_REQUEST,
    menu=MenuEntry(order=5, seats=4),
    aliases=("just-one", "just_one"),
    view=JustOneView,
    deal=DealFormat(("words", "first"), "words: the secret word of every card, in play order; first: the first "
                    "card's guesser; either key left out is drawn from the seed"),
    golden=(Golden("classic", 3, 1), Golden("classic", 5, 2), Golden("classic", 7, 3)),
)
"""What the rest of the system knows of Just One (``games.catalog``)."""

__all__ = ["DESCRIPTOR", "GAME", "PASS", "JustOneConfig", "JustOneDeal", "JustOneGame", "JustOneState", "JustOneView"]

"""Spymasters: a team word game of clues and a hidden key (two spymasters, a 5x5 board).

One job per module: ``config`` (teams, cards, word bank, deals), ``state`` (the frozen
records), ``rules`` (the engine: deal, turns, transitions, results), ``view`` (the typed view
a seat reads), ``narration`` (events and rules in words), ``metrics`` (numbers over games).
"""

from __future__ import annotations

from games.spymasters.rules import GAME, SpymastersGame

__all__ = ["GAME", "SpymastersGame"]

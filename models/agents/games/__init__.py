"""What the AI players know about each game, one module per game, found by the game's id.

A game's agent module is ``models/agents/games/<game id>.py`` and defines one
``AGENT = GameAgent(...)`` (``models/agents/games/kit.py``): its prompt renderer, the
embedding baseline's move for each action kind, and the strategy's evidence for
choices, candidates for free text and the score of a free-text answer. Nothing else
needs to change for the agents to play a new game: ``game_agent(game_id)`` finds the
module by the game's id (``models.parts``). Prompt templates go to ``models/agents/prompts/<game>_*.toml``.
"""

from __future__ import annotations

from models.agents.games.kit import GameAgent
from models.parts import Part, part


class NoAgentKnowledge(ValueError):
    """The game has no agent module: the AI players cannot play it."""


def game_agent(game_id: str) -> GameAgent:
    """The agent knowledge of ``game_id``, from ``models/agents/games/<game_id>.py`` (``models.parts``)."""
    agent = part(Part.AGENT, game_id)
    if agent is None:
        raise NoAgentKnowledge(f"the AI players do not know the game {game_id[:40]!r}")
    if not isinstance(agent, GameAgent) or agent.game != game_id:
        raise NoAgentKnowledge(f"{Part.AGENT.path(game_id)} defines no AGENT = GameAgent({game_id!r}, ...)")
    return agent


__all__ = ["GameAgent", "NoAgentKnowledge", "game_agent"]

"""The agents' layout: per-game modules found by game id, shared embedding tools, no import cycles."""

from __future__ import annotations

import pytest

import games
from models.agents.games import GameAgent, NoAgentKnowledge, game_agent
from tests.test_boundaries import cycles, import_graph


@pytest.mark.parametrize("game_id", sorted(games.registry()))
def test_every_registered_game_has_an_agent_module(game_id: str) -> None:
    agent = game_agent(game_id)
    assert isinstance(agent, GameAgent) and agent.game == game_id
    assert agent.baseline, "the embedding baseline plays every game"


@pytest.mark.parametrize("name", ["nosuchgame", "../decrypto", "Decrypto", "kit", ""])
def test_an_unknown_game_is_refused_with_a_sentence(name: str) -> None:
    with pytest.raises(NoAgentKnowledge):
        game_agent(name)


def test_models_have_no_import_cycles() -> None:
    graph = import_graph()
    found = [c for c in cycles(graph) if any(m.startswith("models") for m in c)]
    assert not found, f"import cycles in models (function-local imports included): {found}"


def test_the_embedding_tools_depend_on_neither_agents_nor_eval() -> None:
    graph = import_graph()
    assert not {m for m in graph["models.embeddings"] if m.startswith(("models.agents", "models.eval"))}
    assert not {m for m in graph["models.agents.registry"] if m == "models.agents.wiring"}

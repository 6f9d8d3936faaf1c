"""The agents' layout: per-game modules found by game id, shared embedding tools, no import cycles."""

from __future__ import annotations

import pytest

from games.catalog import descriptors
from games.descriptor import GameDescriptor
from games.play import play_random
from models.agents.games import GameAgent, NoAgentKnowledge, game_agent
from models.parts import Part, module
from tests.test_boundaries import cycles, import_graph

WITH_AGENTS = [d for d in descriptors() if module(Part.AGENT, d.id) is not None]


@pytest.mark.parametrize("d", WITH_AGENTS, ids=lambda d: d.id)
def test_an_agent_module_plays_every_move_its_game_asks_for(d: GameDescriptor) -> None:
    """A game may have no agent module (``hushtable doctor`` says what that costs); one that has
    it names the game, has a baseline move and a prompt for every kind of move the game asks for."""
    agent = game_agent(d.id)
    assert isinstance(agent, GameAgent) and agent.game == d.id
    for variant in d.variants:
        cfg = d.engine.make_config(str(variant))
        seats = d.engine.seat_range(cfg)[0]
        pt = play_random(d.engine, cfg, seats, 5)
        state, _ = d.engine.new(cfg, seats, 5)
        for seat, action in pt.actions:
            spec = d.engine.legal(state, seat)
            assert spec is not None and spec.kind in agent.baseline, (variant, spec)
            assert agent.prompt(d.engine.observe(state, seat), spec).template.startswith(f"{d.id}_")
            state, _ = d.engine.apply(state, seat, action)


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

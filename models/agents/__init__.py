"""AI players, chosen by configured name: ``random``, ``llm:default``, ``llm:plain``, ``embed:minilm`` ...

`AgentRegistry` (models/agents/registry.py) turns a configured name into a Player and
refuses anything else with `UnknownAgent`; the startup point adds the model-backed
kinds (models/agents/wiring.py), which own the shared resources (clients, embeddings).
"""

from __future__ import annotations

from models.agents.base import CallLog, Decision, Player
from models.agents.random_agent import RandomAgent
from models.agents.registry import AgentEntry, AgentKind, AgentRegistry, UnknownAgent

__all__ = ["AgentEntry", "AgentKind", "AgentRegistry", "CallLog", "Decision", "Player", "RandomAgent", "UnknownAgent"]

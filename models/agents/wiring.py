"""Registers the model-backed agent kinds with the startup point's AgentRegistry.

``llm:<model>?params`` builds an LLMAgent that resolves its inference client
on its first turn through ``inference_for`` (the app's ``ClientPool.get``), so
a game whose seats never act never loads a model. ``embed:<name>?k=16`` builds
an EmbeddingAgent over one shared vocabulary index per embedding model, whose
embedder comes from ``embedder_for`` (models.worker.embedding_backend) and
loads on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable

from models.agents import AgentRegistry
from models.agents.base import Player
from models.agents.embed import DEFAULT_K, Embedder, EmbeddingAgent, VocabIndex
from models.agents.llm import agent_from_params
from models.types import Inference


def register_agents(
    registry: AgentRegistry,
    *,
    inference_for: Callable[[str], Awaitable[Inference]],
    embedder_for: Callable[[str], Embedder],
) -> None:
    indexes: dict[str, VocabIndex] = {}
    lock = threading.Lock()

    def index_for(name: str) -> VocabIndex:
        with lock:
            if name not in indexes:
                indexes[name] = VocabIndex(embedder_for(name))
            return indexes[name]

    def build_llm(arg: str, params: dict[str, str], seed: int) -> Player:
        return agent_from_params(inference_for, arg, params, seed, spec=f"llm:{arg or 'default'}")

    def build_embed(arg: str, params: dict[str, str], seed: int) -> Player:
        unknown = sorted(set(params) - {"k"})
        if unknown:
            raise ValueError(f"unknown embed agent parameter(s) {', '.join(unknown)}; known: k")
        try:
            k = int(params.get("k", DEFAULT_K))
        except ValueError as exc:
            raise ValueError(f"embed agent: k must be a whole number, not {params.get('k')!r}") from exc
        name = arg or "minilm"
        return EmbeddingAgent(index_for(name), seed=seed, k=k, spec=f"embed:{name}?k={k}")

    registry.register("llm", build_llm)
    registry.register("embed", build_embed)

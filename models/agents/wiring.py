"""Registers the model-backed agent kinds with an AgentRegistry (models/agents/registry.py).

An ``llm:`` entry builds an LLMAgent that reaches its entry's endpoint through
``connect(location, api_key)`` (the app's ``ClientPool.get``) on its first turn, so
a game whose seats never act never loads a model. Only the entry's configured
location and key are ever passed: nothing a player typed reaches ``connect``.
An ``embed:`` entry builds an EmbeddingAgent over one shared vocabulary index per
embedding model (``minilm``, the sentence encoder; ``assoc``, the association model of
``models/association.py``; or a local folder), whose embedder comes from ``embedder_for`` and
loads on first use. Building an agent loads nothing (the registry builds every entry at start to check
its options, and a start may still be refused after that); ``AgentRegistry.warm(names)`` embeds, in
a background thread, the vocabulary of each index the named agents play with: the app calls it with
the configured agents once the start has said what runs, so a refused start, or a set-up whose
agents use no embedding model, loads none. With ``vocab_cache`` (the app passes ``vocab/`` in its
model cache) the matrix is read from disk when the same model and vocabulary were embedded before,
so only the first start pays for it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from models.agents.base import Player
from models.agents.embed import EmbeddingAgent
from models.agents.judge import JudgeCache
from models.agents.llm import agent_from_params
from models.agents.registry import BUILTIN, AgentEntry, AgentKind, AgentRegistry, Connect, entries_from_json
from models.embeddings import DEFAULT_K, Embedder, VocabIndex
from models.types import Inference

VOCAB_CACHE = "vocab"
"""The folder, inside the model cache, of the stored vocabulary matrices."""
WARM_UP = "warm-vocab:"
"""The name prefix of the threads that embed an index's vocabulary in the background."""


def warming_up() -> bool:
    """Whether a vocabulary warm-up thread is still at work (loading a model or embedding words)."""
    return any(t.name.startswith(WARM_UP) and t.is_alive() for t in threading.enumerate())


def register_agents(
    registry: AgentRegistry,
    *,
    connect: Connect,
    embedder_for: Callable[[str], Embedder],
    vocab_cache: Path | None = None,
) -> None:
    """Add the llm and embed builders, and the built-in entries the registry does not have yet.

    ``connect``: the client of an entry's location and key (a pool's ``get``); ``vocab_cache``: where
    vocabulary matrices are stored between starts (None: not stored)."""
    indexes: dict[str, VocabIndex] = {}
    uses: dict[str, str] = {}  # entry name -> the index its agents play with
    warmed: set[str] = set()
    judges = JudgeCache()
    lock = threading.Lock()

    def index_for(name: str, user: str) -> VocabIndex:
        with lock:
            uses[user] = name
            if name not in indexes:
                indexes[name] = VocabIndex(embedder_for(name), cache=vocab_cache)
            return indexes[name]

    def build_llm(entry: AgentEntry, seed: int) -> Player:
        async def endpoint(_: str) -> Inference:
            return await connect(entry.model, entry.api_key)

        def usable_index(name: str) -> VocabIndex | None:
            """The strategy's index, when an embedding model is there (a set-up without one plays on the LLM alone)."""
            index = index_for(name, entry.name)
            return index if isinstance(index.embedder, Embedder) else None

        return agent_from_params(endpoint, entry.model, entry.params, seed, spec=entry.name, index_for=usable_index,
                                 judges=judges)

    def build_embed(entry: AgentEntry, seed: int) -> Player:
        unknown = sorted(set(entry.params) - {"k"})
        if unknown:
            raise ValueError(f"unknown embed agent parameter(s) {', '.join(unknown)}; known: k")
        try:
            k = int(entry.params.get("k", DEFAULT_K))
        except ValueError as exc:
            raise ValueError(f"embed agent: k must be a whole number, not {entry.params.get('k')!r}") from exc
        return EmbeddingAgent(index_for(entry.model or "minilm", entry.name), seed=seed, k=k, spec=entry.name)

    def warm(entry: AgentEntry) -> None:
        if entry.name not in uses:  # not built yet: building it says which index it plays with, if any
            registry(entry.name, 0)
        name = uses.get(entry.name)
        with lock:
            if name is None or name in warmed or not isinstance(indexes[name].embedder, Embedder):
                return
            warmed.add(name)
        # Embedded once, in the background: the first move does not pay for it.
        threading.Thread(target=indexes[name].warm, name=f"{WARM_UP}{name}", daemon=True).start()

    registry.register(AgentKind.LLM, build_llm)
    registry.register(AgentKind.EMBED, build_embed)
    registry.on_warm(warm)
    known = set(registry.names())
    for entry in BUILTIN:
        if entry.name not in known:
            registry.define(entry)


def build_registry(settings: Any, connect: Connect, embedder_for: Callable[[str], Any]) -> AgentRegistry:
    """The registry from the app's settings: built-ins, the ``openai_url`` entry, then the operator's entries."""
    entries: list[AgentEntry] = list(BUILTIN[1:])
    openai_url = getattr(settings, "openai_url", None)
    if openai_url:
        entries.append(AgentEntry("llm:openai", AgentKind.LLM, f"openai:{openai_url}", {}, getattr(settings, "openai_api_key", None)))
    entries += entries_from_json(getattr(settings, "agents", "") or "")
    registry = AgentRegistry(entries)
    cache = getattr(settings, "model_cache", None)
    register_agents(registry, connect=connect, embedder_for=embedder_for,
                    vocab_cache=Path(cache).expanduser() / VOCAB_CACHE if cache else None)
    registry.check()
    return registry


__all__ = ["VOCAB_CACHE", "build_registry", "register_agents"]

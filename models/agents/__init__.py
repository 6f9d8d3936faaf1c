"""AI players, chosen by spec strings: ``random``, ``llm:default``, ``embed:minilm?k=16`` ...

`AgentRegistry` turns a spec into a Player; builders for each kind are registered by
the startup point, which owns the shared resources (inference clients, embeddings).
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from models.agents.base import CallLog, Decision, Player
from models.agents.random_agent import RandomAgent

Builder = Callable[[str, dict[str, str], int], Player]
"""(argument after the colon, query parameters, seed) -> Player"""


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``kind:arg?k=v`` → (kind, arg, params). The arg may itself contain colons (URLs)."""
    spec = spec.strip()
    if not spec:
        raise ValueError("an empty agent spec")
    head, sep, query = spec.rpartition("?")
    if not sep or "/" in query or "#" in query:  # a '?' inside a URL, not our parameters
        head, query = spec, ""
    kind, _, arg = head.partition(":")
    return kind.lower(), arg, dict(parse_qsl(query))


class AgentRegistry:
    def __init__(self) -> None:
        self._builders: dict[str, Builder] = {"random": lambda arg, params, seed: RandomAgent("random", seed)}

    def register(self, kind: str, builder: Builder) -> None:
        self._builders[kind] = builder

    def kinds(self) -> list[str]:
        return sorted(self._builders)

    def __call__(self, spec: str, seed: int) -> Player:
        kind, arg, params = parse_spec(spec)
        if kind not in self._builders:
            raise ValueError(f"unknown agent kind {kind!r}; known: {', '.join(self.kinds())}")
        player = self._builders[kind](arg, params, seed)
        player.spec = spec
        return player


__all__ = ["AgentRegistry", "CallLog", "Decision", "Player", "RandomAgent", "parse_spec"]

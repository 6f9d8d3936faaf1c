"""The default AI player's name, and the old name still accepted for it.

The default player plays each game's strategy over word associations (embeddings and WordNet);
on a CPU it asks no language model at all, so it is called ``strategist``, not ``llm:...``.
``llm:default``, its name until then, is still read wherever a name is read: settings, stored
tournaments and games, an operator's typed choice. This module imports nothing, so the settings
can read it without loading the agents.
"""

from __future__ import annotations

STRATEGIST = "strategist"
ALIASES: dict[str, str] = {"llm:default": STRATEGIST}


def canonical(name: str) -> str:
    """The current name of an agent (an old name mapped to its new one; any other name as given)."""
    key = name.strip()
    return ALIASES.get(key, key)

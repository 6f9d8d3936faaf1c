"""A game's parts outside ``games/``, found one way: by the game's id.

A registered game (``games.catalog``) may have an agent module,
``models/agents/games/<id>.py`` with ``AGENT = GameAgent(...)``, and a clue module,
``models/eval/games/<id>.py`` with ``SNEAK = ...`` (what its descriptor's ``clue_scoring``
asks for). ``part(kind, game_id)`` imports that module by name; there is no list to edit and
no package scan. This module imports neither ``models.agents`` nor ``models.eval`` (each
checks the type of what it finds), so both can use it.
"""

from __future__ import annotations

import importlib
import re
from enum import StrEnum
from types import ModuleType

_ID = re.compile(r"^[a-z][a-z0-9_]*$")


class Part(StrEnum):
    """A kind of per-game module: its package and the name it must define."""

    AGENT = "agent"  # models/agents/games/<id>.py: AGENT
    CLUE = "clue"  # models/eval/games/<id>.py: SNEAK

    @property
    def package(self) -> str:
        return "models.agents.games" if self is Part.AGENT else "models.eval.games"

    @property
    def attribute(self) -> str:
        return "AGENT" if self is Part.AGENT else "SNEAK"

    def path(self, game_id: str) -> str:
        return f"{self.package.replace('.', '/')}/{game_id}.py"


def module(kind: Part, game_id: str) -> ModuleType | None:
    """The game's module of this kind, or None when it has none (or the id is not a module
    name). An error inside an existing module is raised, never taken for a missing one."""
    if not _ID.match(game_id):
        return None
    name = f"{kind.package}.{game_id}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return None


def part(kind: Part, game_id: str) -> object | None:
    """What the game's module of this kind defines (``AGENT``, ``SNEAK``), or None."""
    found = module(kind, game_id)
    return getattr(found, kind.attribute, None) if found is not None else None

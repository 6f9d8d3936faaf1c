"""The SNEAK prompt templates (``data/prompts.toml``), filled with ``string.Template``.

``prompt(name, **values)`` returns the chat messages (system, user) of one
template; a missing value raises ``KeyError`` naming it, so a template and its
caller cannot drift apart silently. ``PROMPT_VERSION`` is a digest of the file:
it goes into the evaluator settings, so changing a prompt re-scores instead of
mixing old and new scores under one key.
"""

from __future__ import annotations

import hashlib
import tomllib
from functools import cache
from importlib import resources
from string import Template

from models.types import Message

_FILE = "prompts.toml"


@cache
def _raw() -> str:
    return resources.files("models.eval").joinpath("data", _FILE).read_text(encoding="utf-8")


@cache
def templates() -> dict[str, dict[str, str]]:
    data = tomllib.loads(_raw())
    return {name: {k: str(v) for k, v in t.items()} for name, t in data.items()}


PROMPT_VERSION = hashlib.sha256(_raw().encode()).hexdigest()[:12]


def prompt(name: str, **values: str) -> tuple[Message, ...]:
    """The messages of template ``name`` with every ``$placeholder`` filled: system, the worked
    example (user, assistant) when the template has one, then the request."""
    t = templates()[name]
    example = ((Message("user", t["example_user"]), Message("assistant", t["example_assistant"]))
               if "example_user" in t else ())
    return (Message("system", Template(t["system"]).substitute(values)), *example,
            Message("user", Template(t["user"]).substitute(values)))

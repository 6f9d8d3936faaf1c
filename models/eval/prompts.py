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


def prompt(name: str, *, example: bool = False, **values: str) -> tuple[Message, ...]:
    """The messages of template ``name`` with every ``$placeholder`` filled: system, then the request.
    ``example``: the template's worked example (user, assistant) goes before the request, when it has one
    (the SNEAK paper prompts zero-shot: a one-shot prompt is a named choice, ``?shots=1``)."""
    t = templates()[name]
    example_turns = ((Message("user", t["example_user"]), Message("assistant", t["example_assistant"]))
                     if example and "example_user" in t else ())
    return (Message("system", Template(t["system"]).substitute(values)), *example_turns,
            Message("user", Template(t["user"]).substitute(values)))

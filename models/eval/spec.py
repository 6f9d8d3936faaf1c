"""Evaluator and generator specs (``kind:arg?k=v``), as the operator writes them on the command line.

Chat users never type these: in chat, evaluators come from configuration. Agents for seats are
resolved by configured name in ``models.agents.registry``; this grammar is only for research runs.
"""

from __future__ import annotations

from urllib.parse import parse_qsl


def parse_spec(spec: str) -> tuple[str, str, dict[str, str]]:
    """``kind:arg?k=v`` -> (kind, arg, params). The arg may itself contain colons (URLs)."""
    spec = spec.strip()
    if not spec:
        raise ValueError("an empty spec")
    head, sep, query = spec.rpartition("?")
    if not sep or "/" in query or "#" in query:  # a '?' inside a URL, not our parameters
        head, query = spec, ""
    kind, _, arg = head.partition(":")
    return kind.lower(), arg, dict(parse_qsl(query))

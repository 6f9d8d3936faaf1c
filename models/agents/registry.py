"""Which AI players exist: agents by configured name only.

Players pick an AI by its *name* (``strategist``, ``llm:plain``, ``embed:minilm``, ``embed:assoc``,
``random``, or an entry the operator defines; ``llm:default``, the strategist's old name, still
resolves to it unless the operator defines an entry of that name). A name is looked up here; anything
else — a URL, a path, a name with parameters appended — raises ``UnknownAgent``
and nothing is contacted. Where a model lives (a folder, our worker's URL, an
OpenAI-compatible server and its model) and the key to send it come only from
configuration: the built-in entries below, and the operator's JSON setting
``HUSHTABLE_AGENTS`` (``bot/settings.py``, AI section), e.g.::

    {"llm:big":   {"model": "openai:https://api.example.com/v1#big-model", "api_key": "sk-...",
                   "params": {"mode": "plain"}},
     "llm:gpu":   {"model": "http://10.0.0.5:8765"},
     "embed:mpnet": {"model": "/srv/models/mpnet"}}

The kind of an operator's entry is its name's prefix (``llm:``, ``embed:``, ``random``). An
entry's API key is sent only to that entry's endpoint: clients are pooled per
configured endpoint (model location and key), never per string a user typed.
``params`` are the agent's options (see ``models.agents.llm.agent_from_params`` and
the embedding agent's ``k``); they are checked when the entry is defined, so a bad
setting stops the bot at start with a clear message, not a player mid-game.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from models.agent_names import STRATEGIST, canonical
from models.agents.base import Player
from models.agents.random_agent import RandomAgent
from models.types import Inference


class UnknownAgent(ValueError):
    """A name that is not one of the configured agents. The message lists the ones that are."""


class AgentKind(StrEnum):
    LLM = "llm"
    EMBED = "embed"
    RANDOM = "random"


@dataclass(frozen=True, slots=True)
class AgentEntry:
    """One configured agent: its name, kind, model location and options (all from configuration)."""

    name: str
    kind: AgentKind
    model: str = ""  # llm: "default", a folder, "http://worker", "openai:URL#model", "fake"; embed: "minilm", "assoc" or a folder
    params: Mapping[str, str] = field(default_factory=dict)
    api_key: str | None = field(default=None, repr=False)  # never printed, logged or compared with user input

    @property
    def endpoint(self) -> tuple[str, str | None]:
        """The pool key: the same location with another key is another endpoint."""
        return (self.model, self.api_key)


def kind_of(name: str) -> AgentKind:
    head = name.partition(":")[0].strip().lower()
    try:
        return AgentKind(head)
    except ValueError:
        raise UnknownAgent(f"agent names start with llm:, embed: or are 'random', not {name[:60]!r}") from None


BUILTIN: tuple[AgentEntry, ...] = (
    AgentEntry("random", AgentKind.RANDOM),
    # The strongest agent: debiased choices, propose-then-choose text, SNEAK-style strategy, words read
    # by association (built like an llm: entry on the bundled model, which it asks only where one is
    # configured to help; models/agent_names.py).
    AgentEntry(STRATEGIST, AgentKind.LLM, "default"),
    # The papers' protocol: generate, re-prompt on a refusal (research fidelity).
    AgentEntry("llm:plain", AgentKind.LLM, "default", {"mode": "plain"}),
    AgentEntry("embed:minilm", AgentKind.EMBED, "minilm"),
    # The same baselines on the association model (models/association.py: word vectors, WordNet, MiniLM).
    AgentEntry("embed:assoc", AgentKind.EMBED, "assoc"),
)


def entries_from_json(raw: str) -> list[AgentEntry]:
    """The operator's named entries from the ``HUSHTABLE_AGENTS`` JSON object; ValueError says what is wrong.

    Error messages name the entry and the field, never a key's value."""
    if not raw.strip():
        return []
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"HUSHTABLE_AGENTS is not valid JSON (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("HUSHTABLE_AGENTS must be a JSON object: {\"llm:name\": {\"model\": ..., ...}}")
    out: list[AgentEntry] = []
    for name, body in data.items():
        if not isinstance(name, str) or not name.strip() or any(c in name for c in "?#/ \t"):
            raise ValueError(f"HUSHTABLE_AGENTS: {str(name)[:40]!r} is not a plain agent name (like llm:big)")
        kind = kind_of(name)
        if not isinstance(body, dict):
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}] must be an object")
        unknown = sorted(set(body) - {"model", "api_key", "params"})
        if unknown:
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}]: unknown field(s) {', '.join(unknown)}; known: model, api_key, params")
        model, key, params = body.get("model", ""), body.get("api_key"), body.get("params", {})
        if not isinstance(model, str) or (kind is not AgentKind.RANDOM and not model.strip()):
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}]: 'model' must be a model location (a string)")
        if key is not None and not isinstance(key, str):
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}]: 'api_key' must be a string")
        if key and not model.startswith("openai:"):
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}]: an api_key is only sent to an openai: model location")
        if not isinstance(params, dict) or not all(isinstance(v, (str, int, float)) for v in params.values()):
            raise ValueError(f"HUSHTABLE_AGENTS[{name!r}]: 'params' must map option names to values")
        out.append(AgentEntry(name.strip(), kind, model.strip(), {str(k): str(v) for k, v in params.items()}, key or None))
    return out


Builder = Callable[[AgentEntry, int], Player]
"""(the configured entry, seed) -> Player"""


class AgentRegistry:
    """Names to players. ``registry(name, seed)`` builds one; ``UnknownAgent`` for anything not configured.

    Without builders only ``random`` resolves (tests and AI-less set-ups); the startup
    point adds the model-backed kinds with ``models.agents.wiring.register_agents``
    (``models.agents.wiring.build_registry`` does all of it from the settings).
    """

    def __init__(self, entries: Sequence[AgentEntry] = ()) -> None:
        self._entries: dict[str, AgentEntry] = {}
        self._builders: dict[AgentKind, Builder] = {AgentKind.RANDOM: lambda entry, seed: RandomAgent(entry.name, seed)}
        self._warmers: list[Callable[[AgentEntry], None]] = []
        self.define(BUILTIN[0])
        for e in entries:
            self.define(e)

    def register(self, kind: AgentKind, builder: Builder) -> None:
        """The builder of a kind: every entry of that kind is built with it."""
        self._builders[kind] = builder

    def on_warm(self, warmer: Callable[[AgentEntry], None]) -> None:
        """Called by ``warm`` with each named entry (the model-backed kinds start loading their models)."""
        self._warmers.append(warmer)

    def warm(self, names: Iterable[str]) -> None:
        """Start loading, in the background, what the named agents' first moves need; a name that resolves
        to nothing is passed over (the start has checked the configured names already)."""
        known = set(self.names())
        for name in dict.fromkeys(self.current(n) for n in names):
            if name in known:
                for warmer in self._warmers:
                    warmer(self._entries[name])

    def define(self, entry: AgentEntry) -> None:
        """Add or replace a named entry (operator entries may redefine the built-in ones)."""
        self._entries[entry.name] = entry

    def names(self) -> list[str]:
        """Every name that resolves now (its kind has a builder)."""
        return [n for n, e in self._entries.items() if e.kind in self._builders]

    def choices(self, wanted: Sequence[str]) -> list[str]:
        """The operator's agent choices that resolve, in the operator's order (old names by their new one)."""
        known = set(self.names())
        return [n for n in (self.current(w) for w in wanted) if n in known]

    def current(self, name: str) -> str:
        """The name ``name`` resolves to: itself when configured, else its new name if it is an old one."""
        key = name.strip()
        return key if key in self._entries else canonical(key)

    def entry(self, name: str) -> AgentEntry:
        key = self.current(name) if isinstance(name, str) else ""
        e = self._entries.get(key)
        if e is None or key not in self.names():
            shown = name[:60] if isinstance(name, str) else type(name).__name__
            raise UnknownAgent(f"there is no AI player called {shown!r}; choose one of: {', '.join(self.names())}")
        return e

    def __call__(self, name: str, seed: int) -> Player:
        entry = self.entry(name)
        player = self._builders[entry.kind](entry, seed)
        player.spec = entry.name
        return player

    def check(self) -> None:
        """Build every entry once (no model is loaded): a bad option fails at start, not mid-game."""
        for name in self.names():
            try:
                self(name, 0)
            except UnknownAgent:
                raise
            except (TypeError, ValueError) as exc:
                raise ValueError(f"agent {name!r} is misconfigured: {exc}") from None


Connect = Callable[[str, str | None], Awaitable[Inference]]
"""(model location, api key or None) -> a started client: the app's ``ClientPool.get``, which keeps
one client per (location, key), so each configured endpoint has one client and a key goes only
with the location it was configured for."""


__all__ = [
    "AgentEntry",
    "AgentKind",
    "AgentRegistry",
    "BUILTIN",
    "Builder",
    "Connect",
    "UnknownAgent",
    "entries_from_json",
    "kind_of",
]

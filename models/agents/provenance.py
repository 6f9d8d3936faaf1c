"""Where each AI move came from: the decision row of the agent-call log, and its tallies.

The table's runner (``bot/core/agents.py``) closes every AI move with one ``decision``
row in ``agent_calls`` (operation ``none``, no latency of its own): the agent that
played, its role, the source (``model``, ``specialist``, ``fallback``, ``random`` or
``rules``), the model's share of the decision, and whether the move reached its
wall-clock deadline (``timeout``; ``played`` then says what played instead). Nothing
secret goes in it: the action played is already in the game log.

``tally`` counts these rows per agent and role; ``hushtable stats``, tournament
leaderboards and ``bench/players.py`` print them with ``render``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from games.base import ActionSpec, Observation
from models.agents.base import CallLog, Source
from models.agents.games import NoAgentKnowledge, game_agent

DECISION = "decision"


def role_of(obs: Observation, spec: ActionSpec) -> str:
    """The seat's role for this move, as the game module names it (the action kind by default)."""
    try:
        role = game_agent(obs.game).role
    except NoAgentKnowledge:
        return spec.kind
    return role(obs, spec) if role is not None else spec.kind


def decision_row(agent: str, *, role: str, source: Source, model_share: float = 0.0, timeout: bool = False,
                 played: str = "", attempt: int = 0) -> CallLog:
    """The row that closes a move in the agent-call log."""
    return CallLog(agent, operation="none", prompt={DECISION: {
        "role": role, "source": source.value, "model_share": round(float(model_share), 4), "timeout": timeout,
        "played": played or agent}}, retries=attempt)


def decision_of(prompt: object) -> Mapping[str, Any] | None:
    """The decision a logged row's prompt holds, or None for every other row."""
    if isinstance(prompt, Mapping):
        d = prompt.get(DECISION)
        if isinstance(d, Mapping) and "source" in d:
            return d
    return None


@dataclass
class Tally:
    """Moves of one agent in one role, by source."""

    moves: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    timeouts: int = 0
    share_sum: float = 0.0

    def add(self, d: Mapping[str, Any]) -> None:
        self.moves += 1
        src = str(d.get("source", "?"))
        self.sources[src] = self.sources.get(src, 0) + 1
        self.timeouts += int(bool(d.get("timeout")))
        self.share_sum += float(d.get("model_share") or 0.0)

    def share(self, source: Source) -> float:
        return self.sources.get(source.value, 0) / self.moves if self.moves else 0.0

    @property
    def model_share(self) -> float:
        """Mean model share of the decisions."""
        return self.share_sum / self.moves if self.moves else 0.0

    def to_json(self) -> dict[str, Any]:
        return {"moves": self.moves, "sources": dict(sorted(self.sources.items())), "timeouts": self.timeouts,
                "model_share": round(self.model_share, 4)}


def tally(rows: Iterable[tuple[str, Any]]) -> dict[tuple[str, str], Tally]:
    """(agent, role) -> Tally, from (agent_spec, prompt) pairs of logged agent calls."""
    out: dict[tuple[str, str], Tally] = {}
    for spec, prompt in rows:
        d = decision_of(prompt)
        if d is None:
            continue
        out.setdefault((spec, str(d.get("role", "?"))), Tally()).add(d)
    return dict(sorted(out.items()))


def render(tallies: Mapping[tuple[str, str], Tally]) -> str:
    """A text table: moves, the share of each source, deadline hits and the mean model share."""
    if not tallies:
        return "no AI decisions logged\n"
    head = ("agent", "role", "moves", "model", "specialist", "fallback", "random", "rules", "timeouts", "model share")
    rows: list[tuple[str, ...]] = [head]
    for (agent, role), t in tallies.items():
        rows.append((agent, role, str(t.moves), *(f"{t.share(s):.0%}" for s in
                     (Source.MODEL, Source.SPECIALIST, Source.FALLBACK, Source.RANDOM, Source.RULES)),
                     str(t.timeouts), f"{t.model_share:.2f}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows) + "\n"


__all__ = ["DECISION", "Tally", "decision_of", "decision_row", "render", "role_of", "tally"]

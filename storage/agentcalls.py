"""Agent calls: every model call an AI seat made (prompt, raw output, label probabilities, latency).

They are written by the turn log with the action they chose (``append_turn``), each
row built by ``agent_call_values``; this repository reads them back (the export).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlmodel import col, select

from storage.database import Database
from storage.records import AgentCallRecord
from storage.tables import AgentCallRow


def agent_call_values(c: AgentCallRecord, *, game_id: int | None, action_seq: int | None, now: datetime) -> dict[str, Any]:
    """The row of one agent call."""
    return {
        "game_id": game_id,
        "seat": c.seat,
        "action_seq": action_seq,
        "agent_spec": c.agent_spec,
        "model_id": c.model_id,
        "operation": c.operation,
        "prompt": c.prompt,
        "raw_output": c.raw_output,
        "label_probs": dict(c.label_probs) if c.label_probs is not None else None,
        "latency_ms": float(c.latency_ms),
        "retries": c.retries,
        "fallback": c.fallback,
        "error": c.error,
        "created_at": now,
    }


class AgentCallRepository:
    """A game's agent calls, read back."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def agent_calls(self, game_id: int) -> list[AgentCallRow]:
        async with self._db.read() as s:
            q = select(AgentCallRow).where(AgentCallRow.game_id == game_id).order_by(col(AgentCallRow.id))
            return list((await s.exec(q)).all())

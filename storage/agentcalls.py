"""Agent calls: every model call an AI seat made (prompt, raw output, label probabilities, latency).

Calls that chose an action are written by the turn log with that action
(``append_turn``); the rest (probes, failed attempts, decision rows added afterwards)
through ``log_agent_calls``. Both build their rows with ``agent_call_values``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import col, select

from storage.database import Database
from storage.records import AgentCallRecord
from storage.tables import AgentCallRow, table_of, utcnow

_agent_calls = table_of(AgentCallRow)


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
    """Agent calls written apart from a turn, and a game's calls read back (the export)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def log_agent_calls(self, calls: Sequence[AgentCallRecord]) -> None:
        """Agent calls not tied to an appended action; each needs game_id."""
        if not calls:
            return
        for c in calls:
            if c.game_id is None:
                raise ValueError("log_agent_calls needs game_id on every AgentCallRecord")
        now = utcnow()
        async with self._db.write() as conn:
            await conn.execute(
                sa.insert(_agent_calls),
                [agent_call_values(c, game_id=c.game_id, action_seq=c.action_seq, now=now) for c in calls],
            )

    async def agent_calls(self, game_id: int) -> list[AgentCallRow]:
        async with self._db.read() as s:
            q = select(AgentCallRow).where(AgentCallRow.game_id == game_id).order_by(col(AgentCallRow.id))
            return list((await s.exec(q)).all())

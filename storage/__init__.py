"""The game log: SQLModel tables, the async ``Store`` over them, migrations and export.

``storage`` knows tables and sessions, not platforms or game rules: it imports
nothing from ``bot``, ``models`` or any chat library.
"""

from storage.store import (
    ActionRecord,
    AgentCallRecord,
    EventRecord,
    GameLog,
    GameNotFound,
    GameStateError,
    SchemaOutOfDate,
    SeatRecord,
    Store,
)
from storage.tables import (
    ActionSource,
    AgentOperation,
    DeadlineState,
    GameStatus,
    SeatKind,
)

__all__ = [
    "ActionRecord",
    "ActionSource",
    "AgentCallRecord",
    "AgentOperation",
    "DeadlineState",
    "EventRecord",
    "GameLog",
    "GameNotFound",
    "GameStateError",
    "GameStatus",
    "SchemaOutOfDate",
    "SeatKind",
    "SeatRecord",
    "Store",
]

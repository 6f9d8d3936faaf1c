"""Wires the SNEAK clue report into the table service (contract 6): one call from the startup point.

After a game's result is announced, the service runs the listener in the
background; the report it returns is posted to the table's place as player
text (never with mentions). Evaluators come from configuration only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.core.messages import Outgoing
from bot.core.service import TableService
from models.eval.evaluators import ClientFor, EmbedderFor
from models.eval.report import DEFAULT_CHAT_EVALUATORS, SneakReporter, averages_text, player_averages
from storage.store import Store


def attach_sneak(service: TableService, store: Store, *, client_for: ClientFor, embedder_for: EmbedderFor | None = None,
                 evaluators: Sequence[str] = DEFAULT_CHAT_EVALUATORS) -> SneakReporter:
    """Register the clue report as a finish listener; returns the reporter (the ``/sneak`` commands use it)."""
    if embedder_for is None:
        from models.worker.embedding_backend import embedder_for as bundled

        embedder_for = bundled
    reporter = SneakReporter(store, client_for=client_for, embedder_for=embedder_for, evaluators=evaluators)

    def outgoing(text: str) -> Any:
        return Outgoing(text, title="SNEAK clue report", user_text=True)

    service.add_finish_listener(reporter.listener(outgoing))
    return reporter


async def averages_for(service: Any, user_key: str, tenant: str | None) -> str:
    """The ``/sneak`` answer for a person, from the service's log (adapters hold the service
    through its port, which does not name the store; the running object is a TableService)."""
    store: Store = service.store
    return averages_text(await player_averages(store, user_key, tenant=tenant))

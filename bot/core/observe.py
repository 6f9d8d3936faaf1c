"""What the table service reports about itself, for metrics.

The service calls a `ServiceObserver` at a few points of its work; the operations room
(bot/ops) implements it as Prometheus counters and gauges. `NullObserver` is the default
and does nothing. Observers are called inline: they must be quick and must not raise.
Nothing passed here carries a secret or a player's text: kinds, names, counts and seconds.
"""

from __future__ import annotations

from typing import Protocol


class ServiceObserver(Protocol):
    def command(self, kind: str, seconds: float, ok: bool) -> None:
        """One command handled (``kind`` = CommandKind value), how long it took, whether it was accepted."""

    def action(self, game: str, source: str) -> None:
        """One action logged for a game (``source`` = ActionSource value)."""

    def ai_move(self, agent: str, operation: str, seconds: float, fallback: bool) -> None:
        """One model call made for an AI seat (``operation`` = AgentOperation value)."""

    def delivery_failed(self, platform: str) -> None:
        """A platform could not deliver a message."""

    def duplicate(self) -> None:
        """A redelivered command was recognised and changed nothing."""

    def tables(self, running: int) -> None:
        """How many tables run in memory now."""

    def deadlines(self, open: int) -> None:
        """How many turn deadlines are armed now."""


class NullObserver:
    """Observes nothing: the default."""

    def command(self, kind: str, seconds: float, ok: bool) -> None:
        pass

    def action(self, game: str, source: str) -> None:
        pass

    def ai_move(self, agent: str, operation: str, seconds: float, fallback: bool) -> None:
        pass

    def delivery_failed(self, platform: str) -> None:
        pass

    def duplicate(self) -> None:
        pass

    def tables(self, running: int) -> None:
        pass

    def deadlines(self, open: int) -> None:
        pass

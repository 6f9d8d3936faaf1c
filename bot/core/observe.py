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

    def lease_moved(self, change: str, games: int) -> None:
        """Games whose hold moved: ``taken`` by this process (a start elsewhere died, or resumed,
        or a table handed to it), ``lost`` to another process (this one was paused or slow past its
        lease), or ``handed_back`` by this process to the one that serves the table's tenant."""

    def command_refused(self) -> None:
        """A move for a game another live process holds was refused here ("moving")."""

    def command_forwarded(self) -> None:
        """A command for a game another live process holds was forwarded to that process."""

    def deadlines_rearmed(self, count: int) -> None:
        """Pending deadlines the supervisor found without a timer and armed."""

    def commit_unknown(self) -> None:
        """A write whose COMMIT outcome was lost (the connection dropped): it was read back."""

    def sends_withheld(self, count: int) -> None:
        """Messages not sent because this process's hold on their game had run out."""


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

    def lease_moved(self, change: str, games: int) -> None:
        pass

    def command_refused(self) -> None:
        pass

    def command_forwarded(self) -> None:
        pass

    def deadlines_rearmed(self, count: int) -> None:
        pass

    def commit_unknown(self) -> None:
        pass

    def sends_withheld(self, count: int) -> None:
        pass

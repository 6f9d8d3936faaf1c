"""The service protocols every adapter is written against (Discord, Slack, console).

Adapters see the TableService only through `ServicePort`, so a fake or a remote service
could stand in, and mypy checks below that the real `TableService` still satisfies it: one
protocol, so the adapters cannot each keep a copy that drifts from the service. The SNEAK
service reaches them beside it, as a `SneakPort` the startup point hands each adapter (None
when SNEAK does not run); the table service knows nothing of it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from bot.core.messages import Command, Reply
from bot.core.platform import Platform


class SneakPort(Protocol):
    """What adapters ask of the SNEAK service (bot/sneak.py)."""

    async def averages(self, user_key: str, tenant: str | None) -> str: ...

    async def judge(self, user_key: str, tenant: str | None, answer: str | None = None, *,
                    channels: Collection[str] = (), command: str = "judge N") -> str: ...
    # ``channels``: the ids of the channels the member can read, as the platform says (items come only from
    # games there); ``command``: how the member answers on that platform, N standing for the number.

    async def warm(self) -> None: ...  # load the evaluators now, in the background, not at a game's end


class ServicePort(Protocol):
    """What adapters call on the table service."""

    def attach(self, platform: Platform) -> None: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def wait_idle(self, timeout: float = 30.0) -> None: ...

    async def handle(self, cmd: Command) -> Reply: ...

    async def export(self, cmd: Command, fmt: str = "jsonl", game: str | None = None,
                     since: datetime | None = None) -> tuple[str, bytes] | Reply: ...

    def game_choices(self) -> Mapping[str, Sequence[str]]: ...

    def agent_choices(self) -> Sequence[str]: ...


if TYPE_CHECKING:
    from bot.core.service import TableService

    def _table_service_is_a_port(service: TableService) -> ServicePort:
        return service  # mypy fails here the day the service and the protocol disagree

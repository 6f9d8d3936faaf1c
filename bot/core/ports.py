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

from bot.core.delivery import Delivery
from bot.core.finished import AiTablesPort
from bot.core.messages import Command, Reply
from bot.core.platform import Platform
from bot.settings import Settings
from storage.ports import TableStore


class TableHost(Protocol):
    """What tournaments use of the table service: its log and settings, its AI tables, the
    platforms and delivery their matches are shown through, and ``handle`` (a stalled match's abort)."""

    @property
    def store(self) -> TableStore: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def platforms(self) -> dict[str, Platform]: ...

    @property
    def delivery(self) -> Delivery: ...

    @property
    def ai_tables(self) -> AiTablesPort: ...

    def attach(self, platform: Platform) -> None: ...

    async def handle(self, cmd: Command) -> Reply: ...

    def agent_choices(self) -> list[str]: ...

    def game_choices(self) -> dict[str, tuple[str, ...]]: ...


class SneakPort(Protocol):
    """What adapters ask of the SNEAK service (bot/sneak.py)."""

    async def averages(self, user_key: str, tenant: str | None) -> str: ...

    async def judge(self, user_key: str, tenant: str | None, answer: str | None = None, *,
                    channels: Collection[str] = (), command: str = "judge N") -> str: ...
    # ``channels``: the ids of the channels the member can read, as the platform says (items come only from
    # games there); ``command``: how the member answers on that platform, N standing for the number.

    async def warm(self) -> None: ...  # load the evaluators now, in the background, not at a game's end


class WebLinkPort(Protocol):
    """The web view's link maker, as chat commands see it (``bot.web.wiring.WebLinks``)."""

    def answer(self, tenant: str, user_key: str, *, admin: bool) -> str: ...


class PrivacyPort(Protocol):
    """What adapters ask of the privacy desk (bot/core/privacy.py): sentences, and one file."""

    def privacy_text(self) -> str: ...

    async def research(self, user_key: str, word: str | None) -> str: ...

    async def mydata(self, user_key: str) -> tuple[str, bytes]: ...

    async def forget_me(self, user_key: str, *, confirmed: bool) -> str: ...

    async def audit_text(self, *, is_admin: bool, limit: int = 20) -> str: ...


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

    def _table_service_is_a_host(service: TableService) -> TableHost:
        return service

    def _ai_tables_are_a_port(service: TableService) -> AiTablesPort:
        return service.ai_tables

"""What chat adapters call on the tournament service (``TournamentPort``), and what they give it.

Adapters are written against this protocol, as they are against ``bot.core.ports.ServicePort``
for tables: the startup point builds one ``TournamentService`` and hands it to each adapter,
which attaches its ``BoardPoster`` under its platform name and wraps the port in a
``TournamentDesk`` for its commands. mypy checks that the service satisfies the port
(at the end of ``service.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from bot.core.intake import Origin
from bot.core.messages import Place
from bot.tournaments.spec import TournamentSpec
from storage.tables import TournamentRow

CHART_NAME = "leaderboard.png"


@dataclass(frozen=True)
class Board:
    """A leaderboard ready to post: the text table and its chart."""

    text: str
    png: bytes
    filename: str = CHART_NAME


class BoardPoster(Protocol):
    """A platform's way to post a leaderboard with its chart attached to a place."""

    async def post_board(self, place: Place, text: str, png: bytes, filename: str) -> None: ...


class TournamentPort(Protocol):
    """The tournament service as adapters see it. Every method that takes a tenant reads and
    changes that tenant's tournaments only; refusals raise ``TournamentError`` with a sentence."""

    def attach(self, platform: str, poster: BoardPoster) -> None:
        """Post this platform's leaderboards through ``poster`` (scheduled runs included)."""
        ...

    def poster(self, platform: str) -> BoardPoster | None: ...

    def entrant_choices(self) -> Sequence[str]: ...

    def game_choices(self) -> Mapping[str, Sequence[str]]: ...

    def is_admin(self, origin: Origin) -> bool: ...

    async def create(self, tenant: str, spec: TournamentSpec) -> TournamentRow: ...

    async def get(self, tenant: str, tournament_id: int) -> TournamentRow: ...

    async def listing(self, tenant: str) -> list[TournamentRow]: ...

    async def cancel(self, tenant: str, tournament_id: int) -> TournamentRow: ...

    async def schedule(self, tenant: str, tournament_id: int, cron: str | None) -> datetime | None: ...

    async def start_run(self, tenant: str, tournament_id: int) -> None:
        """Play the tournament in the background; its place gets the status and the board."""
        ...

    async def progress(self, tenant: str, tournament_id: int) -> str: ...

    async def board(self, tenant: str, tournament_id: int) -> Board | None: ...

    async def match_count(self, tournament_id: int) -> int: ...


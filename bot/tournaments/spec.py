"""What a tournament is, in one typed value: the game, who plays, the format and where it posts.

Every surface (the command line, chat, the scheduler's copies, the bench) builds one
``TournamentSpec`` and hands it to ``TournamentService.create``; a stored tournament
turns back into one with ``spec_of`` (the scheduler copies a template that way).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.tournaments.formats import Format
from storage.tables import TournamentRow, TournamentStatus


@dataclass(frozen=True)
class TournamentSpec:
    """A tournament as asked for; checked by ``manage.create`` before anything is planned.

    ``entrants`` empty means every configured agent. ``seats`` None: the game's usual count.
    ``seed`` None: a fresh random seed. ``platform``/``place``: where the status message and the
    leaderboard go (empty: nowhere).
    """

    game: str
    entrants: tuple[str, ...] = ()
    variant: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    fmt: Format | str = Format.ROUND_ROBIN
    seats: int | None = None
    games_per_pairing: int = 1
    duplicate: bool = True
    seed: int | None = None
    name: str = ""
    schedule: str | None = None
    concurrency: int | None = None
    spectate: bool = False
    platform: str = ""
    place: str = ""
    created_by: str = ""

    def replace(self, **changes: Any) -> TournamentSpec:
        return dataclasses.replace(self, **changes)


def spec_of(t: TournamentRow) -> TournamentSpec:
    """The spec a stored tournament was made from (its seed and schedule included)."""
    return TournamentSpec(
        game=t.game, entrants=tuple(t.entrants), variant=t.variant, options=dict(t.options), fmt=t.format,
        seats=t.seats, games_per_pairing=t.games_per_pairing, duplicate=t.duplicate, seed=t.seed, name=t.name,
        schedule=t.schedule, concurrency=t.concurrency, spectate=t.spectate, platform=t.platform, place=t.place,
        created_by=t.created_by,
    )


def status_of(t: TournamentRow) -> TournamentStatus:
    """The stored status as the enum (the column holds its value)."""
    return TournamentStatus(t.status)

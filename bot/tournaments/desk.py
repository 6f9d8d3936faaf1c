"""The tournament commands every chat platform shares: admins only, per tenant.

A platform's handler decodes its payload into an ``intake.Origin`` (who, where, which
tenant, the platform's admin verdict for that tenant) and calls one method here; it renders the
returned ``DeskReply`` (text to the author, and for a leaderboard the board to post with its
chart). The desk holds no state: it is a thin layer of sentences over the ``TournamentPort``
the adapter was handed. Runs started here go on in the background; the live status message
and the final leaderboard are posted to the place the tournament was created in.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec

from bot.core.intake import Origin
from bot.tournaments.errors import TournamentError
from bot.tournaments.formats import Format
from bot.tournaments.manage import describe
from bot.tournaments.port import Board, TournamentPort
from bot.tournaments.spec import TournamentSpec

NOT_ADMIN = "Only server admins can manage tournaments."
P = ParamSpec("P")


@dataclass(frozen=True)
class DeskReply:
    text: str
    ok: bool = True
    board: Board | None = None


def _desk_command(
    fn: Callable[Concatenate[TournamentDesk, Origin, P], Coroutine[Any, Any, DeskReply]],
) -> Callable[Concatenate[TournamentDesk, Origin, P], Coroutine[Any, Any, DeskReply]]:
    """A chat command of the desk: admins of the tenant only, and a refused tournament
    operation (`TournamentError`) is the reply, never an exception."""

    async def command(self: TournamentDesk, o: Origin, /, *args: P.args, **kwargs: P.kwargs) -> DeskReply:
        if not self.port.is_admin(o):
            return DeskReply(NOT_ADMIN, ok=False)
        try:
            return await fn(self, o, *args, **kwargs)
        except TournamentError as exc:
            return DeskReply(str(exc), ok=False)

    functools.update_wrapper(command, fn)
    return command


class TournamentDesk:
    def __init__(self, port: TournamentPort) -> None:
        self.port = port

    def is_admin(self, o: Origin) -> bool:
        return self.port.is_admin(o)

    # ------------------------------------------------------------------ choices for autocomplete

    def entrant_choices(self) -> list[str]:
        return list(self.port.entrant_choices())

    def game_choices(self) -> dict[str, tuple[str, ...]]:
        return {g: tuple(v) for g, v in self.port.game_choices().items()}

    # ------------------------------------------------------------------ commands

    @_desk_command
    async def create(self, o: Origin, *, game: str, variant: str | None = None, entrants: list[str] | None = None,
                     fmt: str = Format.ROUND_ROBIN.value, seats: int | None = None, games: int = 1,
                     duplicate: bool = True, name: str = "", schedule: str | None = None,
                     spectate: bool = False, options: Mapping[str, Any] | None = None) -> DeskReply:
        spec = TournamentSpec(game=game, variant=variant, entrants=tuple(entrants or ()), options=dict(options or {}),
                              fmt=fmt, seats=seats, games_per_pairing=games, duplicate=duplicate, name=name,
                              schedule=schedule, spectate=spectate, platform=o.place.platform, place=o.place.key,
                              created_by=o.user.key)
        t = await self.port.create(o.tenant, spec)
        n = await self.port.match_count(t.id or 0)
        return DeskReply(f"Created tournament {describe(t)}; {n} games. Run it with the run command"
                         + (" or wait for its schedule." if schedule else "."))

    @_desk_command
    async def schedule(self, o: Origin, tournament_id: int, cron: str) -> DeskReply:
        expr = None if cron.strip().lower() in ("off", "none", "") else cron.strip()
        nxt = await self.port.schedule(o.tenant, tournament_id, expr)
        if expr is None:
            return DeskReply(f"Tournament #{tournament_id} is no longer scheduled.")
        when = f" Next run: {nxt:%Y-%m-%d %H:%M} UTC." if nxt else ""
        return DeskReply(f"Tournament #{tournament_id} runs on '{expr}' (UTC); the leaderboard is posted here after "
                         f"each run.{when}")

    @_desk_command
    async def run(self, o: Origin, tournament_id: int) -> DeskReply:
        await self.port.start_run(o.tenant, tournament_id)
        return DeskReply(f"Tournament #{tournament_id} started; its status is kept up to date in this channel.")

    @_desk_command
    async def status(self, o: Origin, tournament_id: int | None = None) -> DeskReply:
        if tournament_id is None:
            rows = await self.port.listing(o.tenant)
            return DeskReply("\n".join(describe(t) for t in rows[-10:]) or "No tournaments here yet.")
        return DeskReply(await self.port.progress(o.tenant, tournament_id))

    @_desk_command
    async def cancel(self, o: Origin, tournament_id: int) -> DeskReply:
        await self.port.cancel(o.tenant, tournament_id)
        return DeskReply(f"Tournament #{tournament_id} cancelled: no new games start; running ones finish.")

    @_desk_command
    async def leaderboard(self, o: Origin, tournament_id: int) -> DeskReply:
        b = await self.port.board(o.tenant, tournament_id)
        if b is None:
            t = await self.port.get(o.tenant, tournament_id)
            return DeskReply(f"Tournament #{tournament_id} has no standings yet ({t.status}).", ok=False)
        return DeskReply(b.text, board=b)

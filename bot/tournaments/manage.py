"""Creating, reading and cancelling tournaments, with the checks every surface shares.

``TournamentService`` (service.py) comes through here for the command line, chat and the
scheduler's copies: entrants must be the operator's configured agent names
(``TableService.agent_choices()``), never a typed URL or path; the game, variant, options
and seat count are checked against the engine, and the size (matches, entrants, games per
pairing) by arithmetic, all before anything is planned or stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import games
from bot.tournaments.board import standings_of
from bot.tournaments.cron import check_schedule
from bot.tournaments.errors import TournamentError
from bot.tournaments.formats import Format, FormatError, count_matches, plan_matches, seat_shape
from bot.tournaments.ratings import Standing
from bot.tournaments.spec import TournamentSpec, status_of
from games.base import ConfigError, config_to_dict
from games.text import name_problem, person_name
from models.agent_names import canonical
from storage import tournaments as repo
from storage.ports import UnitsOfWork
from storage.tables import MatchStatus, TournamentRow, TournamentStatus

__all__ = ["MAX_MATCHES", "MAX_SCHEDULES", "Planning", "StorePlanning", "TournamentError", "cancel", "create", "describe",
           "find", "get", "set_schedule", "standings"]

MAX_MATCHES = 2000
"""Matches per tournament: a typo in games-per-pairing should not queue a week of games."""
MAX_ENTRANTS = 64
MAX_SCHEDULES = 10
"""Scheduled tournaments per tenant (each one a recurring run of AI games)."""
MAX_ID = 2**62
MAX_NAME_CHARS = 80


class Planning(Protocol):
    """What planning a tournament needs: the store and the operator's configured agent names. The table
    service is one; the command line's ``create`` and ``schedule`` use ``StorePlanning`` and start no table."""

    @property
    def store(self) -> UnitsOfWork: ...

    def agent_choices(self) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class StorePlanning:
    """Planning on the store alone: no agents built, no model imported, no table lease taken (a bot serving
    the same SQLite file keeps it; its scheduler turns a new schedule into a job within a third of a lease)."""

    store: UnitsOfWork
    agents: Sequence[str]

    def agent_choices(self) -> list[str]:
        return list(self.agents)


async def create(service: Planning, tenant: str, spec: TournamentSpec) -> int:
    """Store a tournament with its planned matches; raises TournamentError with a readable reason."""
    # It heads every leaderboard, in chat and on the command line: a newline there forged a line of
    # `tournament list`, a bidi override turned the listing around (games.text: the one name rule).
    # No name at all is an unnamed tournament (listings show its game); a name given must be one.
    problem = name_problem(spec.name, "A tournament's name", MAX_NAME_CHARS) if spec.name else None
    if problem is not None:
        raise TournamentError(problem)
    name = person_name(spec.name, MAX_NAME_CHARS)
    try:
        engine = games.get(spec.game)
    except KeyError:
        raise TournamentError(
            f"Unknown game {spec.game[:40]!r}; choose among {', '.join(sorted(games.registry()))}.") from None
    try:
        cfg = engine.make_config(spec.variant or None, **dict(spec.options))
    except (ConfigError, TypeError) as exc:
        raise TournamentError(f"Those options don't work: {exc}") from None
    allowed = service.agent_choices()
    entrants = [canonical(e) for e in spec.entrants] or list(allowed)  # an old name reads as its new one
    if len(entrants) > MAX_ENTRANTS:
        raise TournamentError(f"At most {MAX_ENTRANTS} entrants per tournament.")
    unknown = [e[:40] for e in entrants if e not in allowed]
    if unknown:
        raise TournamentError(f"Unknown entrant(s) {', '.join(unknown)}; choose among {', '.join(allowed)}.")
    try:
        fmt = Format(spec.fmt)
    except ValueError:
        raise TournamentError(
            f"Unknown format {str(spec.fmt)[:40]!r}; choose among {', '.join(f.value for f in Format)}.") from None
    lo, hi = engine.seat_range(cfg)
    n = spec.seats if spec.seats is not None else max(lo, min(hi, 4))
    if not lo <= n <= hi:
        raise TournamentError(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats, not {n}.")
    if spec.games_per_pairing < 1:
        raise TournamentError("Games per pairing is a whole number of at least 1.")
    total = count_matches(engine.id, cfg.variant, len(entrants), fmt=fmt,
                          games_per_pairing=min(spec.games_per_pairing, MAX_MATCHES + 1))
    if total > MAX_MATCHES or spec.games_per_pairing > MAX_MATCHES:
        raise TournamentError(f"That is more than {MAX_MATCHES} games; at most {MAX_MATCHES} per tournament "
                              "(fewer games per pairing or fewer entrants).")
    if spec.concurrency is not None and not 1 <= spec.concurrency <= 256:
        raise TournamentError("Concurrency is between 1 and 256 games at once.")
    if spec.seed is not None and not 0 <= spec.seed < MAX_ID:
        raise TournamentError("A seed is a whole number between 0 and 2^62.")
    if spec.schedule is not None:
        check_schedule(spec.schedule)
        await check_schedule_cap(service, tenant)
    seed = secrets.randbits(62) if spec.seed is None else spec.seed
    try:
        plans = plan_matches(engine.id, cfg.variant, entrants, seats=n, fmt=fmt,
                             games_per_pairing=spec.games_per_pairing, duplicate=spec.duplicate, seed=seed)
    except FormatError as exc:
        raise TournamentError(str(exc)) from None
    stored_options = {k: v for k, v in config_to_dict(cfg).items() if k in dict(spec.options)}
    return await repo.create_tournament(
        service.store, tenant=tenant, name=name, game=engine.id, variant=cfg.variant, options=stored_options,
        entrants=entrants, format=fmt.value, seats=n, games_per_pairing=spec.games_per_pairing,
        duplicate=spec.duplicate, seed=seed,
        matches=[repo.MatchPlanRecord(p.idx, p.seats, p.seed, p.deal_group) for p in plans],
        schedule=spec.schedule, concurrency=spec.concurrency, spectate=spec.spectate, platform=spec.platform,
        place=spec.place, created_by=spec.created_by,
    )


async def set_schedule(service: Planning, tenant: str, tournament_id: int, cron: str | None) -> None:
    """Store the tournament's crontab (None: no more). The ``schedule`` column is the truth: whichever
    process holds the scheduler's lease turns it into a job."""
    t = await find(service.store, tenant, tournament_id)
    if cron is not None:
        check_schedule(cron)
        if status_of(t) is TournamentStatus.CANCELLED:
            raise TournamentError(f"Tournament #{tournament_id} was cancelled.")
        if not t.schedule:
            await check_schedule_cap(service, tenant, except_id=tournament_id)
    await repo.set_schedule(service.store, tournament_id, cron.strip() if cron else None)


async def check_schedule_cap(service: Planning, tenant: str, *, except_id: int | None = None) -> None:
    """Refuse one more schedule for a tenant that already has ``MAX_SCHEDULES``."""
    live = [t for t in await repo.tournaments(service.store, tenant=tenant)
            if t.schedule and t.id != except_id and status_of(t) is not TournamentStatus.CANCELLED]
    if len(live) >= MAX_SCHEDULES:
        raise TournamentError(f"This server already has {MAX_SCHEDULES} scheduled tournaments; "
                              "turn one off first (schedule <id> off).")


async def get(service: Planning, tenant: str, tournament_id: int) -> TournamentRow:
    """The tenant's tournament; another tenant's id, or no such number, reads as missing."""
    return await find(service.store, tenant, tournament_id)


def check_id(tournament_id: object) -> None:
    """A tournament number as a sentence when it cannot be one (before anything is read)."""
    if isinstance(tournament_id, bool) or not isinstance(tournament_id, int) or not 0 < tournament_id < MAX_ID:
        raise TournamentError(f"There is no tournament #{str(tournament_id)[:24]} here.")


async def find(store: UnitsOfWork, tenant: str, tournament_id: int) -> TournamentRow:
    """``get`` on the store alone, for the commands that only read (no table service behind them)."""
    check_id(tournament_id)
    t = await repo.tournament(store, tournament_id)
    if t is None or t.tenant != tenant:
        raise TournamentError(f"There is no tournament #{tournament_id} here.")
    return t


async def cancel(service: Planning, tenant: str, tournament_id: int) -> TournamentRow:
    """No new games start; games already running play out (their results are kept)."""
    t = await get(service, tenant, tournament_id)
    if status_of(t) in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
        raise TournamentError(f"Tournament #{tournament_id} is already {t.status}.")
    await repo.set_tournament_status(service.store, tournament_id, TournamentStatus.CANCELLED)
    await repo.cancel_open_matches(service.store, tournament_id)
    t.status = TournamentStatus.CANCELLED.value
    return t


async def standings(store: UnitsOfWork, t: TournamentRow) -> list[Standing]:
    """The stored standings, without intervals when too few deal groups were played."""
    groups = {m.deal_group for m in await repo.matches(store, t.id or 0) if m.status == MatchStatus.FINISHED}
    return standings_of(await repo.ratings(store, t.id or 0), len(groups))


def describe(t: TournamentRow) -> str:
    shape = seat_shape(t.game, t.variant)
    roles = f" ({shape.describe()})" if shape is not None and t.format == Format.ROUND_ROBIN else ""
    grid = f" ({' × '.join(map(str, shape.roles))})" if shape is not None and t.format == Format.GRID else ""
    when = f", scheduled {t.schedule}" if t.schedule else ""
    dup = ", duplicate deals" if t.duplicate else ""
    return (f"#{t.id} {t.name or t.game}: {t.game} ({t.variant}), {t.format}{grid}{roles}{dup}, {t.seats} seats, "
            f"entrants {', '.join(t.entrants)} — {status_of(t).value}{when}")

"""Creating, listing and cancelling tournaments, with the checks every surface shares.

The CLI, the scheduler and the chat commands all come through here: entrants must be
the operator's configured agent names (``TableService.agent_choices()``, contract 2),
never a typed URL or path; the game, variant, options and seat count are checked
against the engine before anything is stored.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import games
from bot.core.service import TableService
from bot.tournaments.formats import BENCHMARK_ROLES, Format, FormatError, is_benchmark, plan_matches
from games.base import ConfigError
from storage import tournaments as repo
from storage.tables import TournamentRow, TournamentStatus

MAX_MATCHES = 2000  # a typo in games-per-pairing should not queue a week of games


class TournamentError(ValueError):
    """A request that changes nothing; the message is for the person who asked."""


async def create(
    service: TableService,
    *,
    tenant: str,
    game: str,
    entrants: Sequence[str],
    variant: str | None = None,
    options: Mapping[str, Any] | None = None,
    fmt: Format | str = Format.ROUND_ROBIN,
    seats: int | None = None,
    games_per_pairing: int = 1,
    duplicate: bool = True,
    seed: int | None = None,
    name: str = "",
    schedule: str | None = None,
    concurrency: int | None = None,
    spectate: bool = False,
    platform: str = "",
    place: str = "",
    created_by: str = "",
) -> int:
    """Store a tournament with its planned matches; raises TournamentError with a readable reason."""
    try:
        engine = games.get(game)
    except KeyError:
        raise TournamentError(f"Unknown game {game!r}; choose among {', '.join(sorted(games.registry()))}.") from None
    try:
        cfg = engine.make_config(variant or None, **dict(options or {}))
    except (ConfigError, TypeError) as exc:
        raise TournamentError(f"Those options don't work: {exc}") from None
    allowed = service.agent_choices()
    unknown = [e for e in entrants if e not in allowed]
    if unknown:
        raise TournamentError(f"Unknown entrant(s) {', '.join(unknown)}; choose among {', '.join(allowed)}.")
    try:
        fmt = Format(fmt)
    except ValueError:
        raise TournamentError(f"Unknown format {fmt!r}; choose among {', '.join(f.value for f in Format)}.") from None
    lo, hi = engine.seat_range(cfg)
    n = seats if seats is not None else (3 if is_benchmark(engine.id, cfg.variant) else max(lo, min(hi, 4)))
    if not lo <= n <= hi:
        raise TournamentError(f"{engine.id} ({cfg.variant}) is played with {lo}-{hi} seats, not {n}.")
    if concurrency is not None and not 1 <= concurrency <= 256:
        raise TournamentError("Concurrency is between 1 and 256 games at once.")
    if seed is not None and not 0 <= seed < 2**62:
        raise TournamentError("A seed is a whole number between 0 and 2^62.")
    if schedule is not None:
        from bot.tournaments.schedule import parse_cron

        parse_cron(schedule)  # raises TournamentError
    seed = secrets.randbits(62) if seed is None else seed
    try:
        plans = plan_matches(engine.id, cfg.variant, list(entrants), seats=n, fmt=fmt,
                             games_per_pairing=games_per_pairing, duplicate=duplicate, seed=seed)
    except FormatError as exc:
        raise TournamentError(str(exc)) from None
    if len(plans) > MAX_MATCHES:
        raise TournamentError(f"That is {len(plans)} games; at most {MAX_MATCHES} per tournament.")
    from games.base import config_to_dict

    stored_options = {k: v for k, v in config_to_dict(cfg).items() if k in dict(options or {})}
    return await repo.create_tournament(
        service.store, tenant=tenant, name=name, game=engine.id, variant=cfg.variant, options=stored_options,
        entrants=list(entrants), format=fmt.value, seats=n, games_per_pairing=games_per_pairing, duplicate=duplicate,
        seed=seed, matches=[repo.MatchPlanRecord(p.idx, p.seats, p.seed, p.deal_group) for p in plans],
        schedule=schedule, concurrency=concurrency, spectate=spectate, platform=platform, place=place,
        created_by=created_by,
    )


async def get(service: TableService, tenant: str, tournament_id: int) -> TournamentRow:
    """The tenant's tournament; another tenant's id reads as missing."""
    t = await repo.tournament(service.store, tournament_id)
    if t is None or t.tenant != tenant:
        raise TournamentError(f"There is no tournament #{tournament_id} here.")
    return t


async def cancel(service: TableService, tenant: str, tournament_id: int) -> TournamentRow:
    """No new games start; games already running play out (their results are kept)."""
    t = await get(service, tenant, tournament_id)
    if t.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
        raise TournamentError(f"Tournament #{tournament_id} is already {t.status}.")
    await repo.set_tournament_status(service.store, tournament_id, TournamentStatus.CANCELLED)
    await repo.cancel_open_matches(service.store, tournament_id)
    t.status = TournamentStatus.CANCELLED.value
    return t


def describe(t: TournamentRow) -> str:
    roles = " (team = encoder + decoder)" if is_benchmark(t.game, t.variant) and t.format == Format.ROUND_ROBIN else ""
    grid = f" ({' × '.join(BENCHMARK_ROLES)})" if t.format == Format.GRID else ""
    when = f", scheduled {t.schedule}" if t.schedule else ""
    dup = ", duplicate deals" if t.duplicate else ""
    return (f"#{t.id} {t.name or t.game}: {t.game} ({t.variant}), {t.format}{grid}{roles}{dup}, {t.seats} seats, "
            f"entrants {', '.join(t.entrants)} — {t.status}{when}")

"""Repository functions for tournaments, their matches and ratings, and the scheduler lease.

Kept apart from ``storage.store`` (the game log): they use the store's public units of work
(``Store.write()``/``Store.read()``), so writes here are serialised with the log's writes in this
process and SQLite's ``BEGIN IMMEDIATE`` protects them against other processes.

Match lifecycle: ``planned`` → ``running`` (attempt counted, then the game id
attached) → ``finished`` or ``failed``; a running match whose game broke goes back to
``planned`` for another attempt (``retry_match``). Every transition is a
conditional UPDATE on the current status, so two runners never both take a match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from storage.ports import UnitsOfWork
from storage.tables import (
    AgentCallRow,
    GameRow,
    MatchStatus,
    SchedulerLeaseRow,
    SeatRow,
    TournamentMatchRow,
    TournamentRatingRow,
    TournamentRow,
    TournamentStatus,
    inserted_id,
    table_of,
    utcnow,
)

_tournaments = table_of(TournamentRow)
_matches = table_of(TournamentMatchRow)
_ratings = table_of(TournamentRatingRow)
_leases = table_of(SchedulerLeaseRow)
_games = table_of(GameRow)


@dataclass(frozen=True, slots=True)
class MatchPlanRecord:
    """A match to store: entrant per seat, its seed and the deal group it belongs to."""

    idx: int
    seats: Sequence[str]
    seed: int
    deal_group: int


@dataclass(frozen=True, slots=True)
class RatingRecord:
    entrant: str
    rank: int
    mu: float
    sigma: float
    lo: float
    hi: float
    games: int
    metrics: Mapping[str, Any]


# --------------------------------------------------------------------------- tournaments


async def create_tournament(
    store: UnitsOfWork,
    *,
    tenant: str,
    name: str,
    game: str,
    variant: str,
    options: Mapping[str, Any],
    entrants: Sequence[str],
    format: str,
    seats: int,
    games_per_pairing: int,
    duplicate: bool,
    seed: int,
    matches: Sequence[MatchPlanRecord],
    schedule: str | None = None,
    concurrency: int | None = None,
    spectate: bool = False,
    platform: str = "",
    place: str = "",
    created_by: str = "",
) -> int:
    """The tournament and all its planned matches, in one transaction; returns its id."""
    async with store.write() as conn:
        res = await conn.execute(
            sa.insert(_tournaments).values(
                tenant=tenant, name=name, game=game, variant=variant, options=dict(options), entrants=list(entrants),
                format=format, seats=seats, games_per_pairing=games_per_pairing, duplicate=duplicate, spectate=spectate, seed=seed,
                schedule=schedule, concurrency=concurrency, status=TournamentStatus.PLANNED.value,
                platform=platform, place=place, status_message=None, created_by=created_by, created_at=utcnow(),
            )
        )
        tid = inserted_id(res)
        if matches:
            await conn.execute(
                sa.insert(_matches),
                [
                    {"tournament_id": tid, "idx": m.idx, "seats": list(m.seats), "seed": m.seed,
                     "deal_group": m.deal_group, "status": MatchStatus.PLANNED.value, "attempts": 0}
                    for m in matches
                ],
            )
        return tid


async def tournament(store: UnitsOfWork, tournament_id: int) -> TournamentRow | None:
    async with store.read() as s:
        return await s.get(TournamentRow, tournament_id)


async def tournaments(
    store: UnitsOfWork, *, tenant: str | None = None, status: TournamentStatus | Sequence[TournamentStatus] | None = None
) -> list[TournamentRow]:
    """Tournaments of a tenant (all when None), oldest first."""
    async with store.read() as s:
        q = select(TournamentRow)
        if tenant is not None:
            q = q.where(TournamentRow.tenant == tenant)
        if status is not None:
            wanted = [status] if isinstance(status, str) else list(status)
            q = q.where(col(TournamentRow.status).in_([str(x) for x in wanted]))
        return list((await s.exec(q.order_by(col(TournamentRow.id)))).all())


async def set_tournament_status(store: UnitsOfWork, tournament_id: int, status: TournamentStatus) -> None:
    values: dict[str, Any] = {"status": status.value}
    if status is TournamentStatus.RUNNING:
        values["started_at"] = utcnow()
    elif status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
        values["finished_at"] = utcnow()
    async with store.write() as conn:
        await conn.execute(sa.update(_tournaments).where(_tournaments.c.id == tournament_id).values(**values))


async def finish_tournament(store: UnitsOfWork, tournament_id: int) -> bool:
    """Mark a run's tournament finished unless it was cancelled meanwhile (one statement, no read
    first); whether it was."""
    async with store.write() as conn:
        done = await conn.execute(sa.update(_tournaments).where(
            _tournaments.c.id == tournament_id, _tournaments.c.status != TournamentStatus.CANCELLED.value).values(
            status=TournamentStatus.FINISHED.value, finished_at=utcnow()))
        return bool(done.rowcount)


async def set_schedule(store: UnitsOfWork, tournament_id: int, schedule: str | None) -> None:
    async with store.write() as conn:
        await conn.execute(sa.update(_tournaments).where(_tournaments.c.id == tournament_id).values(schedule=schedule))


async def set_status_message(store: UnitsOfWork, tournament_id: int, ref: Mapping[str, Any] | None) -> None:
    async with store.write() as conn:
        await conn.execute(
            sa.update(_tournaments)
            .where(_tournaments.c.id == tournament_id)
            .values(status_message=dict(ref) if ref is not None else None)
        )


# --------------------------------------------------------------------------- matches


async def matches(store: UnitsOfWork, tournament_id: int) -> list[TournamentMatchRow]:
    async with store.read() as s:
        q = select(TournamentMatchRow).where(TournamentMatchRow.tournament_id == tournament_id)
        return list((await s.exec(q.order_by(col(TournamentMatchRow.idx)))).all())


async def start_match(store: UnitsOfWork, match_id: int) -> bool:
    """planned → running, one more attempt; False when someone else took it."""
    async with store.write() as conn:
        res = await conn.execute(
            sa.update(_matches)
            .where(_matches.c.id == match_id, _matches.c.status == MatchStatus.PLANNED.value)
            .values(status=MatchStatus.RUNNING.value, attempts=_matches.c.attempts + 1, started_at=utcnow(),
                    game_id=None, error=None)
        )
        return res.rowcount == 1


async def attach_game(store: UnitsOfWork, match_id: int, game_id: int) -> None:
    async with store.write() as conn:
        await conn.execute(sa.update(_matches).where(_matches.c.id == match_id).values(game_id=game_id))


async def finish_match(store: UnitsOfWork, match_id: int, roles: Sequence[str],
                       outcomes: Sequence[Mapping[str, Any]] | None = None) -> None:
    """running → finished with each seat's role and outcome, in one statement: a finished match
    always carries the outcomes its standings are computed from."""
    async with store.write() as conn:
        await conn.execute(
            sa.update(_matches)
            .where(_matches.c.id == match_id)
            .values(status=MatchStatus.FINISHED.value, roles=list(roles), finished_at=utcnow(), error=None,
                    outcomes=[dict(o) for o in outcomes] if outcomes is not None else None)
        )


async def match_attempts(store: UnitsOfWork, match_id: int) -> int:
    """How many times the match was started."""
    async with store.read() as s:
        m = await s.get(TournamentMatchRow, match_id)
        return m.attempts if m is not None else 0


async def agent_prompts(store: UnitsOfWork, tournament_id: int) -> list[tuple[str, Any]]:
    """(agent, prompt) of every logged agent call in the tournament's finished matches, in one query."""
    async with store.read() as s:
        q = (select(AgentCallRow.agent_spec, AgentCallRow.prompt)
             .join(TournamentMatchRow, col(TournamentMatchRow.game_id) == col(AgentCallRow.game_id))
             .where(TournamentMatchRow.tournament_id == tournament_id,
                    TournamentMatchRow.status == MatchStatus.FINISHED.value)
             .order_by(col(TournamentMatchRow.idx), col(AgentCallRow.id)))
        return [(spec, prompt) for spec, prompt in (await s.exec(q)).all()]


async def retry_match(store: UnitsOfWork, match_id: int, error: str) -> None:
    """Back to planned (its broken game stays in the log, unlinked); the error is kept for the record."""
    async with store.write() as conn:
        await conn.execute(
            sa.update(_matches)
            .where(_matches.c.id == match_id)
            .values(status=MatchStatus.PLANNED.value, game_id=None, error=error[:500])
        )


async def fail_match(store: UnitsOfWork, match_id: int, error: str) -> None:
    async with store.write() as conn:
        await conn.execute(
            sa.update(_matches)
            .where(_matches.c.id == match_id)
            .values(status=MatchStatus.FAILED.value, error=error[:500], finished_at=utcnow())
        )


async def cancel_open_matches(store: UnitsOfWork, tournament_id: int) -> int:
    """Planned matches of a cancelled tournament are recorded as failed ("cancelled")."""
    async with store.write() as conn:
        res = await conn.execute(
            sa.update(_matches)
            .where(_matches.c.tournament_id == tournament_id, _matches.c.status == MatchStatus.PLANNED.value)
            .values(status=MatchStatus.FAILED.value, error="cancelled", finished_at=utcnow())
        )
        return int(res.rowcount)


async def find_orphan_game(
    store: UnitsOfWork, *, tenant: str, seed: int, agents: Sequence[str], since: datetime
) -> int | None:
    """A game opened for a match whose runner died before recording its id: same tenant, seed
    and seat order, started since the match began, and claimed by no match."""
    async with store.read() as s:
        claimed = select(TournamentMatchRow.game_id).where(col(TournamentMatchRow.game_id).is_not(None))
        q = (
            select(GameRow)
            .where(GameRow.tenant == tenant, GameRow.seed == seed, col(GameRow.created_at) >= since,
                   col(GameRow.id).not_in(claimed))
            .order_by(col(GameRow.id))
        )
        for row in (await s.exec(q)).all():
            seats = (await s.exec(select(SeatRow).where(SeatRow.game_id == row.id).order_by(col(SeatRow.seat)))).all()
            if [x.agent_spec for x in seats] == list(agents):
                return row.id
        return None


# --------------------------------------------------------------------------- ratings


async def save_ratings(store: UnitsOfWork, tournament_id: int, game: str, variant: str, rows: Sequence[RatingRecord]) -> None:
    """Replace the tournament's standings."""
    now = utcnow()
    async with store.write() as conn:
        await conn.execute(sa.delete(_ratings).where(_ratings.c.tournament_id == tournament_id))
        if rows:
            await conn.execute(
                sa.insert(_ratings),
                [
                    {"tournament_id": tournament_id, "entrant": r.entrant, "game": game, "variant": variant,
                     "rank": r.rank, "mu": r.mu, "sigma": r.sigma, "lo": r.lo, "hi": r.hi, "games": r.games,
                     "metrics": dict(r.metrics), "updated_at": now}
                    for r in rows
                ],
            )


async def ratings(store: UnitsOfWork, tournament_id: int) -> list[TournamentRatingRow]:
    async with store.read() as s:
        q = select(TournamentRatingRow).where(TournamentRatingRow.tournament_id == tournament_id)
        return list((await s.exec(q.order_by(col(TournamentRatingRow.rank)))).all())


# --------------------------------------------------------------------------- the scheduler's lease


async def acquire_lease(store: UnitsOfWork, name: str, owner: str, ttl: timedelta, *, now: datetime | None = None) -> bool:
    """Take or renew the named lease for ``ttl``; False while another owner holds an unexpired one.

    One conditional write decides: insert when absent, else update when it is ours or expired.
    """
    now = now or utcnow()
    until = now + ttl
    try:
        async with store.write() as conn:
            row = (await conn.execute(sa.select(_leases.c.owner).where(_leases.c.name == name))).first()
            if row is None:
                await conn.execute(sa.insert(_leases).values(name=name, owner=owner, expires_at=until))
                return True
            res = await conn.execute(
                sa.update(_leases)
                .where(_leases.c.name == name, sa.or_(_leases.c.owner == owner, _leases.c.expires_at < now))
                .values(owner=owner, expires_at=until)
            )
            return res.rowcount == 1
    except IntegrityError:
        return False  # another process inserted the lease between our read and our insert


async def lease_held(store: UnitsOfWork, name: str, *, now: datetime | None = None) -> bool:
    """Whether someone holds the named lease now (an expired one counts as free)."""
    now = now or utcnow()
    async with store.read() as s:
        row = await s.get(SchedulerLeaseRow, name)
        return row is not None and row.expires_at >= now


async def release_lease(store: UnitsOfWork, name: str, owner: str) -> None:
    async with store.write() as conn:
        await conn.execute(sa.delete(_leases).where(_leases.c.name == name, _leases.c.owner == owner))

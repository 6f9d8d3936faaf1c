"""Logged games as ``games.record.Record``: read them back for ``stats``, write imported ones.

Reading goes through ``Store.games``/``Store.load_game``; writing through the
same calls a live table makes (``create_game``, ``start_game``, ``append_turn``,
``finish_game``), so an imported game is an ordinary logged game: it exports,
replays and counts like any other. Its provenance (source file, episode, the
import's marks) is kept in the game's ``lobby`` column under ``"import"``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.core.replays import record_of
from games.base import Event, config_to_dict
from games.record import Record, RecordError, replay_record
from storage.store import ActionRecord, DatabaseMissing, EventRecord, SeatRecord, Store, plan_engine
from storage.tables import ActionSource, GameStatus

IMPORT_PLATFORM = "import"
IMPORT_HOST = "import"
RULES_VERSION = "1"  # the version a live table logs (bot.core.service.RULES_VERSION)


MissingDatabase = DatabaseMissing  # the name this module's callers know


def database_problem(url: str) -> str | None:
    """Why ``url`` is no database to read from (a SQLite file that is not there, a port that is no number), or None."""
    try:
        plan = plan_engine(url)
    except ValueError as exc:
        return str(exc)
    if plan.is_sqlite and not plan.in_memory and plan.url.database:
        path = Path(plan.url.database).expanduser()
        if not path.is_file():
            return f"no database at {path} (set HUSHTABLE_DATABASE_URL or pass --database)"
    return None


async def open_existing(url: str) -> Store:
    """Open a database that must already exist; raises DatabaseMissing otherwise."""
    return await Store.open(url, must_exist=True)


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class LoggedGame:
    """One logged game for the metrics: its record, or why it could not be read."""

    id: int
    game: str
    variant: str
    platform: str
    finished_at: datetime | None
    record: Record | None
    problem: str | None = None


async def logged_games(
    store: Store,
    *,
    game: str | None = None,
    sources: Sequence[str] = (),
    since: datetime | None = None,
) -> list[LoggedGame]:
    """Finished games (optionally of one game, from some platforms, finished on or after
    ``since``), oldest first. A game that cannot be rebuilt comes back with its problem."""
    rows = await store.games(status=GameStatus.FINISHED, game=game, finished_since=since)
    out = []
    for row in rows:
        if sources and row.platform not in sources:
            continue
        assert row.id is not None
        log = await store.load_game(row.id)
        try:
            rec: Record | None = record_of(log)
            problem = None
        except RecordError as exc:
            rec, problem = None, str(exc)
        out.append(LoggedGame(row.id, row.game, row.variant, row.platform, row.finished_at, rec, problem))
    return out


# --------------------------------------------------------------------------- writing


def _event(e: Event) -> EventRecord:
    return EventRecord(e.kind, dict(e.data), e.audience.to_json())


@dataclass(frozen=True)
class Logged:
    """What ``log_record`` wrote: the game id (None when the key was imported before) and its status."""

    game_id: int | None
    status: GameStatus | None
    summary: str


async def log_record(
    store: Store,
    rec: Record,
    *,
    seats: Sequence[SeatRecord],
    place: str,
    place_name: str,
    provenance: Mapping[str, Any],
    actor: str,
    key: str,
    platform: str = IMPORT_PLATFORM,
    source: ActionSource = ActionSource.HUMAN,
) -> Logged:
    """Play ``rec`` through its engine and log it as a game of ``platform``.

    ``key`` makes the import idempotent: a second import of the same key writes
    nothing. The whole record is replayed first, so an illegal action is refused
    (RecordError) before anything is written. A game whose record stops before
    the end is logged as aborted (nothing is lost, and stats leave it out).
    """
    if len(seats) != rec.seats:
        raise ValueError(f"{len(seats)} seat records for a {rec.seats}-seat game")
    replay_record(rec)  # refuse an illegal action before writing anything
    engine, cfg = rec.game, rec.config
    config = config_to_dict(cfg)
    game_id = await store.create_game(
        game=engine.id, variant=cfg.variant, config=config, platform=platform, place=place,
        place_name=place_name, host=IMPORT_HOST, lobby={"import": dict(provenance)}, inbound_key=key,
    )
    if game_id is None:
        return Logged(None, None, "already imported")
    try:
        return await _play_into(store, game_id, rec, config, seats, actor, source)
    except BaseException:
        # A half-written import must not look like a live game to a bot starting on this
        # database (it would try to resume it): end it as aborted, then report the error.
        with contextlib.suppress(Exception):
            await store.finish_game(game_id, status=GameStatus.ABORTED, result=None)
        raise


async def _play_into(store: Store, game_id: int, rec: Record, config: Mapping[str, Any], seats: Sequence[SeatRecord],
                     actor: str, source: ActionSource) -> Logged:
    engine, cfg = rec.game, rec.config
    state, events = engine.new(cfg, rec.seats, rec.seed)
    await store.start_game(game_id, seed=rec.seed, config=config, seats=list(seats),
                           events=[_event(e) for e in events], rules_version=RULES_VERSION)
    for seat, action in rec.actions:
        state, evs = engine.apply(state, seat, action)
        await store.append_turn(game_id, action=ActionRecord.of(seat, action, source=source, actor=actor),
                                events=[_event(e) for e in evs], inbound_key=None)
    result = engine.result(state)
    if result is None:
        await store.finish_game(game_id, status=GameStatus.ABORTED, result=None)
        return Logged(game_id, GameStatus.ABORTED, "the record stops before the game ends")
    await store.finish_game(game_id, status=GameStatus.FINISHED, result=result.to_json())
    return Logged(game_id, GameStatus.FINISHED, result.summary)

"""Plays a stored tournament's matches on AI-only tables, concurrently, and saves its standings.

Each match runs through ``AiTables.open_ai_table`` / ``wait_finished``,
so a tournament's games are ordinary logged games: the inference worker batches their
model calls across tables, and the service resumes them from the log after a restart.

- Concurrency: ``concurrency`` matches at once (default ``default_concurrency()``: most
  of a game's time is spent waiting for the model, and more tables in flight make
  bigger batches for the worker).
- A match whose game breaks (aborted, an error) or stalls (no result within
  ``stall_s``: the game is aborted) is tried again up to ``attempts`` times, then
  recorded as failed; either way the tournament goes on.
- Resume: finished matches stay; a running match keeps its game, which the service
  replays from the log on start (its platform must be attached before ``run``); a
  match whose runner died between opening the game and recording its id finds its
  game again by tenant, seed and seat order; the rest are played.
- One run per tournament at a time, across processes: ``run`` takes the tournament's run
  lease in the database (``run:<id>``, renewed every third of ``lease_ttl``) or refuses
  with a sentence; a run whose lease was lost (its process stalled past the ttl) starts no
  new match. A process killed while holding it leaves the lease to expire within the ttl.
- Standings are fitted from the database's finished matches at the end of the run, never
  from one process's memory, so whatever ran them the leaderboard counts each game once.
- Tables never take a chat channel's table slot: a spectated match plays in a thread of
  its own opened in the tournament's place, any other in the quiet ``tournament`` place
  (``NullPlatform``), so members can still open a table in the channel and ``/abort``
  there never reaches a match.
- A match whose process died after its game row was made but before the game began
  leaves a ``lobby`` row: ``recover`` (at every run, and at start for tournaments nobody
  runs) aborts it and plans the match again.
- A live status message in the tournament's place is edited in place, when its platform is
  attached: games done / total and who is ahead on rating so far while it runs; at the end the
  leaderboard's verdict (a leader only when its interval is clear of every other entrant's, else a
  tie, or no call without intervals).
- Nothing after a game costs more than that game: the running rating is updated by the new match
  alone (``OnlineFit``), and the end's bootstrap, which refits the whole tournament hundreds of
  times, runs in a thread so the event loop (the lease's renewal, other tables) is not held.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta

from bot.core.finished import FinishedTable
from bot.core.lobby import host_user
from bot.core.messages import Command, CommandKind, DeliveryFailed, MessageRef, Outgoing, Place, UserRef
from bot.core.ports import TableHost
from bot.core.tables import Lobby
from bot.tournaments import board, results
from bot.tournaments.errors import TournamentError
from bot.tournaments.ratings import DEFAULT_ROUNDS, MatchResult, OnlineFit, Standing, standings
from bot.tournaments.spec import status_of
from storage import tournaments as repo
from storage.ports import TableStore
from storage.tables import GameStatus, MatchStatus, TournamentMatchRow, TournamentRow, TournamentStatus

log = logging.getLogger(__name__)

HEADLESS = "tournament"
"""Platform of the tables of matches not spectated in chat (``NullPlatform``: posts nowhere)."""
RUN_LEASE_TTL = timedelta(seconds=30)


def run_lease(tournament_id: int) -> str:
    """The lease row that makes one run of a tournament at a time (``scheduler_leases``)."""
    return f"run:{tournament_id}"


class RunBusy(TournamentError):
    """Another run of the same tournament holds its lease."""


@dataclass
class NullPlatform:
    """The quiet platform of tournament tables nobody watches: every send is accepted and dropped.
    Attached under ``HEADLESS`` so those games resume after a restart like any other."""

    name: str = HEADLESS
    quiet_waiting: bool = True
    text_replies: bool = False
    _ids: list[int] = field(default_factory=lambda: [0])

    def _ref(self, place: Place) -> MessageRef:
        self._ids[0] += 1
        return MessageRef(self.name, place.channel, str(self._ids[0]))

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        return self._ref(place)

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        return self._ref(Place(self.name, user.key))

    async def edit(self, ref: MessageRef, m: Outgoing) -> None:
        return None

    async def open_thread(self, place: Place, title: str, anchor: MessageRef | None) -> Place:
        return place


def default_concurrency() -> int:
    """Matches in flight: four per core, at most 32 (games mostly wait for the model)."""
    return max(2, min(32, 4 * (os.cpu_count() or 1)))


@dataclass(frozen=True)
class Progress:
    tournament_id: int
    done: int
    failed: int
    total: int
    ahead: str | None
    """Who is ahead on rating so far (mid-run there is no interval: never called the leader)."""
    verdict: str = ""
    """At the end: the leaderboard's verdict (``board.verdict``)."""


@dataclass(frozen=True)
class RunSummary:
    tournament_id: int
    finished: int
    failed: int
    standings: tuple[Standing, ...]


ProgressHook = Callable[[Progress], Awaitable[None]]


class TournamentRunner:
    def __init__(
        self,
        service: TableHost,
        *,
        concurrency: int | None = None,
        attempts: int = 2,
        stall_s: float = 1800.0,
        rounds: int = DEFAULT_ROUNDS,
        on_progress: ProgressHook | None = None,
        lease_ttl: timedelta = RUN_LEASE_TTL,
    ) -> None:
        self.service = service
        self.store: TableStore = service.store
        self.concurrency = concurrency
        self.attempts = attempts
        self.stall_s = stall_s
        self.rounds = rounds
        self.on_progress = on_progress
        self.lease_ttl = lease_ttl
        self.owner = uuid.uuid4().hex[:12]
        self._lost = False
        self._status_lock = asyncio.Lock()

    @asynccontextmanager
    async def lease(self, tournament_id: int) -> AsyncIterator[None]:
        """Hold the tournament's run lease (renewed in the background) or raise ``RunBusy``."""
        name = run_lease(tournament_id)
        if not await repo.acquire_lease(self.store, name, self.owner, self.lease_ttl):
            raise RunBusy(f"Tournament #{tournament_id} is already being played by another run; "
                          "wait for it to finish (its status shows the progress).")
        self._lost = False
        keeper = asyncio.get_running_loop().create_task(self._renew(name))
        try:
            yield
        finally:
            keeper.cancel()
            await asyncio.gather(keeper, return_exceptions=True)
            await repo.release_lease(self.store, name, self.owner)

    async def _renew(self, name: str) -> None:
        while True:
            await asyncio.sleep(self.lease_ttl.total_seconds() / 3)
            try:
                held = await repo.acquire_lease(self.store, name, self.owner, self.lease_ttl)
            except Exception as exc:  # the database hiccuped: try again next round
                log.warning("tournament run lease %s not renewed: %s", name, type(exc).__name__)
                continue
            if not held:
                log.warning("tournament run lease %s lost; no new matches start here", name)
                self._lost = True
                return

    async def run(self, tournament_id: int, *, tenant: str | None = None) -> RunSummary:
        """Play the tournament's remaining matches. ``tenant``: the tournament must be that tenant's
        and still runnable (the one read of its row in a run checks it)."""
        async with self.lease(tournament_id):
            # Read under the lease: a run that waited for it sees what the previous run left.
            t = await repo.tournament(self.store, tournament_id)
            if t is None or (tenant is not None and t.tenant != tenant):
                raise TournamentError(f"There is no tournament #{tournament_id} here." if tenant is not None
                                      else f"There is no tournament #{tournament_id}.")
            if tenant is not None and status_of(t) in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
                raise TournamentError(f"Tournament #{t.id} is {t.status}.")
            return await self._run(t)

    async def _run(self, t: TournamentRow) -> RunSummary:
        tournament_id = t.id or 0
        if status_of(t) is TournamentStatus.CANCELLED:
            raise TournamentError(f"Tournament #{tournament_id} was cancelled.")
        await repo.set_tournament_status(self.store, tournament_id, TournamentStatus.RUNNING)
        matches = await repo.matches(self.store, tournament_id)
        await self._recover(t, matches)  # aborts orphan games; their match rows stay as read
        state = _RunState(t, len(matches), sum(1 for m in matches if m.status == MatchStatus.FAILED))
        for r in await results.match_results(self.store, tournament_id, matches=matches):
            state.add(r)
        await self._report(state)
        limit = asyncio.Semaphore(max(1, self.concurrency or t.concurrency or default_concurrency()))
        todo = [m for m in matches if m.status in (MatchStatus.PLANNED, MatchStatus.RUNNING)]
        await asyncio.gather(*(self._play(state, m, limit) for m in todo))
        # The standings come from the database's finished matches (their stored outcomes), not from
        # what this process saw; a tournament cancelled meanwhile keeps its status (``finish_tournament``).
        finished = await results.match_results(self.store, tournament_id)
        rows = await self.save_standings(t, finished)
        if not self._lost:
            await repo.finish_tournament(self.store, tournament_id)
        state.results = finished
        await self._report(state, verdict=board.verdict(rows))
        return RunSummary(tournament_id, len(finished), state.failed, tuple(rows))

    async def recover(self, tournament_id: int) -> int:
        """Under the run lease: orphan ``lobby`` games of interrupted matches are aborted and their
        matches planned again. Returns how many were cleaned; 0 when a run holds the lease."""
        t = await repo.tournament(self.store, tournament_id)
        if t is None:
            return 0
        try:
            async with self.lease(tournament_id):
                return await self._recover(t, await repo.matches(self.store, tournament_id))
        except RunBusy:
            return 0

    async def _recover(self, t: TournamentRow, matches: Sequence[TournamentMatchRow]) -> int:
        """Abort the tournament's orphan ``lobby`` games (held under the run lease). A match's game is
        made in ``lobby`` and begun at once; a process killed in between leaves the row in ``lobby``
        with no seats, so it is found by what the service wrote: the AI host, the tournament's quiet
        place or a thread under its place, and the roster of an interrupted match. The match itself
        then has no game and is planned again (``_resumable_game``)."""
        interrupted = [m for m in matches if m.status == MatchStatus.RUNNING and m.game_id is None and m.started_at is not None]
        if not interrupted:
            return 0
        since = min(m.started_at for m in interrupted if m.started_at is not None)
        rosters = {tuple(m.seats) for m in interrupted}
        quiet = Place(HEADLESS, f"tournament-{t.id}")
        cleaned = 0
        for row in await self.store.games(status=GameStatus.LOBBY, tenant=t.tenant, since=since):
            lobby = Lobby.of(row)
            at_quiet = row.platform == quiet.platform and row.place == quiet.key
            at_home = bool(t.platform and t.place) and row.platform == t.platform and (
                row.place == t.place or row.place.startswith(t.place + "/"))
            roster = tuple(s.agent or "" for s in lobby.seats)
            if row.id is None or lobby.host.key != host_user(row.platform).key or not (at_quiet or at_home) \
                    or roster not in rosters:
                continue
            await self.store.finish_game(row.id, status=GameStatus.ABORTED, result=None)
            log.info("tournament %s: aborted orphan lobby game %s", t.id, row.id)
            cleaned += 1
        return cleaned

    async def save_standings(self, t: TournamentRow, matches: Sequence[MatchResult]) -> list[Standing]:
        assert t.id is not None
        ids = [m.game_id for m in matches if m.game_id is not None]
        scores = await results.clue_scores(self.store, ids)
        bluffs = await results.clue_scores(self.store, ids, bluff=True)
        game = t.game
        # Pure and CPU-bound (hundreds of refits of every match): off the event loop.
        rows = await asyncio.to_thread(
            standings, matches, t.entrants, rounds=self.rounds, seed=t.seed, clue_scores=scores,
            bluff_scores=bluffs, describes=lambda key, role: board.describes(game, key, role))
        # No interval (too few deal groups) is stored as the point; the board reads the groups again.
        await repo.save_ratings(self.store, t.id, t.game, t.variant, [
            repo.RatingRecord(r.entrant, r.rank, r.mu, r.sigma, r.lo if r.has_interval else r.mu,
                              r.hi if r.has_interval else r.mu, r.games, _json_metrics(r.roles)) for r in rows
        ])
        return rows

    # ------------------------------------------------------------------ one match

    async def _play(self, state: _RunState, m: TournamentMatchRow, limit: asyncio.Semaphore) -> None:
        async with limit:
            t = state.tournament
            assert m.id is not None
            game_id = await self._resumable_game(t, m)
            check = game_id is not None  # a game made by an earlier run
            while True:
                # A cancelled tournament starts no match: a planned one is failed by the cancel
                # (start_match then refuses it); a resumed game or a retry asks the tournament.
                if self._lost or (check and await self._cancelled(t)):
                    return
                check = True
                error: str | None = None
                if game_id is None:
                    if not await repo.start_match(self.store, m.id):
                        return  # another runner has it
                    try:
                        place, spectated = await self._place(t, m)
                        game_id = await self.service.ai_tables.open_ai_table(
                            tenant=t.tenant, place=place, game=t.game, variant=t.variant or None,
                            options=t.options, agents=list(m.seats), seed=m.seed, spectate=spectated)
                    except ValueError as exc:  # the configuration changed under the tournament: not retryable
                        await repo.fail_match(self.store, m.id, f"could not open the table: {exc}")
                        state.failed += 1
                        await self._report(state)
                        return
                    except Exception as exc:  # a passing failure (the database, a platform): try again
                        log.exception("match %s of tournament %s could not open its table", m.idx, t.id)
                        error = f"could not open the table: {type(exc).__name__}"
                    else:
                        await repo.attach_game(self.store, m.id, game_id)
                if error is None and game_id is not None:
                    finished, error = await self._wait(t, game_id)
                    if finished is not None:
                        # Read from the finished table's record (no second read of its log); the
                        # outcomes are stored with the match's finish.
                        outcomes = results.outcomes_of_record(finished.record)
                        await repo.finish_match(self.store, m.id, [str(o.role) for o in outcomes],
                                                results.outcome_rows(outcomes))
                        state.add(MatchResult(tuple(m.seats), tuple(outcomes), m.deal_group, game_id))
                        await self._report(state)
                        return
                reason = error or "no game"
                attempts = await repo.match_attempts(self.store, m.id)
                log.warning("match %s of tournament %s (game %s): %s", m.idx, t.id, game_id, reason)
                if attempts >= self.attempts:
                    await repo.fail_match(self.store, m.id, reason)
                    state.failed += 1
                    await self._report(state)
                    return
                await repo.retry_match(self.store, m.id, reason)
                game_id = None

    async def _cancelled(self, t: TournamentRow) -> bool:
        current = await repo.tournament(self.store, t.id or 0)
        return current is None or status_of(current) is TournamentStatus.CANCELLED

    async def _resumable_game(self, t: TournamentRow, m: TournamentMatchRow) -> int | None:
        if m.status != MatchStatus.RUNNING:
            return None
        assert m.id is not None
        if m.game_id is not None:
            return m.game_id
        orphan = None
        if m.started_at is not None:
            orphan = await repo.find_orphan_game(self.store, tenant=t.tenant, seed=m.seed, agents=m.seats,
                                                 since=m.started_at)
        if orphan is not None:
            await repo.attach_game(self.store, m.id, orphan)
            return orphan
        await repo.retry_match(self.store, m.id, "interrupted before its game started")
        return None

    async def _wait(self, t: TournamentRow, game_id: int) -> tuple[FinishedTable | None, str | None]:
        """The finished table; else why there is none (after aborting a stalled game)."""
        try:
            finished = await asyncio.wait_for(self.service.ai_tables.wait_finished(game_id), self.stall_s)
        except TimeoutError:
            await self._abort(t, game_id)
            return None, f"stalled: no result after {self.stall_s:g} s"
        if finished is None:
            row = await self.store.game(game_id)
            return None, f"the game ended without a result ({row.status if row else 'missing'})"
        return finished, None

    async def _abort(self, t: TournamentRow, game_id: int) -> None:
        row = await self.store.game(game_id)
        if row is None:
            return
        host = UserRef(row.platform, "hushtable", "Hushtable")
        cmd = Command(CommandKind.ABORT, host, Place.from_key(row.platform, row.place), {"game_id": game_id},
                      is_admin=True, tenant=t.tenant)
        reply = await self.service.handle(cmd)
        log.info("aborted stalled game %s: %s", game_id, reply.text)

    async def _place(self, t: TournamentRow, m: TournamentMatchRow) -> tuple[Place, bool]:
        """Where a match's table sits, and whether it is spectated: a thread of its own under the
        tournament's place when spectated and the platform opens one, else the quiet place. Never
        the channel itself, whose one table slot belongs to its members."""
        if t.spectate and t.platform and t.place and t.platform in self.service.platforms:
            home = Place.from_key(t.platform, t.place)
            title = f"{t.game} · tournament #{t.id} game {m.idx + 1}"
            thread = await self.service.delivery.open_thread(home, title, None)
            if thread.thread and thread.key != home.key:
                return thread, True
        return Place(HEADLESS, f"tournament-{t.id}"), False

    # ------------------------------------------------------------------ status

    async def _report(self, state: _RunState, *, verdict: str | None = None) -> None:
        """Say the progress (``verdict``: the run is over and this is its leaderboard's verdict)."""
        final = verdict is not None
        p = Progress(state.tournament.id or 0, len(state.results), state.failed, state.total,
                     state.rating.ahead(), verdict or "")
        if self.on_progress is not None:
            await self.on_progress(p)
        await self._edit_status(state.tournament, p, final)

    async def _edit_status(self, t: TournamentRow, p: Progress, final: bool) -> None:
        platform = self.service.platforms.get(t.platform) if t.platform else None
        if platform is None or not t.place or t.id is None:
            return
        text = status_text(t, p, final)
        async with self._status_lock:
            try:
                ref = t.status_message
                if ref is None:
                    posted = await platform.post(Place.from_key(t.platform, t.place), Outgoing(text, title=_title(t)))
                    t.status_message = {"channel": posted.channel, "message_id": posted.message_id}
                    await repo.set_status_message(self.store, t.id, t.status_message)
                else:
                    await platform.edit(MessageRef(t.platform, ref["channel"], ref["message_id"]),
                                        Outgoing(text, title=_title(t)))
            except DeliveryFailed as exc:
                log.warning("could not update the status of tournament %s: %s", t.id, exc)


def _json_metrics(roles: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float | None]]:
    # NaN (no decided game in a role) is not JSON: Postgres refuses it. Stored as null.
    return {role: {k: (None if v != v else v) for k, v in m.items()} for role, m in roles.items()}


@dataclass
class _RunState:
    tournament: TournamentRow
    total: int
    failed: int
    results: list[MatchResult] = field(default_factory=list)
    rating: OnlineFit = field(init=False)

    def __post_init__(self) -> None:
        self.rating = OnlineFit(self.tournament.entrants)

    def add(self, result: MatchResult) -> None:
        self.results.append(result)
        self.rating.add(result)


def _title(t: TournamentRow) -> str:
    return f"Tournament #{t.id}" + (f": {t.name}" if t.name else "")


def status_text(t: TournamentRow, p: Progress, final: bool = False) -> str:
    head = "finished" if final else "running"
    parts = [f"{t.game} ({t.variant}) tournament {head}: {p.done}/{p.total} games played"]
    if p.failed:
        parts.append(f"{p.failed} failed")
    if p.ahead and not final:
        # Who is ahead on rating, never called the leader: a lead counts only once its interval
        # clears every other entrant's, which the finished leaderboard's verdict says (or names a tie).
        parts.append(f"ahead so far: {p.ahead}")
    text = ", ".join(parts) + "."
    return f"{text} {p.verdict}" if final and p.verdict else text

"""A member's data out, and a member erased: the steps over the store that the chat commands
(``/hushtable mydata``, ``/hushtable forget-me``) and the operator's ``hushtable data`` share.

``member_export`` is everything stored about one member as JSON (``storage.people.member_data``),
audited. ``forget`` erases one member: each of their ended games is redacted
(``bot.core.redact.member_erasure``: their texts replaced by stand-ins the engine accepts, the
events rebuilt by replay) and unlinked (``storage.people.erase_games``), a few games (up to
``WRITE_BATCH_TURNS`` turns) per transaction;
a game not ended yet is left for ``finish_pending``, run when a game ends and by the CLI; then
the member-wide rows (study answers, choices, notices, audit subject) go, and free space is
scrubbed (``storage.people.scrub_free_space``). Every step is audited, never with content.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from bot.core.redact import member_erasure, redact_log
from storage import people
from storage.export import Withheld
from storage.people import MemberGame, Scrubber
from storage.records import GameLog
from storage.tables import ActionSource, GameStatus, SeatKind

CONSENT_MODES = ("opt-in", "notice", "off")
LOAD_BATCH = 50  # games whose logs an erasure reads at once
# Turns of games an erasure writes in one transaction: one commit for many games, yet short enough
# that a bot playing on the same database waits a moment for its next turn, not seconds.
WRITE_BATCH_TURNS = 300

log = logging.getLogger(__name__)


class PeopleStore(people.Database, Protocol):
    """The store as these steps use it: units of work and a game's log."""

    async def load_game(self, game_id: int) -> GameLog: ...

    async def load_games(self, game_ids: Sequence[int]) -> list[GameLog]: ...


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What an erasure did: games erased now, games whose erasure waits for their end, rows changed,
    games whose redacted log no longer replays to its stored outcome (by id), whether free space
    was scrubbed."""

    erased: tuple[int, ...]
    waiting: tuple[int, ...]
    rows: int
    not_replaying: tuple[int, ...]
    scrubbed: bool

    def sentence(self) -> str:
        done = f"Erased from {len(self.erased)} game(s)"
        wait = f"; {len(self.waiting)} game(s) still running will be erased when they end" if self.waiting else ""
        return f"{done}{wait}."


async def member_export(store: PeopleStore, key: str, *, actor: str) -> bytes:
    """Everything stored about the member, as a JSON file's bytes; the request is audited."""
    data = people.member_data
    found: dict[str, Any] = await data(store, key)
    body = json.dumps(found, indent=2, ensure_ascii=False, sort_keys=True).encode("utf-8")
    rows = len(found["games"]) + sum(len(g["actions"]) for g in found["games"]) + len(found["study_answers"])
    await people.audit(store, actor=actor, action="data export", scope="one member's data", rows=rows, subject=key)
    return body


async def audit_export(store: PeopleStore, *, actor: str, what: str, games: int, withheld: int) -> None:
    """Record a research export (never its content): what was exported, how many games, texts withheld."""
    await people.audit(store, actor=actor, action="export", scope=f"{what}; {withheld} text(s) withheld", rows=games)


async def forget(store: PeopleStore, key: str, *, actor: str) -> ForgetReport:
    """Erase the member now from every ended game; games not ended wait (``finish_pending``)."""
    await people.audit(store, actor=actor, action="erasure", scope="one member", rows=0, subject=key)
    return await _erase(store, key, actor)


async def _erase(store: PeopleStore, key: str, actor: str) -> ForgetReport:
    erased: list[int] = []
    broken: list[int] = []
    rows = 0
    while True:
        waiting, n = await _erase_ended(store, key, erased, broken)
        rows += n
        rows += await people.erase_member(store, key, pending=bool(waiting), requested_by=actor)
        # A game that ended after it was read as running, but before the pending request was written,
        # had its finish listener find no request: it is erased here, so none is left behind (the
        # request is committed first, so a game ending later finds it).
        if not waiting or not await people.any_ended(store, waiting):
            break
    scrubbed = await people.scrub_free_space(store)
    scope = f"{len(erased)} game(s) erased, {len(waiting)} waiting"
    await people.audit(store, actor=people.ERASED_NAME if actor == key else actor, action="erasure done",
                       scope=scope, rows=rows)
    return ForgetReport(tuple(erased), tuple(waiting), rows, tuple(broken), scrubbed)


async def _erase_ended(store: PeopleStore, key: str, erased: list[int], broken: list[int]) -> tuple[list[int], int]:
    """Erase the member from each of their games that has ended (appending to ``erased`` and
    ``broken``); the games still running, and the rows changed."""
    mine: list[MemberGame] = await people.member_games(store, key)
    rows = 0
    ended = {g.game_id for g in mine if g.status not in (GameStatus.LOBBY, GameStatus.RUNNING)}
    waiting = [g.game_id for g in mine if g.game_id not in ended]
    ids = sorted(ended)
    for start in range(0, len(ids), LOAD_BATCH):  # a batch of logs in four queries, not four per game
        plans: list[people.GameErasure] = []
        turns = 0
        for game_log in await store.load_games(ids[start:start + LOAD_BATCH]):
            plans.append(member_erasure(game_log, key))
            turns += len(game_log.actions)
            if turns >= WRITE_BATCH_TURNS:
                rows += await _write(store, key, plans, erased, broken, waiting)
                plans, turns = [], 0
        rows += await _write(store, key, plans, erased, broken, waiting)
    return waiting, rows


async def _write(store: PeopleStore, key: str, plans: list[people.GameErasure], erased: list[int], broken: list[int],
                 waiting: list[int]) -> int:
    """Write planned erasures in one transaction; sort their games into erased, broken and waiting."""
    if not plans:
        return 0
    done = await people.erase_games(store, key, plans)
    for plan in plans:
        if plan.game_id in done.running:  # it was running after all (a resumed game): it waits
            waiting.append(plan.game_id)
            continue
        erased.append(plan.game_id)
        if not plan.replays:
            broken.append(plan.game_id)
            log.warning("game %s: after erasure its log no longer replays to its stored outcome", plan.game_id)
    return done.rows


async def finish_pending(store: PeopleStore) -> int:
    """Finish the erasures that waited for games to end; how many members were completed."""
    done = 0
    for key in await people.pending_erasures(store):
        report = await _erase(store, key, "pending erasure")
        if not report.waiting:
            done += 1
    return done


# --------------------------------------------------------------------------- research consent


class ResearchFilter:
    """A research export's filter (``storage.export.Withhold``): in each game the texts of human
    seats whose member has not consented are replaced by stand-ins (``bot.core.redact``), the
    game's structure kept (it still replays, ratings hold); ``total`` counts the texts withheld."""

    def __init__(self, consents: Callable[[str | None], bool], *,
                 audit: Callable[[int, int], Awaitable[None]] | None = None) -> None:
        self.consents = consents
        self.total = 0
        self._audit = audit

    async def finish(self, games: int) -> None:
        """The export is written: audit it (what, how many games, texts withheld) when told how."""
        if self._audit is not None:
            await self._audit(games, self.total)

    def _whose(self, log: GameLog) -> Callable[[int, int, str, str], bool] | None:
        """Which actions' texts are withheld (``redact_log``'s picker); None when every member consented."""
        quiet = {s.seat for s in log.seats if s.kind == SeatKind.HUMAN and not self.consents(s.user_key)}
        keys = {s.user_key for s in log.seats if s.seat in quiet}

        def whose(_seq: int, seat: int, source: str, actor: str) -> bool:
            return (seat in quiet and source == ActionSource.HUMAN) or actor in keys

        return whose if quiet else None

    def withheld_texts(self, log: GameLog) -> dict[int, tuple[str, ...]]:
        """The texts an export of ``log`` withholds, by action seq (what the member wrote): the same
        choice as ``__call__``'s, for the clue reports that quote clues. Counts nothing in ``total``."""
        whose = self._whose(log)
        if whose is None:
            return {}
        red = redact_log(log, whose)
        replaced = {old for old, _new in red.texts}
        return {a.seq: tuple(v for v in a.value if v in replaced) for a in log.actions if a.seq in red.actions}

    def __call__(self, log: GameLog) -> Withheld:
        whose = self._whose(log)
        if whose is None:
            return Withheld(log, lambda v: v, 0)
        red = redact_log(log, whose)
        if red.withheld == 0:
            return Withheld(log, lambda v: v, 0)
        actions = [a.model_copy(update={"value": list(red.actions[a.seq])}) if a.seq in red.actions else a
                   for a in log.actions]
        events = [e.model_copy(update={"data": red.events[e.seq]}) if e.seq in red.events else e for e in log.events]
        scrub = Scrubber(red.texts)
        result = red.result if red.result is not None and log.row.result is not None else scrub.json(log.row.result)
        row = log.row.model_copy(update={"result": result, "lobby": scrub.json(log.row.lobby)})
        self.total += red.withheld
        return Withheld(GameLog(row, list(log.seats), actions, events), scrub.json, red.withheld)


def consent_rule(mode: str, choices: dict[str, bool]) -> Callable[[str | None], bool]:
    """Whether a member's words may go into research exports under ``HUSHTABLE_RESEARCH_CONSENT``:
    opt-in, those who said yes; notice, all but those who said no; off, everyone."""
    if mode == "off":
        return lambda _key: True
    if mode == "notice":
        return lambda key: key is not None and choices.get(key, True)
    return lambda key: key is not None and choices.get(key, False)


async def research_filter(store: PeopleStore, mode: str) -> ResearchFilter:
    """The filter for a research export under the configured consent mode."""
    return ResearchFilter(consent_rule(mode, await people.research_choices(store)))


# --------------------------------------------------------------------------- retention


def expiry_plan(log: GameLog) -> people.GameErasure:
    """The plan that removes every free text of one ended game (every seat's, AI seats' too): the
    texts replaced by stand-ins, the structure kept (``bot.core.redact``)."""
    red = redact_log(log, lambda _seq, _seat, _source, _actor: True)
    assert log.row.id is not None
    return people.GameErasure(log.row.id, red.actions, red.events, red.texts, red.replays,
                              red.result if log.row.result is not None else None)


async def expire_texts(store: PeopleStore, days: int, *, now: datetime | None = None, limit: int = 100) -> int:
    """Remove the free text and private messages of games that ended more than ``days`` ago (at
    most ``limit`` games a run); how many games. Audited when any was."""
    before = (now or datetime.now(UTC)) - timedelta(days=days)
    done = rows = 0
    try:
        for game_log in await store.load_games(await people.expirable_games(store, before, limit=limit)):
            rows += await people.expire_game(store, expiry_plan(game_log))
            done += 1
    finally:  # a stop that cuts the run short still scrubs and audits the games it expired (never run again)
        if done:
            await people.scrub_free_space(store)
            await people.audit(store, actor="retention", action="retention",
                               scope=f"{done} game(s) older than {days} day(s)", rows=rows)
    return done


# --------------------------------------------------------------------------- the members' commands


RESEARCH_WORDS = {"on": True, "yes": True, "off": False, "no": False}


class PrivacyDesk:
    """What the chat commands answer (``privacy``, ``research on|off``, ``mydata``, ``forget-me``,
    ``audit``), the one line a member sees the first time they join a table in a tenant, and the
    background work: erasures that waited for a game to end (after each game) and retention (an
    APScheduler interval job). Platform-free: adapters render its sentences and files."""

    def __init__(self, store: PeopleStore, *, contact: str | None, consent: str, retention_days: int | None) -> None:
        if consent not in CONSENT_MODES:
            raise ValueError(f"research consent must be one of {', '.join(CONSENT_MODES)}")
        self.store = store
        self.contact = contact
        self.consent = consent
        self.retention_days = retention_days
        self._scheduler: Any = None
        self._sweeping: asyncio.Task[Any] | None = None  # the scheduled sweep in flight, awaited by a stop

    def privacy_text(self) -> str:
        """What is stored, for how long, who can export it, how to get or erase one's data."""
        keep = (f"Free text of games that ended more than {self.retention_days} days ago is removed; "
                if self.retention_days else "Games are kept until erased; ")
        research = {"opt-in": "only if you say `research on`", "notice": "unless you say `research off`",
                    "off": "as the operator decided (no per-member choice)"}[self.consent]
        contact = f"Questions: {self.contact}." if self.contact else "Questions: ask this server's admins."
        return "\n".join([
            "Privacy: Hushtable stores what you type in games (clues, descriptions, hints, guesses, votes), your "
            "study answers, and your platform id and display name with your seats.",
            keep + "outcomes and ratings stay.",
            f"Server admins and the operator can export games; research exports carry your words {research}, "
            "with ids pseudonymised.",
            "`mydata` sends you everything stored about you; `forget-me` erases you (your words replaced, your id "
            "and name unlinked; games still replay).",
            contact,
        ])

    async def consents(self, user_key: str) -> bool:
        """Whether the member's words may go into research (and the member be asked in the study)."""
        return consent_rule(self.consent, await people.research_choices(self.store))(user_key)

    async def research(self, user_key: str, word: str | None) -> str:
        """``research on|off``: record the member's choice; no word: say it."""
        if not word:
            now = "in" if await self.consents(user_key) else "out of"
            return f"Your words are {now} research exports. Say `research on` or `research off` to choose."
        choice = RESEARCH_WORDS.get(word.strip().lower())
        if choice is None:
            return "Say `research on` or `research off`."
        if self.consent == "off":
            return "This operator does not ask for research consent (HUSHTABLE_RESEARCH_CONSENT=off); nothing changed."
        await people.set_research(self.store, user_key, choice)
        return ("Thanks: your words may go into research exports (pseudonymised)." if choice
                else "Done: your words are left out of research exports from now on.")

    async def mydata(self, user_key: str) -> tuple[str, bytes]:
        """The member's own data as a JSON file (name, bytes), audited."""
        return "hushtable-mydata.json", await member_export(self.store, user_key, actor=user_key)

    async def forget_me(self, user_key: str, *, confirmed: bool) -> str:
        """``forget-me``: without confirmation, what it does; confirmed, the erasure."""
        if not confirmed:
            return ("This erases you from Hushtable: your words in every game are replaced, your id and name "
                    "unlinked, your study answers removed. It cannot be undone. Confirm to go on.")
        report = await forget(self.store, user_key, actor=user_key)
        return report.sentence()

    async def audit_text(self, *, is_admin: bool, limit: int = 20) -> str:
        """The newest audit entries, for admins."""
        if not is_admin:
            return "Only admins can read the audit."
        entries = await people.audit_log(self.store, limit=limit)
        if not entries:
            return "Nothing audited yet."
        return "\n".join(f"{e.at:%Y-%m-%d %H:%M} {e.actor}: {e.action} ({e.scope}; {e.rows} row(s))" for e in entries)

    async def report_filter(self) -> ResearchFilter:
        """The research filter as it stands now, unaudited: what the SNEAK clue reports use to quote
        only consenting members' clues (``bot.sneak``)."""
        return ResearchFilter(consent_rule(self.consent, await people.research_choices(self.store)))

    async def export_filter(self, actor: str, what: str) -> ResearchFilter:
        """The filter of an admin's export in chat, which audits it once written."""

        async def audit(games: int, withheld: int) -> None:
            await audit_export(self.store, actor=actor, what=what, games=games, withheld=withheld)

        return ResearchFilter(consent_rule(self.consent, await people.research_choices(self.store)), audit=audit)

    async def notice(self, tenant: str, user_key: str) -> str | None:
        """The one line a member sees the first time they join a table in this tenant; None after."""
        if not await people.notice_due(self.store, tenant, user_key):
            return None
        return "Hushtable stores what you type in games: see `privacy` for what, how long, and how to get or erase it."

    async def after_game(self, _finished: object) -> None:
        """A finish listener: erasures that waited for a game to end are finished."""
        try:
            if await people.pending_erasures(self.store):
                await finish_pending(self.store)
        except Exception as exc:  # the next game's end tries again; never breaks a table
            log.warning("pending erasures not finished yet (%s)", type(exc).__name__)

    async def sweep(self) -> int:
        """The retention job's run (and any erasure still waiting): games whose text was removed."""
        await finish_pending(self.store)
        if self.retention_days is None:
            return 0
        return await expire_texts(self.store, self.retention_days)

    def start_schedule(self, every: timedelta = timedelta(hours=1)) -> None:
        """Run ``sweep`` now and then (APScheduler, as tournaments use it), on this event loop."""
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        self._scheduler = AsyncIOScheduler(timezone="UTC")
        self._scheduler.add_job(self._scheduled_sweep, "interval", seconds=every.total_seconds(), id="privacy-sweep",
                                coalesce=True, max_instances=1, next_run_time=datetime.now(UTC))
        self._scheduler.start()

    async def _scheduled_sweep(self) -> None:
        """The job the schedule runs. A stop cancels a sweep in flight, and it ends quietly: each batch of
        an erasure and each expiry is its own transaction, and the next start's sweep finishes the rest."""
        self._sweeping = asyncio.current_task()
        try:
            await self.sweep()
        except asyncio.CancelledError:
            if self._scheduler is not None:  # not the stop's cancellation: the stop lets the schedule go first
                raise
            log.info("privacy sweep stopped with the bot; the next start finishes it")
        finally:
            self._sweeping = None

    async def stop_schedule(self) -> None:
        """Stop the schedule; a sweep in flight is cancelled and has ended when this returns, so the
        store can close behind it."""
        if self._scheduler is not None:
            sweeping = self._sweeping
            self._scheduler.shutdown(wait=False)  # cancels the sweep in flight
            self._scheduler = None
            if sweeping is not None:
                await asyncio.gather(sweeping, return_exceptions=True)

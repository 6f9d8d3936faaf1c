"""A member's data out, and a member erased: the steps over the store that the chat commands
(``/hushtable mydata``, ``/hushtable forget-me``) and the operator's ``hushtable data`` share.

``member_export`` is everything stored about one member as JSON (``storage.people.member_data``),
audited. ``forget`` erases one member: each of their ended games is redacted
(``bot.core.redact.member_erasure``: their texts replaced by stand-ins the engine accepts, the
events rebuilt by replay) and unlinked (``storage.people.erase_game``), one transaction per game;
a game not ended yet is left for ``finish_pending``, run when a game ends and by the CLI; then
the member-wide rows (study answers, choices, notices, audit subject) go, and free space is
scrubbed (``storage.people.scrub_free_space``). Every step is audited, never with content.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bot.core.redact import member_erasure, redact_log
from storage import people
from storage.export import Withheld
from storage.people import MemberGame, Scrubber
from storage.records import GameLog
from storage.tables import ActionSource, SeatKind

CONSENT_MODES = ("opt-in", "notice", "off")

log = logging.getLogger(__name__)


class PeopleStore(people.Database, Protocol):
    """The store as these steps use it: units of work and a game's log."""

    async def load_game(self, game_id: int) -> GameLog: ...


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
    mine: list[MemberGame] = await people.member_games(store, key)
    erased: list[int] = []
    waiting: list[int] = []
    broken: list[int] = []
    rows = 0
    for g in mine:
        plan = member_erasure(await store.load_game(g.game_id), key)
        n = await people.erase_game(store, key, plan)
        if n is None:
            waiting.append(g.game_id)
            continue
        erased.append(g.game_id)
        rows += n
        if not plan.replays:
            broken.append(g.game_id)
            log.warning("game %s: after erasure its log no longer replays to its stored outcome", g.game_id)
    rows += await people.erase_member(store, key, pending=bool(waiting), requested_by=actor)
    scrubbed = await people.scrub_free_space(store)
    scope = f"{len(erased)} game(s) erased, {len(waiting)} waiting"
    await people.audit(store, actor=people.ERASED_NAME if actor == key else actor, action="erasure done",
                       scope=scope, rows=rows)
    return ForgetReport(tuple(erased), tuple(waiting), rows, tuple(broken), scrubbed)


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

    def __init__(self, consents: Callable[[str | None], bool]) -> None:
        self.consents = consents
        self.total = 0

    def __call__(self, log: GameLog) -> Withheld:
        quiet = {s.seat for s in log.seats if s.kind == SeatKind.HUMAN and not self.consents(s.user_key)}
        keys = {s.user_key for s in log.seats if s.seat in quiet}

        def whose(_seq: int, seat: int, source: str, actor: str) -> bool:
            return (seat in quiet and source == ActionSource.HUMAN) or actor in keys

        if not quiet:
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

"""The turn loop: one action applied and logged, prompts for humans, the AI driver, deadlines
that expire, the end of a game, and the supervisor that repairs a stalled table.

Every action — a human's button, an AI's decision, a deadline's stand-in — goes through
`Turns.submit`: the engine validates it, the store logs it durably (idempotent on the
platform's event id), then its events fan out. It all happens under the table's lock, so
a turn never interleaves with another turn or a lifecycle change of the same table.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, Protocol

from bot.core import intake, render
from bot.core.agents import AgentRunner, Outcome
from bot.core.commands import ActArgs, Refused, ReplyTextArgs, TableRef
from bot.core.deadlines import Deadlines
from bot.core.delivery import Delivery
from bot.core.messages import Command, Outgoing, Reply
from bot.core.observe import ServiceObserver
from bot.core.outbox import Outbox, Planned
from bot.core.tables import SeatInfo, Table, seat_seed
from bot.settings import Settings
from games.base import Action, C, Event, IllegalAction, Result, S, Seat, Text
from games.labels import fill_spec
from models.agents.base import CallLog, Source
from models.agents.provenance import decision_row, role_of
from storage.ports import GamePort, OutboxPort
from storage.records import ActionRecord, AgentCallRecord, EventRecord, LogAhead
from storage.tables import ActionSource, AgentOperation, GameStatus

log = logging.getLogger(__name__)

DUPLICATE = "Already done: that message was handled before, so nothing changed."
AI_ATTEMPTS = 4  # tries of one AI turn (decide + log) before the rules' own action stands in
AI_BACKOFF_S = 0.2  # first pause between tries; doubles each time
AI_AGAIN_S = 2.0  # pause before an AI seat that could not play after AI_ATTEMPTS is driven again
FINISH_RETRY_S = 0.5  # first pause before saving a game's end again after a database error; doubles
FINISH_RETRY_MAX_S = 5.0
# Tables a supervisor round looks at between yields to the event loop: a round over 1,000 tables
# took about 9 ms of CPU in one piece, every command in flight waiting it out.
SUPERVISE_BATCH = 100

Ended = Callable[[Table, Result | None], Awaitable[None]]
"""Called once a table is over (its result, or None when it was aborted or broke)."""


class TurnStore(GamePort, OutboxPort, Protocol):
    """What the turn loop uses of the log: games and turns, and the outbox of their messages."""


class Turns:
    def __init__(self, store: TurnStore, settings: Settings, runner: AgentRunner, delivery: Delivery,
                 deadlines: Deadlines, observer: ServiceObserver, tables: dict[int, Table],
                 spawn: Callable[[Coroutine[Any, Any, None]], asyncio.Task[None]], ended: Ended) -> None:
        self.store = store
        self.settings = settings
        self.runner = runner
        self.delivery = delivery
        self.deadlines = deadlines
        self.observer = observer
        self.tables = tables
        self.spawn = spawn
        self.ended = ended
        self._finishing: set[int] = set()  # games whose end is being saved again (finish_later)
        self.outbox = Outbox(store, delivery)
        deadlines.on_expire = self.expire

    def live(self, game_id: int) -> bool:
        """May this process still drive the game (its hold has not run out)? Always, on a database
        of one process."""
        return self.delivery.live(game_id)

    # ------------------------------------------------------------------ one action

    async def submit(self, table: Table, seat: Seat, action: Action, *, source: ActionSource, actor: str,
                     inbound_key: str | None = None, calls: Sequence[CallLog] = (),
                     notes: Sequence[Outgoing] = ()) -> Reply:
        """Apply one action: validate, log durably with the messages it sends, then send them.
        Everyone comes through here. ``notes``: messages to the channel before the turn's events."""
        async with table.lock:
            if table.over:
                raise Refused("That game is over.")
            for attempt in range(2):
                try:
                    state, events = table.engine.apply(table.state, seat, action)
                except IllegalAction as exc:
                    raise Refused(str(exc)) from None
                except Exception as exc:  # an engine bug: the move changes nothing, the table goes on
                    log.error("game %s: the engine failed on a %s move: %s", table.game_id, action.kind,
                              type(exc).__name__)
                    raise Refused("That move cannot be played.") from None
                planned = self.outbox.plan(table, events, notes)
                try:
                    fresh = await self.store.append_turn(
                        table.game_id,
                        action=ActionRecord(seat, action.kind, list(action.value), source, actor),
                        events=[EventRecord.of(e) for e in events],
                        inbound_key=inbound_key,
                        agent_calls=[_call_record(table.game_id, seat, c) for c in calls],
                        outbox=self.outbox.records(planned),
                        seq=table.seq + 1,
                    )
                    break
                except LogAhead:
                    # A turn of this table committed although its answer was lost: play the log's
                    # actions first. A member's move is then tried on the new state; an AI seat
                    # decides again (its choice was made for the old one).
                    self.outbox.drop(planned)
                    await self.catch_up(table)
                    if table.over:
                        raise Refused("That game is over.") from None
                    if attempt or source is not ActionSource.HUMAN:
                        raise Refused("The game moved on meanwhile; that move was not played.") from None
                except BaseException:
                    self.outbox.drop(planned)  # not logged: these messages never exist
                    raise
            if not fresh:
                self.outbox.drop(planned)
                return Reply(DUPLICATE, duplicate=True)
            table.seq += 1
            table.actions.append((seat, action))
            table.lines.append(table.seq)
            table.movers.append((source.value, actor))
            self.observer.action(table.engine.id, source.value)
            for c in calls:
                self.observer.ai_move(c.agent_spec, c.operation, c.latency_ms / 1000, c.fallback)
            await self._applied(table, seat, state, events, planned)
        if not table.over:
            await self.advance(table)
        return Reply("Got it.")

    async def _applied(self, table: Table[S, C], seat: Seat, state: S, events: Sequence[Event],
                       planned: Sequence[Planned]) -> None:
        """A logged action takes effect in memory and its messages go out (holds table.lock)."""
        table.state = state
        table.prompted.discard(seat)
        if self.deadlines.has(table.game_id, seat):
            try:
                await self.deadlines.clear(table.game_id, seat)
            except Exception as exc:  # the turn is logged: a deadline left pending fires on a seat that acted
                log.warning("game %s: a deadline was not cleared after a turn: %s", table.game_id,
                            type(exc).__name__)
        await self.outbox.send(table, planned)
        if table.engine.result(table.state) is not None:
            await self.finish(table, events)

    async def catch_up(self, table: Table) -> None:
        """Play in memory the actions the log holds past this table's copy (holds table.lock). Their
        messages were logged with them and are still unsent: the outbox's next round sends them."""
        glog = await self.store.load_game(table.game_id)
        for row in glog.actions:
            if row.seq <= table.seq or table.over:
                continue
            action = Action(row.kind, tuple(row.value))
            state, events = table.engine.apply(table.state, row.seat, action)
            table.seq = row.seq
            table.actions.append((row.seat, action))
            table.lines.append(row.seq)
            table.movers.append((str(row.source), row.actor))
            log.warning("game %s: action %s was logged although its commit answer was lost; caught up",
                        table.game_id, row.seq)
            await self._applied(table, row.seat, state, events, ())

    # ------------------------------------------------------------------ moves from people

    async def act(self, cmd: Command, a: ActArgs) -> Reply:
        table = self.tables.get(a.game_id)
        if table is None or not intake.reaches(cmd, table.tenant):
            row = await self.store.game(a.game_id)
            if row is None or not intake.reaches(cmd, row.tenant):
                raise Refused("There is no such game.")
            raise Refused("That game has not started." if row.status == GameStatus.LOBBY else "That game is over.")
        seat = table.seat_of(cmd.user)
        if seat is None:
            raise Refused("You are not playing in this game.")
        if seat.seat != a.seat:
            raise Refused("That button belongs to another player's seat.")
        spec = table.engine.legal(table.state, seat.seat)
        if isinstance(spec, Text) and any(len(v) > spec.max_chars for v in a.value):
            raise Refused(f"Keep each answer within {spec.max_chars} characters.")
        return await self.submit(table, seat.seat, Action(a.kind, a.value), source=ActionSource.HUMAN,
                                 actor=cmd.user.key, inbound_key=_key(cmd))

    async def act_by_text(self, cmd: Command, a: ReplyTextArgs) -> Reply:
        """A DM reply: find the one game where this user owes a text answer."""
        candidates: list[tuple[Table, SeatInfo, Text]] = []
        for t in self.tables.values():
            s = t.seat_of(cmd.user)
            if s is not None and intake.reaches(cmd, t.tenant) and s.seat in t.acting():
                spec = t.engine.legal(t.state, s.seat)
                if isinstance(spec, Text):
                    candidates.append((t, s, spec))
        if not candidates:
            raise Refused("You have no hint, clue or description to give right now.")
        if len(candidates) > 1:
            raise Refused("You owe answers in several games; use the button in the game's message instead.")
        table, seat, spec = candidates[0]
        text = a.text
        parts = [p.strip() for p in text.replace("\n", ";").split(";")] if len(spec.fields) > 1 else [text]
        if len(parts) != len(spec.fields):
            raise Refused(f"Send {len(spec.fields)} answers separated by ';' ({', '.join(spec.fields)}).")
        if any(len(p) > spec.max_chars for p in parts):
            raise Refused(f"Keep each answer within {spec.max_chars} characters.")
        return await self.submit(table, seat.seat, Action(spec.kind, tuple(parts)), source=ActionSource.HUMAN,
                                 actor=cmd.user.key, inbound_key=_key(cmd))

    async def show(self, cmd: Command, a: TableRef) -> Reply:
        """The caller's private view: their secrets, the story so far and their prompt, if they owe a move."""
        table = self.tables.get(a.game_id or 0)
        if table is None or not intake.reaches(cmd, table.tenant):
            raise Refused("That game is not running.")
        info = table.seat_of(cmd.user)
        if info is None:
            raise Refused("You are not playing in this game.")
        digest = render.private_digest(table, info.seat, history=True)
        outgoing = None
        if info.seat in table.acting():
            spec = table.engine.legal(table.state, info.seat)
            if spec is not None:
                outgoing = render.prompt_message(table, info.seat, spec, text_replies=False)
        return Reply(digest.text, outgoing=outgoing)

    # ------------------------------------------------------------------ whose turn

    async def advance(self, table: Table, *, since: float | None = None) -> None:
        """Prompt humans who now owe a move, and make sure the AI driver is running.

        ``since``: a resumed table's prompts may have been sent already, by the holder before this
        one (or before a restart), no earlier than that instant (Unix seconds); see `prompt`."""
        if table.over or not self.live(table.game_id):
            return
        acting = table.engine.to_act(table.state)
        table.prompted &= set(acting)
        for s in sorted(acting):
            info = table.seats[s]
            if info.is_ai or s in table.prompted:
                continue
            table.prompted.add(s)
            await self.prompt(table, info, since=since)
            try:
                await self.deadlines.schedule(table.game_id, s, table.deadline_s)
            except Exception as exc:  # the supervisor's next round gives the seat its deadline
                log.warning("game %s: a deadline could not be stored: %s", table.game_id, type(exc).__name__)
        if any(table.seats[s].is_ai for s in acting) and (table.driver is None or table.driver.done()):
            table.driver = self.spawn(self.drive_ai(table))

    async def prompt(self, table: Table, info: SeatInfo, *, since: float | None = None) -> None:
        """Ask a human for their move (privately) and say the table waits for them.

        ``since``: set when the prompt is sent again (a resumed table), the instant it was first
        due. A platform whose API takes no idempotency key then looks for the earlier copy before
        sending; a first prompt (None) stays one call."""
        spec = table.engine.legal(table.state, info.seat)
        if spec is None:
            return
        m = render.prompt_message(table, info.seat, spec, text_replies=self.delivery.text_replies(table.platform))
        # Keyed by the state it is about: the prompt a new holder sends for the same state after a
        # takeover has the key of the one a paused holder may still have had on its way.
        key = f"{table.game_id}:{table.seq}:{info.seat}"
        await self.delivery.private(table, info, replace(m, key=f"{key}:prompt", maybe_sent_since=since))
        await self.delivery.public(table, Outgoing(f"Waiting for {info.name}.", user_text=True, key=f"{key}:waiting",
                                                   maybe_sent_since=since), waiting=True)

    async def drive_ai(self, table: Table) -> None:
        """Play AI seats one at a time, lowest seat first, so a replayed game takes the same path.

        A failing model, agent or store write is retried with backoff; after that the rules'
        neutral action (or the fallback chain's answer) stands in, so the table never waits on
        nobody. Only a failing agent is replaced so: when logging the agent's move failed (the
        database), the last try plays the agent's move again, and a table still unlogged is left
        to the supervisor's next round; the log never holds a move the agent did not choose
        because the database hiccuped."""
        while not table.over and self.live(table.game_id):
            ai = sorted(s for s in table.engine.to_act(table.state) if table.seats[s].is_ai)
            if not ai:
                return
            seat = ai[0]
            state = table.state
            delay = AI_BACKOFF_S
            store_failed = False
            for attempt in range(AI_ATTEMPTS):
                try:
                    await self._ai_turn(table, seat, last_try=attempt == AI_ATTEMPTS - 1 and not store_failed)
                    break
                except _NotLogged as exc:  # the move was chosen; the database did not take it
                    store_failed = True
                    log.warning("AI turn of seat %s in game %s was not logged (try %s): %s", seat, table.game_id,
                                attempt + 1, type(exc.__cause__).__name__)
                except Refused:
                    if table.state is not state or table.over:
                        break  # a human moved meanwhile; decide again on the new state
                    log.warning("AI seat %s of game %s was refused (try %s)", seat, table.game_id, attempt + 1)
                except Exception as exc:  # storage or inference trouble: wait and try again
                    log.warning("AI turn of seat %s in game %s failed (try %s): %s", seat, table.game_id,
                                attempt + 1, type(exc).__name__)
                await asyncio.sleep(delay)
                delay *= 2
            else:
                # The database is away (or the agent keeps failing): the table is driven again a
                # little later, again and again, not left for the supervisor's next round.
                log.error("AI seat %s of game %s could not play; tried again in %.0f s", seat, table.game_id,
                          AI_AGAIN_S)
                self.spawn(self._drive_again(table))
                return

    async def _drive_again(self, table: Table) -> None:
        await asyncio.sleep(AI_AGAIN_S)
        if not table.over and self.tables.get(table.game_id) is table and (table.driver is None or table.driver.done()):
            await self.advance(table)

    def agent_for(self, info: SeatInfo) -> str:
        """The agent name that plays an AI seat: its own when the operator still offers it, else the
        default. A name from the log is never built unless it is a configured choice."""
        if info.agent and info.agent in self.settings.agent_list:
            return info.agent
        return self.settings.default_agent

    async def _ai_turn(self, table: Table, seat: Seat, *, last_try: bool) -> None:
        state = table.state
        info = table.seats[seat]
        outcome: Outcome | None = None
        if not last_try:
            outcome = await self.runner.decide(table.engine, state, seat, game_id=table.game_id,
                                               spec=self.agent_for(info), seed=seat_seed(table, seat))
        else:
            rules = table.engine.timeout_action(state, seat)
            if rules is not None:
                # The move is logged with its decision row like every AI move (``provenance``):
                # the rules' neutral action played for the seat's agent, which could not.
                legal = table.engine.legal(state, seat)
                role = role_of(table.engine.observe(state, seat), fill_spec(legal)) if legal is not None else rules.kind
                decided = decision_row(self.agent_for(info), role=role, source=Source.RULES, timeout=True, played="rules")
                outcome = Outcome(rules, ActionSource.TIMEOUT, "rules", (decided,))
            else:
                outcome = await self.runner.decide(table.engine, state, seat, game_id=table.game_id,
                                                   spec="random", seed=seat_seed(table, seat))
        if table.state is not state or table.over:
            return  # a human moved meanwhile; the loop decides again on the new state
        try:
            await self.submit(table, seat, outcome.action, source=outcome.source, actor=outcome.actor,
                              calls=outcome.calls)
        except (Refused, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise _NotLogged from exc

    # ------------------------------------------------------------------ deadlines

    async def expire(self, game_id: int, seat: Seat) -> None:
        table = self.tables.get(game_id)
        if table is None or table.over or seat not in table.engine.to_act(table.state):
            return
        info = table.seats[seat]
        action = table.engine.timeout_action(table.state, seat) if self.settings.deadline_policy == "abstain" else None
        note = Outgoing(f"{info.name} ran out of time.", user_text=True)
        if action is not None:
            outcome = Outcome(action, ActionSource.TIMEOUT, "deadline", ())
        else:
            decided = await self.runner.decide(table.engine, table.state, seat, game_id=table.game_id,
                                               spec=self.settings.default_agent, seed=seat_seed(table, seat))
            outcome = Outcome(decided.action, ActionSource.TAKEOVER, decided.actor, decided.calls)
        try:
            await self.submit(table, seat, outcome.action, source=outcome.source, actor=outcome.actor,
                              calls=outcome.calls, notes=[note])
        except Refused:
            log.info("deadline action for seat %s of game %s refused", seat, game_id)

    # ------------------------------------------------------------------ the end

    async def finish(self, table: Table, last: Sequence[Event] = ()) -> None:
        """Save the result, announce it once, and let the table go from memory. Holds table.lock.
        ``last``: the final events, already posted; winners they name are not named twice.

        A database error (or a hold that ran out while the database was away) leaves the table
        over in memory but not let go: `finish_later` tries again until it goes through or the
        table changed hands (its new holder finishes it when it resumes it), and the supervisor's
        rounds look for such tables too. The game never stays running for nobody."""
        result = table.engine.result(table.state)
        assert result is not None
        table.over = True
        try:
            await self._save_end(table, result.to_json())
        except Exception as exc:
            log.warning("game %s: its end was not saved yet (%s); tried again", table.game_id, type(exc).__name__)
            if table.game_id not in self._finishing:
                self._finishing.add(table.game_id)
                self.spawn(self.finish_later(table))
            return
        # The end's own transaction cancelled the stored deadlines (``finish_game``); only the
        # timers are left, and a write of its own here would cost the single writer a commit per game.
        self.deadlines.cancel(table.game_id)
        self.runner.forget(table.game_id)
        if await self.store.mark_announced(table.game_id):
            told = "\n".join(table.engine.text(e, table.names) for e in last if e.audience.is_public)
            await self.delivery.public(table, Outgoing(render.end_text(table.game_id, result.to_json(), table.names,
                                                                       told), title=f"Game #{table.game_id} is over",
                                                       user_text=True, key=f"{table.game_id}:end"))
        await self.ended(table, result)

    async def _save_end(self, table: Table, result: dict[str, Any]) -> None:
        try:
            await self.store.finish_game(table.game_id, status=GameStatus.FINISHED, result=result)
        except Exception:
            # Saved already, by this holder (a COMMIT whose answer was lost, or an earlier try)?
            row = await self.store.game(table.game_id)
            if row is None or row.status != GameStatus.FINISHED:
                raise

    def unfinished(self, table: Table) -> bool:
        """A table whose game ended in memory and whose end is not saved yet (see `finish`)."""
        return table.over and self.tables.get(table.game_id) is table and table.engine.result(table.state) is not None

    async def finish_later(self, table: Table) -> None:
        """Try `finish` again, with growing pauses, while the table is still this process's."""
        pause = FINISH_RETRY_S
        try:
            while self.unfinished(table):
                await asyncio.sleep(pause)
                pause = min(pause * 2, FINISH_RETRY_MAX_S)
                if not self.live(table.game_id) or table.lock.locked():
                    continue  # the hold comes back (renewed) or moves (the table is let go); or a turn runs
                async with table.lock:
                    if self.unfinished(table):
                        self._finishing.discard(table.game_id)  # a failed try spawns the next one
                        await self.finish(table)
                        return
        except BaseException:
            self._finishing.discard(table.game_id)
            raise
        self._finishing.discard(table.game_id)  # finished by another path, or let go

    async def supervise_once(self) -> int:
        """Repair tables where a seat owes a move but nothing will make it: a human never prompted,
        or AI seats with no driver running. Returns how many tables were nudged."""
        nudged = 0
        for i, table in enumerate(list(self.tables.values())):
            if i and i % SUPERVISE_BATCH == 0:
                await asyncio.sleep(0)
            if self.tables.get(table.game_id) is not table:
                continue  # it left this process during the round (taken over, handed back, ended)
            if self.unfinished(table) and table.game_id not in self._finishing and not table.lock.locked() \
                    and self.live(table.game_id):
                async with table.lock:  # its end was never saved, and no try is pending (see finish)
                    if self.unfinished(table):
                        await self.finish(table)
                continue
            if table.over or table.lock.locked() or not self.live(table.game_id):
                continue
            acting = table.engine.to_act(table.state)
            for s in sorted(acting):
                # A prompted human whose deadline was never stored or armed (a database error
                # at the time): the seat would wait forever; it gets a deadline now.
                if not table.seats[s].is_ai and s in table.prompted and not self.deadlines.has(table.game_id, s):
                    await self.deadlines.schedule(table.game_id, s, table.deadline_s)
            stalled_human = any(not table.seats[s].is_ai and s not in table.prompted for s in acting)
            stalled_ai = any(table.seats[s].is_ai for s in acting) and (table.driver is None or table.driver.done())
            if stalled_human or stalled_ai:
                log.warning("game %s had nobody to act; repaired", table.game_id)
                await self.advance(table)
                nudged += 1
        return nudged


class _NotLogged(Exception):
    """An AI seat's chosen move could not be logged (the database, or the table's hold)."""


def _key(cmd: Command) -> str | None:
    return f"{cmd.place.platform}:{cmd.inbound_id}" if cmd.inbound_id else None


def _call_record(game_id: int, seat: Seat, c: CallLog) -> AgentCallRecord:
    return AgentCallRecord(
        game_id=game_id, seat=seat, agent_spec=c.agent_spec, model_id=c.model_id, operation=AgentOperation(c.operation),
        prompt=c.prompt, raw_output=c.raw_output, label_probs=c.label_probs, latency_ms=c.latency_ms,
        retries=c.retries, fallback=c.fallback, error=c.error,
    )

"""AgentRunner: asks an AI seat for its action with a timeout, bounded re-asks and a fallback.

The game never stalls on a seat: a slow, failing or stubborn agent is replaced for
that turn by the fallback agent, then by the random player, which keeps drawing until
the rules accept an answer, and only then by the rules' timeout action.

Every attempt is kept for the agent-call log, truthfully: each row carries its own
latency (the runner's own rows only the time no agent row accounts for) and the
attempt it belongs to; the move's total time is ``Outcome.latency_ms``, recorded once.
A re-ask after the engine refused an answer continues the attempt count (the agent
draws with a new seed) and carries the refusal; an answer identical to one already
refused is not sent to the engine again. Log lines name the agent and the kind of
failure only: refusal texts can quote a secret word, so they go to the call log, never
to a log line.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from games.base import Action, ActionSpec, C, Game, IllegalAction, Observation, S, Seat
from games.labels import fill_spec
from models.agents.base import CallLog, Check, Player, Source
from models.agents.provenance import decision_row, role_of
from models.agents.random_agent import RandomAgent
from models.types import routed_by
from storage.tables import ActionSource

log = logging.getLogger(__name__)

AgentFactory = Callable[[str, int], Player]
"""Builds a player from a configured agent name (``random``, ``llm:default``...) and a seed; raises ValueError
(``UnknownAgent``) for a name that is not configured."""

RANDOM = "random"


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    source: ActionSource
    actor: str  # the agent name that produced the action
    calls: tuple[CallLog, ...]
    latency_ms: float = 0.0  # the whole move, from the first ask to the action (each call row has its own part)
    deadline_hit: bool = False  # the move reached a wall-clock deadline; what played instead is in its decision row


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def _next_attempt(calls: Sequence[CallLog], attempt: int) -> int:
    """The attempt after these calls: agents number their own calls, at least one per answer."""
    return max([attempt, *(c.retries + 1 for c in calls)])


class AgentRunner:
    def __init__(
        self,
        factory: AgentFactory,
        *,
        timeout_s: float = 60.0,
        retries: int = 3,
        fallback_spec: str = RANDOM,
    ) -> None:
        self.factory = factory
        self.timeout_s = timeout_s
        self.retries = retries
        self.fallback_spec = fallback_spec
        self._players: dict[tuple[int, int, str], Player] = {}

    def player(self, game_id: int, seat: Seat, spec: str, seed: int) -> Player:
        key = (game_id, seat, spec)
        if key not in self._players:
            self._players[key] = self.factory(spec, seed)
        return self._players[key]

    def forget(self, game_id: int) -> None:
        for key in [k for k in self._players if k[0] == game_id]:
            del self._players[key]

    async def decide(self, game: Game[S, C], state: S, seat: Seat, *, game_id: int, spec: str, seed: int) -> Outcome:
        # Every model request of this decision names the table: a pool of workers keeps one game on
        # one worker (its cached prefix) and spreads games over the pool.
        with routed_by(f"game:{game_id}"):
            out = await self._decide(game, state, seat, game_id=game_id, spec=spec, seed=seed)
        # The kind of move and where it came from, never its words: a clue or a guess can name a secret.
        log.debug("game %s seat %s: %s played a %s move (%s, %.0f ms, %d call(s))", game_id, seat, out.actor,
                  out.action.kind, out.source.value, out.latency_ms, len(out.calls))
        return out

    async def _decide(self, game: Game[S, C], state: S, seat: Seat, *, game_id: int, spec: str, seed: int) -> Outcome:
        started = time.perf_counter()
        calls: list[CallLog] = []
        raw_legal, obs = game.legal(state, seat), game.observe(state, seat)
        if raw_legal is None:
            raise IllegalAction("this seat has nothing to do now")
        legal = fill_spec(raw_legal)  # agents read "Player k", never the engine's seat tokens
        role = role_of(obs, legal)

        def check(action: Action) -> str | None:
            # The engines are pure: trying an action on the current state changes nothing.
            try:
                game.apply(state, seat, action)
            except IllegalAction as exc:
                return str(exc)
            return None

        try:
            player: Player | None = self.player(game_id, seat, spec, seed)
        except Exception as exc:  # a name that no longer builds (e.g. removed from the settings)
            calls.append(CallLog(spec, error=f"could not build agent: {type(exc).__name__}", fallback=True))
            log.warning("agent %s could not be built (%s); the fallback plays", spec, type(exc).__name__)
            player = None
        attempt = 0
        timed_out = False
        if player is not None:
            feedback: str | None = None
            refused: set[Action] = set()
            for _ in range(self.retries + 1):
                asked = time.perf_counter()
                try:
                    decision = await asyncio.wait_for(
                        player.act(obs, legal, feedback=feedback, attempt=attempt, check=check),
                        self.timeout_s,
                    )
                except TimeoutError:
                    calls.append(CallLog(spec, error=f"timed out after {self.timeout_s:g} s", retries=attempt, latency_ms=_ms(asked)))
                    log.warning("agent %s timed out after %g s; the fallback plays", spec, self.timeout_s)
                    timed_out = True
                    break  # a slow worker will not get faster by asking again this turn
                except Exception as exc:  # the worker is down or the agent crashed or gave up: fall back
                    inner: tuple[CallLog, ...] = tuple(getattr(exc, "calls", ()))
                    calls.extend(inner)
                    own = max(0.0, _ms(asked) - sum(c.latency_ms for c in inner))
                    attempt = _next_attempt(inner, attempt)
                    calls.append(CallLog(spec, error=f"{type(exc).__name__}: {exc}", retries=max(0, attempt - 1), latency_ms=own))
                    log.warning("agent %s failed (%s); the fallback plays", spec, type(exc).__name__)
                    break
                calls.extend(decision.calls)
                own = max(0.0, _ms(asked) - sum(c.latency_ms for c in decision.calls))
                attempt = _next_attempt(decision.calls, attempt + 1 if not decision.calls else attempt)
                if decision.action in refused:
                    # Asked again, it said the same: that answer is not tried again; the next ask draws anew.
                    calls.append(CallLog(spec, error="repeated a refused answer", retries=attempt - 1, latency_ms=own))
                    continue
                reason = check(decision.action)
                if reason is not None:
                    refused.add(decision.action)
                    feedback = reason
                    calls.append(CallLog(spec, error=f"illegal: {reason}", retries=attempt - 1, latency_ms=own))
                    continue
                calls.append(decision_row(spec, role=role, source=decision.source, model_share=decision.model_share,
                                          timeout=decision.deadline_hit, attempt=max(0, attempt - 1),
                                          played=f"{spec} ({decision.source.value})" if decision.deadline_hit else spec))
                return Outcome(decision.action, ActionSource.AI, spec, tuple(calls), _ms(started), decision.deadline_hit)
        out = await self._fallback(game, state, seat, obs, legal, game_id=game_id, seed=seed, calls=calls, check=check,
                                   attempt=attempt, started=started)
        source = Source.FALLBACK if out.source is ActionSource.FALLBACK else Source.RULES
        row = decision_row(spec, role=role, source=source, timeout=timed_out, played=out.actor, attempt=attempt)
        return replace(out, calls=(*out.calls, row), deadline_hit=timed_out)

    async def _fallback(
        self, game: Game[S, C], state: S, seat: Seat, obs: Observation, legal: ActionSpec, *, game_id: int, seed: int,
        calls: list[CallLog], check: Check, attempt: int, started: float,
    ) -> Outcome:
        """The fallback agent, then the random player (which draws until the rules accept), then the timeout action."""
        for spec in dict.fromkeys((self.fallback_spec, RANDOM)):
            try:
                fallback = RandomAgent(RANDOM, seed) if spec == RANDOM else self.player(game_id, seat, spec, seed)
                for _ in range(3):
                    decision = await asyncio.wait_for(
                        fallback.act(obs, legal, attempt=attempt, check=check),
                        self.timeout_s,
                    )
                    calls.extend(replace(c, fallback=True) for c in decision.calls)
                    attempt = _next_attempt(decision.calls, attempt + 1 if not decision.calls else attempt)
                    reason = check(decision.action)
                    if reason is None:
                        return Outcome(decision.action, ActionSource.FALLBACK, spec, tuple(calls), _ms(started))
                    calls.append(CallLog(spec, error=f"illegal: {reason}", retries=attempt - 1, fallback=True))
            except Exception as exc:  # the fallback itself failed: the next one in line plays
                log.warning("fallback agent %s failed (%s)", spec, type(exc).__name__)
                calls.append(CallLog(spec, error=f"fallback failed: {type(exc).__name__}: {exc}", fallback=True))
        action = game.timeout_action(state, seat)
        if action is None:
            raise RuntimeError(f"{game.id}: no legal action found for AI seat {seat}")
        return Outcome(action, ActionSource.TIMEOUT, "rules", tuple(calls), _ms(started))

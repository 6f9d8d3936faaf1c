"""AgentRunner: asks an AI seat for its action with a timeout, bounded retries and a fallback.

The game never stalls on a seat: a slow, failing or stubborn agent is replaced for
that turn by the fallback agent, and if even that finds nothing legal, by the
rules' timeout action. Every attempt is kept for the agent-call log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from games.base import Action, Game, IllegalAction, Seat
from models.agents.base import CallLog, Player
from models.agents.random_agent import RandomAgent
from storage.tables import ActionSource

log = logging.getLogger(__name__)

AgentFactory = Callable[[str, int], Player]
"""Builds a player from a spec string (``random``, ``llm:default``...) and a seed; raises ValueError on a bad spec."""


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    source: ActionSource
    actor: str  # the agent spec that produced the action
    calls: tuple[CallLog, ...]


class AgentRunner:
    def __init__(
        self,
        factory: AgentFactory,
        *,
        timeout_s: float = 60.0,
        retries: int = 3,
        fallback_spec: str = "random",
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

    async def decide(self, game: Game, state: Any, seat: Seat, *, game_id: int, spec: str, seed: int) -> Outcome:
        calls: list[CallLog] = []
        feedback: str | None = None
        try:
            player = self.player(game_id, seat, spec, seed)
        except Exception as exc:  # a spec that no longer builds (e.g. model missing after restart)
            calls.append(CallLog(spec, error=f"could not build agent: {exc}", fallback=True))
            player = None
        if player is not None:
            for attempt in range(self.retries + 1):
                obs, legal = game.observe(state, seat), game.legal(state, seat)
                if legal is None:
                    raise IllegalAction("this seat has nothing to do now")
                started = time.perf_counter()
                try:
                    decision = await asyncio.wait_for(player.act(obs, legal, feedback=feedback), self.timeout_s)
                except TimeoutError:
                    calls.append(CallLog(spec, error=f"timed out after {self.timeout_s:g} s", retries=attempt,
                                         latency_ms=(time.perf_counter() - started) * 1000))
                    break  # a slow worker will not get faster by asking again this turn
                except Exception as exc:  # the worker is down or the agent crashed: fall back
                    # The type only: an agent's error may quote its prompt, secret included (issue 9.7).
                    log.warning("agent %s failed: %s", spec, type(exc).__name__)
                    calls.extend(replace(c, retries=attempt) for c in getattr(exc, "calls", ()))
                    calls.append(CallLog(spec, error=f"{type(exc).__name__}: {exc}", retries=attempt,
                                         latency_ms=(time.perf_counter() - started) * 1000))
                    break
                calls.extend(replace(c, retries=attempt) for c in decision.calls)
                try:
                    game.apply(state, seat, decision.action)
                except IllegalAction as exc:
                    feedback = str(exc)
                    calls.append(CallLog(spec, error=f"illegal: {feedback}", retries=attempt))
                    continue
                return Outcome(decision.action, ActionSource.AI, spec, tuple(calls))
        return await self._fallback(game, state, seat, game_id=game_id, seed=seed, calls=calls)

    async def _fallback(self, game: Game, state: Any, seat: Seat, *, game_id: int, seed: int, calls: list[CallLog]) -> Outcome:
        """The fallback agent, then the random player, then the rules' timeout action."""
        for spec in dict.fromkeys((self.fallback_spec, "random")):
            try:
                fallback = self.player(game_id, seat, spec, seed) if spec != "random" else RandomAgent("random", seed)
                feedback = None
                for _ in range(50 if spec == "random" else 3):
                    decision = await asyncio.wait_for(
                        fallback.act(game.observe(state, seat), game.legal(state, seat), feedback=feedback), self.timeout_s)
                    try:
                        game.apply(state, seat, decision.action)
                    except IllegalAction as exc:
                        feedback = str(exc)
                        continue
                    calls.extend(replace(c, fallback=True) for c in decision.calls)
                    return Outcome(decision.action, ActionSource.FALLBACK, spec, tuple(calls))
            except Exception as exc:  # the fallback itself failed: the next one in line plays
                log.warning("fallback agent %s failed: %s", spec, type(exc).__name__)
                calls.append(CallLog(spec, error=f"fallback failed: {type(exc).__name__}: {exc}", fallback=True))
        action = game.timeout_action(state, seat)
        if action is None:
            raise RuntimeError(f"{game.id}: no legal action found for AI seat {seat}")
        return Outcome(action, ActionSource.TIMEOUT, "rules", tuple(calls))

"""No log record, at any level, carries a secret of any seat.

Every game and variant is played through the TableService by AI seats (the random player,
plus the real embedding baseline where its vectors are bundled) while every log record of
every logger is captured at DEBUG (one seat's agent fails with its observation in the error); each record's message, arguments and exception text are
checked for every secret the engine dealt (``Game.secrets``) as whole words.
"""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

import games
from bot.core.messages import Place
from games.base import ActionSpec, Observation, contains_word
from models.agents import AgentEntry, AgentKind, AgentRegistry
from models.agents.base import Check, Decision
from tests.bot.core.conftest import make_harness

CASES = [(g, v) for g, engine in sorted(games.registry().items()) for v in engine.variants]


def _record_text(r: logging.LogRecord) -> str:
    parts = [r.getMessage()]
    if r.exc_info and r.exc_info[1] is not None:
        parts.append(logging.Formatter().formatException(r.exc_info))
    if r.exc_text:
        parts.append(r.exc_text)
    return "\n".join(parts)


class Leaky:
    """An agent that fails with its whole observation (its secrets) in the exception text, as a model
    refusal quoting the prompt did ("do not use the secret word 'stool'")."""

    spec = "llm:leaky"

    async def act(self, obs: Observation, spec: ActionSpec, *, feedback: str | None = None, attempt: int = 0,
                  check: Check | None = None) -> Decision:
        raise RuntimeError(f"refused: {json.dumps(obs.to_json())} / {feedback}")


@pytest.mark.parametrize(("game", "variant"), CASES)
async def test_no_log_record_carries_a_secret(tmp_path, caplog: pytest.LogCaptureFixture, game: str,
                                              variant: str) -> None:
    caplog.set_level(logging.DEBUG)
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/l.db", ai_timeout_s=5,
                           agent_choices="random,llm:leaky")
    registry = h.service.agents
    assert isinstance(registry, AgentRegistry)
    registry.define(AgentEntry("llm:leaky", AgentKind.LLM, "leaky"))  # an operator-configured entry
    registry.register(AgentKind.LLM, lambda entry, seed: Leaky())
    try:
        engine = games.get(game)
        cfg = engine.make_config(variant)
        lo, _ = engine.seat_range(cfg)
        secrets: set[str] = set()
        for seed in (1, 2):
            gid = await h.service.ai_tables.open_ai_table(tenant="t", place=Place("memory", f"{game}-{variant}-{seed}"),
                                                game=game, variant=variant, options={}, agents=["llm:leaky", *["random"] * (lo - 1)],
                                                seed=seed)
            table = h.service.tables[gid]
            state = engine.new(table.cfg, lo, seed)[0]
            secrets |= {s.value for s in engine.secrets(state)}
            assert await asyncio.wait_for(h.service.ai_tables.wait_finished(gid), 120) is not None
        assert secrets, "every game deals a secret"
        assert any("agent llm:leaky failed" in r.getMessage() for r in caplog.records), "the failure was logged"
        for r in caplog.records:
            text = _record_text(r)
            for s in secrets:
                assert not contains_word(text, s), (r.name, s)
    finally:
        await h.close()

"""The startup point builds the agent registry from the settings (the operator's named entries included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.app import build_app
from bot.settings import Settings
from models.agents.registry import UnknownAgent


async def test_operator_entries_are_offered_and_free_specs_are_not(tmp_path: Path) -> None:
    agents = {"llm:big": {"model": "openai:http://127.0.0.1:9/v1#big", "api_key": "k-123"}}
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/h.db", agents=json.dumps(agents),
                        agent_choices="random,llm:big", ops_port=None)
    app = await build_app(settings)
    try:
        assert app.service.agent_choices() == ["random", "llm:big"]
        assert app.service.agents("llm:big", 1) is not None  # built from the configured entry (no call made)
        with pytest.raises(UnknownAgent):
            app.service.agents("llm:openai:http://attacker/v1#m", 1)
    finally:
        await app.aclose()


async def test_a_malformed_entry_stops_the_bot_at_start(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/h.db", agents='{"llm:x": {"modle": "y"}}')
    with pytest.raises(ValueError, match="unknown field"):
        await build_app(settings)

"""Where moves came from: decision rows written by the runner, tallied per agent and role, shown by `stats`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from typer.testing import CliRunner

from bot.cli import app
from models.agents.base import Source
from models.agents.propose import model_share
from models.agents.provenance import decision_row, render, tally
from storage.store import AgentCallRecord, Store
from storage.tables import AgentOperation
from tests.research.builders import decrypto_benchmark
from tests.research.test_stats_cli import SURVIVED, write


def test_model_share_is_the_models_part_of_the_winning_margin() -> None:
    assert model_share([0.5, 0.5], [0.9, 0.1], 1.0, 0) == 0.0  # the model could not separate them
    assert model_share([0.9, 0.1], [0.5, 0.5], 1.0, 0) == 1.0  # the evidence could not
    assert 0.4 < model_share([0.9, 0.1], [0.9, 0.1], 1.0, 0) < 0.6
    assert model_share([0.9, 0.1], [0.9, 0.1], 0.0, 0) == 1.0  # evidence weighed at 0


def test_tally_counts_sources_timeouts_and_share_per_agent_and_role() -> None:
    rows = [decision_row("llm:default", role="interceptor", source=Source.SPECIALIST),
            decision_row("llm:default", role="interceptor", source=Source.MODEL, model_share=0.8),
            decision_row("llm:default", role="interceptor", source=Source.FALLBACK, timeout=True, played="random"),
            decision_row("embed:minilm", role="encoder", source=Source.SPECIALIST)]
    t = tally([(r.agent_spec, r.prompt) for r in rows] + [("llm:default", {"messages": []})])
    eve = t[("llm:default", "interceptor")]
    assert (eve.moves, eve.timeouts, eve.sources) == (3, 1, {"specialist": 1, "model": 1, "fallback": 1})
    assert abs(eve.model_share - 0.8 / 3) < 1e-9
    text = render(t)
    assert "interceptor" in text and "33%" in text and "embed:minilm" in text


def test_stats_reports_the_decisions_of_logged_games(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/h.db"
    f = write(tmp_path / "g.jsonl", decrypto_benchmark(SURVIVED, seed=1))
    runner = CliRunner()
    assert runner.invoke(app, ["import", "record", str(f), "--database", db]).exit_code == 0

    async def log_calls() -> None:
        store = await Store.open(db)
        try:
            gid = (await store.games())[0].id
            rows = [decision_row("llm:default", role="decoder", source=s) for s in (Source.SPECIALIST, Source.MODEL)]
            await store.log_agent_calls([AgentCallRecord(1, r.agent_spec, AgentOperation(r.operation), prompt=r.prompt, game_id=gid)
                                         for r in rows])
        finally:
            await store.aclose()

    asyncio.run(log_calls())
    out = runner.invoke(app, ["stats", "--database", db, "--json"])
    assert out.exit_code == 0, out.output
    decisions = json.loads(out.output)["decisions"]
    assert decisions == [{"agent": "llm:default", "role": "decoder", "moves": 2, "sources": {"model": 1, "specialist": 1},
                          "timeouts": 0, "model_share": 0.0}]
    table = runner.invoke(app, ["stats", "--database", db]).output
    assert "AI decisions by source" in table and "decoder" in table

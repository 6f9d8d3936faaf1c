"""``hushtable eval decrypto-refine``: the encoder refines its hints against a model of Eve, with embedding agents
on MiniLM, through the real engine and agent runner."""

from __future__ import annotations

import asyncio

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.research.decrypto_refine import Agents, RefineError, parse_rounds, render, row_of, sweep
from models.embeddings import VocabIndex
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index
from tests.models.test_human_replay import registry_with

AGENTS = Agents("embed:minilm", "embed:minilm", "embed:minilm", "embed:minilm")


def test_refinement_keeps_hints_the_model_of_eve_would_intercept_out_of_play(index: VocabIndex) -> None:  # noqa: F811
    reg = registry_with(index)
    rows, played = asyncio.run(sweep(reg, AGENTS, [0, 4], 3, seed=2))
    plain, refined = played
    for a, b in zip(plain, refined, strict=True):
        # The same deal and the same encoder: the first turn's code and first hints agree at every budget.
        assert (a.log[0].code, a.log[0].first_hints) == (b.log[0].code, b.log[0].first_hints)
    for t in (t for g in plain for t in g.log):
        assert not t.refined and t.rounds == 0 and t.hints == t.first_hints
    logs = [t for g in refined for t in g.log]
    assert any(t.refined for t in logs), "the model of Eve intercepts some first hints"
    for t in logs:
        assert 0 <= t.rounds <= 4
        if not t.refined:
            assert t.rounds == 0 and t.hints == t.first_hints and t.converged
        else:
            assert t.converged or t.rounds == 4
            if t.converged:
                assert t.hints != t.first_hints
        if t.turn >= 2 and t.converged:
            # From the second turn the embedding interceptor reads a history and draws nothing: its copy (the model of
            # Eve) guessed what it guesses, so hints the copy does not intercept are never intercepted.
            assert t.interceptor_guess != t.code
    # A decoder on the encoder's embedding reads every hint (the margin constraint): refinement costs no token here.
    assert rows[0].miscommunications == rows[1].miscommunications == 0
    assert rows[1].refined == sum(t.refined for t in logs) and rows[1].rounds_used == sum(t.rounds for t in logs)
    again = row_of(4, refined, 0.0)
    assert again.interceptions == sum(g.interceptions for g in refined) and again.turns_played == len(logs)
    text = render(rows, AGENTS, games=3, seed=2, load_s=0.5)
    assert "model of Eve embed:minilm (the interceptor's own model, its own seed)" in text
    assert "no numbers" in text and "Fig. 10" in text and "core(s) available" in text


def test_rounds_are_checked() -> None:
    assert parse_rounds("0, 2,2,8") == [0, 2, 8]
    for bad in ("", "a", "-1", "17", "1.5"):
        with pytest.raises(RefineError, match="--rounds takes whole numbers from 0 to 16"):
            parse_rounds(bad)


def test_the_command_prints_the_table_and_refuses_bad_input() -> None:
    args = ["eval", "decrypto-refine", "--rounds", "0,2", "--games", "1", "--interceptor", "embed:minilm"]
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "encoder embed:minilm, decoder embed:minilm, interceptor embed:minilm" in out.output
    assert [ln.split()[0] for ln in out.output.splitlines() if ln.strip().startswith(("0 ", "2 "))] == ["0", "2"]
    bad = CliRunner().invoke(app, ["eval", "decrypto-refine", "--rounds", "x"])
    assert bad.exit_code == 2 and "--rounds takes whole numbers" in bad.output
    unknown = CliRunner().invoke(app, ["eval", "decrypto-refine", "--games", "1", "--eve-model", "nobody"])
    assert unknown.exit_code == 2 and "error:" in unknown.output and "Traceback" not in unknown.output

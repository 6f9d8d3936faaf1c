"""The Decrypto paper's human-replay protocol on games we record ourselves (never on the paper's games)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.research.human_replay import ReplaySeat, evaluate, load, record_game, render, replay_game
from games.record import parse
from models.agents import AgentRegistry
from models.agents.wiring import register_agents
from models.embeddings import VocabIndex
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index


def registry_with(index: VocabIndex) -> AgentRegistry:  # noqa: F811
    async def no_model(location: str, key: str | None) -> Any:
        raise AssertionError("no model in these games")

    reg = AgentRegistry()
    register_agents(reg, connect=no_model, embedder_for=lambda name: index.embedder)
    return reg


@pytest.fixture(scope="module")
def records_file(tmp_path_factory: pytest.TempPathFactory, index: VocabIndex) -> Path:  # noqa: F811
    """Four games: an embedding encoder and decoder against a random interceptor, every turn played."""
    reg = registry_with(index)
    lines: list[dict[str, Any]] = []
    for seed in range(4):
        lines += asyncio.run(record_game(reg, ["embed:minilm", "embed:minilm", "random"], seed, game_no=seed + 1))
    path = tmp_path_factory.mktemp("replay") / "games.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


def test_the_records_replay_as_played_and_the_agent_only_changes_its_own_seat(records_file: Path, index: VocabIndex) -> None:  # noqa: F811
    records = load(str(records_file))
    assert len(records) == 4 and all(len(r.actions) == 8 * 3 for r in records), "every turn was recorded"
    reg = registry_with(index)
    mine, original, per_seed = asyncio.run(evaluate(records, ReplaySeat.INTERCEPTOR, "embed:minilm", reg, seeds=2))
    # As recorded: an embedding decoder reading embedding hints never miscommunicates; a random Eve rarely intercepts.
    assert original.miscommunications.mean == 0 and original.games == 4
    for games in per_seed:
        for g, rec in zip(games, records, strict=True):
            for t in g.transcript:
                recorded = [a for s, a in rec.actions if s == 0][t.turn - 1]
                assert t.hints == tuple(recorded.value), "the encoder's recorded hints are replayed"
                assert t.decoder_guess == t.code, "the recorded decoder guess is replayed"
            assert not g.outlived, "every turn was recorded, so no replay runs out of moves"
    # The embedding interceptor reads the hint history: it intercepts more than the random one did.
    assert mine.interceptions.mean >= original.interceptions.mean
    assert set(mine.sources) == {"interceptor"} and mine.sources["interceptor"].moves > 0
    text = render(ReplaySeat.INTERCEPTOR, mine, original, transcript=per_seed[0])
    assert "o3-high" in text and "the records as played" in text and "the interceptor saw" in text
    # The paper's rows beside ours, its table named, every model of it with its standard error.
    assert "-- the paper (Decrypto Table 2, the expanded Table 1: its 10 human games, mean ± s.e. over 3 seeds" in text
    o3 = next(ln for ln in text.splitlines() if ln.startswith("o3-high"))
    assert o3.split() == ["o3-high", "6.67", "±", "0.33", "19.33", "±", "0.33", "6.67%", "±", "3.33%", "5.50", "±", "0.15"]
    assert "ExploreToM-8B" in text and "DeepSeek-R1-Dist-32B" in text
    assert next(ln for ln in text.splitlines() if ln.startswith("Human (original games)")).split()[3:] == ["11.00", "12.00", "40.00%", "6.90"]


def test_a_decoder_replay_keeps_the_recorded_interceptor(records_file: Path, index: VocabIndex) -> None:  # noqa: F811
    rec = load(str(records_file))[0]
    reg = registry_with(index)
    from bot.core.agents import AgentRunner

    g = asyncio.run(replay_game(rec, ReplaySeat.DECODER, "random", AgentRunner(reg), seed=3, game_no=7))
    recorded_eve = [a.value[0] for s, a in rec.actions if s == 2]
    assert [t.interceptor_guess for t in g.transcript] == recorded_eve[:len(g.transcript)]
    assert g.miscommunications >= 1, "a random decoder miscommunicates"


def test_the_command_prints_the_table_and_refuses_other_files(records_file: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["eval", "decrypto-human", str(records_file), "--role", "decoder", "--agent", "random",
                                   "--seeds", "2"])
    assert out.exit_code == 0, out.output
    assert "Model as Decoder" in out.output and "GPT-4o" in out.output and "random (4 games, 2 seeds)" in out.output
    other = tmp_path / "spy.jsonl"
    spy = CliRunner().invoke(app, ["sim", "spy", "--json"])
    other.write_text(spy.output)
    assert parse(other.read_text().splitlines()).game.id == "spy"
    bad = CliRunner().invoke(app, ["eval", "decrypto-human", str(other), "--role", "decoder"])
    assert bad.exit_code == 2 and "no three-seat Decrypto benchmark game" in bad.output
    zero = CliRunner().invoke(app, ["eval", "decrypto-human", "/dev/zero", "--role", "decoder"])  # once ran out of memory
    assert zero.exit_code == 2 and "not a regular file" in zero.output and "Traceback" not in zero.output, zero.output


def test_a_replay_that_outlives_its_record_is_not_a_team_win(records_file: Path, index: VocabIndex) -> None:  # noqa: F811
    """A record that stops after three turns (as a game ended by tokens does), replayed with a decoder that
    never miscommunicates: the replay ends with the record's last turn and, as the benchmark's loop counts it,
    is not a team win (the team wins only by surviving every turn)."""
    import dataclasses

    from bot.core.agents import AgentRunner
    from bot.research.human_replay import row_of

    full = load(str(records_file))
    short = [dataclasses.replace(r, actions=r.actions[:9]) for r in full]
    reg = registry_with(index)
    games = [asyncio.run(replay_game(r, ReplaySeat.DECODER, "embed:minilm", AgentRunner(reg), seed=5, game_no=i + 1))
             for i, r in enumerate(short)]
    for g in games:
        assert g.turns == 3 and g.miscommunications == 0
        if g.interceptions < 2:  # the engine did not end it: the record did
            assert g.outlived and not g.team_won
    survived = [g for g in games if g.outlived]
    assert survived, "a random interceptor rarely intercepts twice in three turns"
    row = row_of("embed:minilm", [games])
    assert row.outlived == len(survived)
    assert row.win_rate.mean == 0.0
    text = render(ReplaySeat.DECODER, row, row)
    assert f"outlived the record (ended at its last turn, as the benchmark's loop ends it: not a team win): {len(survived)} of 4" in text


FAIR = Path(__file__).parents[1] / "research" / "fixtures" / "decrypto_fair_small.json"


def _digits(guess: str) -> list[int]:
    """A transcript's guess ("1-2-4") as the loop's digits; "-" (no guess) matches no code."""
    digits = guess.replace("-", "")
    return [int(c) for c in digits] if digits.isdigit() else []


def fair_loop(turns: list[dict[str, Any]], eve: dict[int, str] | None = None, bob: dict[int, str] | None = None,
              max_turns: int = 8) -> tuple[int, int, bool, int]:
    """The benchmark's replay loop's counting, written here from its rules: each recorded turn in order, the
    recorded code and hints, the recorded guesses unless the agent's (by turn, from 1) replace them; a wrong
    decoder guess is a miscommunication, a right interceptor guess an interception; two of either ends the game
    (not a team win), surviving ``max_turns`` is the team's win, and running out of turns first is neither."""
    mis = inter = played = 0
    for t in turns:
        played += 1
        code = [int(c) for c in str(t["code"])]
        guess_bob = _digits(bob[played]) if bob and played in bob else list(t["guess_bob"])
        guess_eve = _digits(eve[played]) if eve and played in eve else list(t["guess_eve"])
        mis += guess_bob != code
        inter += guess_eve == code
        if mis == 2 or inter == 2:
            return mis, inter, False, played
        if played == max_turns:
            return mis, inter, True, played
    return mis, inter, False, played


def _guesses(g: Any, role: ReplaySeat) -> dict[int, str]:
    return {t.turn: (t.interceptor_guess if role is ReplaySeat.INTERCEPTOR else t.decoder_guess) for t in g.transcript}


@pytest.mark.parametrize("agent", ["random", "embed:minilm"])
@pytest.mark.parametrize("role", [ReplaySeat.INTERCEPTOR, ReplaySeat.DECODER])
def test_the_replay_counts_as_the_benchmarks_loop_on_the_same_guesses(agent: str, role: ReplaySeat,
                                                                      index: VocabIndex) -> None:  # noqa: F811
    """Table 1 as the benchmark counts it: the benchmark's human-play file (every recorded turn kept, the later
    turns its players went on with included), replayed with the agent in a seat, gives per game the tokens,
    the winner and the turns of the benchmark's loop re-run on the agent's guesses. ``HUSHTABLE_DECRYPTO_HUMAN_DATA``
    names the paper's file (its ten games) to check them too."""
    import os

    files = [FAIR] + ([Path(os.environ["HUSHTABLE_DECRYPTO_HUMAN_DATA"])]
                      if os.environ.get("HUSHTABLE_DECRYPTO_HUMAN_DATA") else [])
    for path in files:
        episodes = json.loads(path.read_text())
        records = load(str(path))
        assert len(records) == len(episodes)
        assert [len(r.actions) for r in records] == [3 * len(e["summarized_history"]) for e in episodes]
        mine, original, per_seed = asyncio.run(evaluate(records, role, agent, registry_with(index), seeds=2))
        for games in per_seed:
            for g, ep in zip(games, episodes, strict=True):
                turns = ep["summarized_history"]
                guesses = _guesses(g, role)
                want = fair_loop(turns, eve=guesses if role is ReplaySeat.INTERCEPTOR else None,
                                 bob=guesses if role is ReplaySeat.DECODER else None)
                assert (g.miscommunications, g.interceptions, g.team_won, g.turns) == want, (path.name, g.game_no)
        # The records as played: the humans' own guesses, counted as the loop counts them.
        for g, ep in zip(original_games(records), episodes, strict=True):
            assert (g.miscommunications, g.interceptions, g.team_won, g.turns) == fair_loop(ep["summarized_history"])
        assert mine.games == len(episodes) and original.games == len(episodes)


def original_games(records: list[Any]) -> list[Any]:
    return [asyncio.run(replay_game(r, None, "", None, seed=0, game_no=i + 1)) for i, r in enumerate(records)]

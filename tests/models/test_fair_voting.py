"""Votes that are fair to a person at the table, and descriptions that do not give the other word away.

A description is judged by what it points to among the candidate words, on one scale for a phrase
and a single word, never by its distance from the other descriptions; an outlier that points
nowhere is weak evidence and spreads the votes. Real all-MiniLM-L6-v2 (bundled) and real engines.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

import games
from bench.fairness import DEALERS, chameleon_deals, load_human, play, spy_deals
from games import decks
from games.base import Action, Choice, Text, rng
from games.text import reveals_secret
from models.agents import hints
from models.agents.embed import EmbeddingAgent
from models.agents.games import chameleon, spy
from models.agents.llm import LLMAgent, Mode
from models.agents.propose import Strategy
from models.agents.reading import (
    CARD_MIDPOINT,
    INNOCENCE,
    NOWHERE,
    card_suspicion,
    clarity,
    leaning,
    pointing,
    spread_draw,
    standing_out,
    suspicion,
    vote_weights,
)
from models.embeddings import VocabIndex
from models.types import Inference
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index


def spy_table(pair: tuple[str, str], spy_seat: int, texts: list[str]) -> Any:
    g = games.get("spy")
    cfg = g.make_config("spygame", deal={"pair": list(pair), "spies": [spy_seat], "order": [[0, 1, 2, 3]]})
    s, _ = g.new(cfg, 4, 1)
    for seat, text in enumerate(texts):
        s, _ = g.apply(s, seat, Action.say("describe", text))
    return s


def posterior_of(s: Any, voter: int, index: VocabIndex) -> dict[str, float]:  # noqa: F811
    g = games.get("spy")
    spec = g.legal(s, voter)
    assert isinstance(spec, Choice)
    post = spy.vote_posterior(index, g.observe(s, voter), spec)
    assert post is not None
    return post


def test_a_phrase_that_points_at_the_word_is_not_suspected_like_the_spy(index: VocabIndex) -> None:  # noqa: F811
    # Seat 0 speaks as people do; seats 1 and 3 give single words; seat 2 is the spy (judge).
    s = spy_table(("lawyer", "judge"), 2, ["argues cases in court for clients", "legal", "verdict", "lawsuits"])
    post = posterior_of(s, 3, index)
    assert post["2"] > 0.5, post
    assert post["0"] < post["2"] / 4, post
    words, prior = spy.alternatives(index, "lawyer")
    z = pointing(index, ["argues cases in court for clients", "attorney"], words)
    # On one scale: the phrase clearly points at the word, like a single word does, and is no evidence against.
    assert z[0, 0] > z[0, 1:].max() and z[1, 0] > z[1, 1:].max()
    assert suspicion(z[:1], 0, prior) < 0


def test_an_innocent_seat_does_not_turn_its_doubt_onto_a_fellow_villager(index: VocabIndex) -> None:  # noqa: F811
    # Seat 1 (turtle) hears the spy (seat 2, tortoise) say "desert" and a fellow villager say "ninja". A seat that
    # weighed "I am the spy" voted, in that branch, against the seat least like the table's word: the villager.
    s = spy_table(("turtle", "tortoise"), 2, ["lives in the sea", "shell", "desert", "ninja"])
    post = posterior_of(s, 1, index)
    assert max(post, key=post.__getitem__) == "2", post
    assert post["3"] < post["2"] / 2, post


def test_a_seat_is_not_suspected_of_the_word_it_names(index: VocabIndex) -> None:  # noqa: F811
    # A person (seat 0, lawyer) names judge, the other side's word, which the rules bar a judge from saying: read
    # by resemblance it points at judge; read by the rules its speaker is no judge. Seat 2 is the spy (gavel).
    s = spy_table(("lawyer", "judge"), 2, ["stands before the judge for her clients", "attorney", "gavel", "legal counsel"])
    post = posterior_of(s, 3, index)
    assert max(post, key=post.__getitem__) == "2", post
    assert post["0"] < post["2"] / 2, post
    words, _ = spy.alternatives(index, "lawyer")
    z = pointing(index, ["stands before the judge for her clients", "attorney"], words)
    named = spy.unnamed(z, ["stands before the judge for her clients", "attorney"], words)
    judge = words.index("judge")
    assert named[0, judge] < z[0].min() and (np.delete(named, judge, axis=1) == np.delete(z, judge, axis=1)).all()
    assert (named[1] == z[1]).all()


def test_an_outlier_that_points_nowhere_is_weak_evidence_and_spreads_votes(index: VocabIndex) -> None:  # noqa: F811
    s = spy_table(("lawyer", "judge"), 2, ["xylophone", "legal", "verdict", "lawsuits"])
    words, prior = spy.alternatives(index, "lawyer")
    z = pointing(index, ["xylophone"], words)
    assert abs(suspicion(z, 0, prior)) < 0.5
    post = posterior_of(s, 3, index)
    # It says nothing either way: suspected far less than the spy, and no more than a clear innocent's saturated
    # evidence of innocence (at most e**INNOCENCE) apart from it.
    assert post["0"] < post["2"] / 4, post
    assert post["0"] <= math.exp(INNOCENCE) * post["1"] * 1.01, post
    # Seat 3 voting on 60 seeds: the ballots are drawn from the posterior, not all on one seat.
    ballots = Counter(spread_draw(post, sorted(post), rng(k, "test-vote")) for k in range(60))
    assert len(ballots) >= 2 and ballots.most_common(1)[0][0] == "2"


def test_suspicion_is_evidence_against_a_seat_and_only_weakly_for_it() -> None:
    z = np.array([[0.0, 6.0, 0.0], [6.0, 0.0, 0.0]])  # clearly points at the other word; at one's own
    prior = np.array([0.0, 0.5, 0.5])
    against, for_ = suspicion(z[:1], 0, prior), suspicion(z[1:], 0, prior)
    assert against > 1.0 and -against < for_ < 0
    assert for_ == pytest.approx(-INNOCENCE, rel=0.05)  # evidence of innocence saturates
    weights = vote_weights({"a": 0.0, "b": 0.0, "c": 0.0})
    assert all(w == pytest.approx(1 / 3) for w in weights.values())


def test_a_chameleon_clue_for_another_card_word_is_suspected_a_vague_one_much_less(index: VocabIndex) -> None:  # noqa: F811
    g = games.get("chameleon")
    cfg = g.make_config("classic", deal={"card": "Jobs", "secret": "Lawyer", "chameleon": 2, "first": 0})
    s, _ = g.new(cfg, 4, 3)
    for seat, clue in enumerate(["court", "xylophone", "cockpit", "lawsuits"]):
        s, _ = g.apply(s, seat, Action.say("clue", clue))
    obs = g.observe(s, 3)
    spec3, spec2 = g.legal(s, 3), g.legal(s, 2)
    assert isinstance(spec3, Choice) and isinstance(spec2, Choice)
    post = chameleon.vote_posterior(index, obs, spec3)
    assert post is not None
    assert post["2"] == max(post.values()) and post["1"] < post["2"] / 2, post
    assert chameleon.spreads(obs, spec3) and not chameleon.spreads(g.observe(s, 2), spec2)


CARD = next(words for name, words in decks.cards() if name == "Jobs")


def chameleon_table(clues: list[str], cham: int = 2) -> Any:
    """A classic Jobs card (secret Lawyer) whose four seats gave ``clues`` in seat order, in the vote."""
    g = games.get("chameleon")
    cfg = g.make_config("classic", deal={"card": "Jobs", "secret": "Lawyer", "chameleon": cham, "first": 0})
    s, _ = g.new(cfg, 4, 3)
    for seat, clue in enumerate(clues):
        s, _ = g.apply(s, seat, Action.say("clue", clue))
    return s


def test_a_chameleon_clue_that_fits_the_whole_card_is_suspected_over_a_vague_reference(index: VocabIndex) -> None:  # noqa: F811
    # Seat 0 a person's reference the embedding cannot place, seat 2 the chameleon's word for the whole card.
    s = chameleon_table(["xylophone", "court", "occupation", "lawsuits"])
    g = games.get("chameleon")
    spec = g.legal(s, 3)
    assert isinstance(spec, Choice)
    post = chameleon.vote_posterior(index, g.observe(s, 3), spec)
    assert post is not None
    assert post["2"] > post["0"] > post["1"], post
    assert post["1"] < 0.01  # a clue that stands out for the secret clears its speaker
    # The reference clears its speaker a little (the chameleon must fit the card to blend in): read as no evidence,
    # it drew a third of the ballots (0.33), weighed as weak evidence of innocence it draws about an eighth.
    assert post["0"] < 0.2, post


def test_a_chameleon_clue_is_read_by_the_rules_as_well(index: VocabIndex) -> None:  # noqa: F811
    g = games.get("chameleon")

    def post_of(clues: list[str]) -> dict[str, float]:
        s = chameleon_table(clues)
        spec = g.legal(s, 3)
        assert isinstance(spec, Choice)
        post = chameleon.vote_posterior(index, g.observe(s, 3), spec)
        assert post is not None
        return post

    # Only the chameleon may name the secret: by resemblance "lawyers" would clear its speaker like no other clue.
    named = post_of(["court", "legal", "lawyers", "lawsuits"])
    assert named["2"] > 0.99, named
    # A clue that is another card word ("Pilots") is read on the rest of the card, not as pointing at Pilot: less
    # suspected than the chameleon's word for the whole card, where by resemblance it was suspected four times more.
    other = post_of(["Pilots", "legal", "occupation", "lawsuits"])
    assert other["0"] < other["2"], other
    z = hints.clearing(index, ["Pilots"], list(CARD), CARD.index("Lawyer"))
    keep = [j for j, w in enumerate(CARD) if w != "Pilot"]
    assert chameleon.by_the_rules(z, chameleon.named_on("Pilots", CARD), CARD.index("Lawyer")) == pytest.approx(
        card_suspicion(z[:, keep], keep.index(CARD.index("Lawyer"))))
    assert chameleon.by_the_rules(z, chameleon.named_on("lawyers", CARD), CARD.index("Lawyer")) == chameleon.NAMED_SECRET


def test_card_suspicion_weighs_standing_out_for_the_secret_by_clarity(index: VocabIndex) -> None:  # noqa: F811
    card = list(dict(decks.cards())["Jobs"])
    at = card.index("Lawyer")
    z = pointing(index, ["lawsuits", "cockpit", "xylophone"], card)
    apart = standing_out(z, at)
    assert apart[0] > CARD_MIDPOINT > apart[1]  # lawsuits stands out for the secret, cockpit for another word
    single = [card_suspicion(z[i:i + 1], at) for i in range(3)]
    # The vague word points at nothing on the card: weak evidence of innocence (the chameleon, not knowing the
    # secret, must fit the card), less than the clue that stands out for the secret.
    assert single[0] < single[2] < 0 < single[1]
    assert clarity(z)[2] < 0.5 and single[2] > -NOWHERE
    # A person's reference the embedding places near no card word still leans to the secret, however faintly: it
    # earns nearly all of NOWHERE. A word from elsewhere leans nowhere (a chameleon who says anything at all): little.
    faint = np.zeros((1, len(card)))
    faint[0, at] = 1.0
    nowhere = np.zeros((1, len(card)))
    away = np.zeros((1, len(card)))
    away[0, (at + 1) % len(card)] = 1.0
    assert clarity(faint)[0] < 0.05
    assert card_suspicion(faint, at) == pytest.approx(-NOWHERE, rel=0.1)
    assert leaning(nowhere, at)[0] < 0.2 and leaning(faint, at)[0] > 0.95
    assert card_suspicion(faint, at) < card_suspicion(nowhere, at) < card_suspicion(away, at) < 0
    assert card_suspicion(nowhere, at) > -NOWHERE / 4
    assert card_suspicion(z, at) == pytest.approx(sum(single))  # a seat's clues add up
    assert card_suspicion(z[:0], at) == 0.0


PAIRS = list(decks.pairs())[::12]


@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_a_villager_never_says_the_other_word(index: VocabIndex, pair: tuple[str, str]) -> None:  # noqa: F811
    spec = Text("describe", "", ("Your description",), max_words=12, max_chars=200)
    for word, other in (pair, pair[::-1]):
        for text in spy.descriptions(index, word, spec, [], 12):
            assert not reveals_secret(text, other), (word, text)
            assert not reveals_secret(text, word), (word, text)


def played(deals: list[Any], agent: str, index: VocabIndex, human: Any, *, arms: tuple[bool, ...],  # noqa: F811
           to_end: bool = False) -> list[dict[str, Any]]:
    """Each deal played by ``agent`` once per arm (seat 0 the person, or the agent), its rows without their timings."""
    async def go() -> list[dict[str, Any]]:
        rows = []
        for deal in deals:
            for seat0_human in arms:
                row = await play(deal, agent, _factory(index), human_seat=seat0_human, human=human, table_no=1, to_end=to_end)
                for m in row["moves"]:
                    m.pop("wall_ms")
                rows.append(row)
        return rows
    return asyncio.run(go())


def _factory(index: VocabIndex) -> Any:  # noqa: F811
    async def no_model(name: str) -> Inference:
        raise AssertionError("the default agent's votes and descriptions need no language model")

    def make(name: str, seed: int) -> Any:
        if name == "embed:minilm":
            return EmbeddingAgent(index, seed=seed)
        return LLMAgent(no_model, seed=seed, mode=Mode.STRATEGIC, strategy=Strategy(index=index), spec=name)

    return make


@pytest.mark.parametrize("game", sorted(DEALERS))
def test_a_small_seeded_fairness_run_is_reproducible(index: VocabIndex, game: str) -> None:  # noqa: F811
    human = load_human()
    deals = DEALERS[game](human, 2)
    first, second = (played(deals, "llm:default", index, human, arms=(True, False)) for _ in range(2))
    assert first == second
    assert all(r["said"] for r in first) and all(r["ballot"] for r in first)
    # The person's descriptions come from the hand-written data; the outsider never sits in seat 0.
    for r in first:
        if r["arm"] == "human":
            said = next(x["text"] for x in r["said"] if x["seat"] == 0)
            assert said in human[r["word"].lower()]
        assert r["outsider"] != 0


def test_the_human_data_is_sayable_and_names_neither_word() -> None:
    human = load_human()
    partner = {a.lower(): b.lower() for x, y in decks.pairs() for a, b in ((x, y), (y, x))}
    for word, entries in human.items():
        assert len(entries) >= 4, word
        for e in entries:
            assert not reveals_secret(e, word), (word, e)
            if word in partner:
                assert not reveals_secret(e, partner[word]), (word, e)
    assert len(spy_deals(human, 40)) == 40 and len(chameleon_deals(human, 40)) == 40


@pytest.mark.parametrize("game", sorted(DEALERS))
def test_the_person_ballot_diagnostic_lets_the_agent_vote_for_seat_0_and_keeps_the_person_words(index: VocabIndex,  # noqa: F811
                                                                                                 game: str) -> None:
    human = load_human()
    deal = DEALERS[game](human, 1)[0]
    base = _factory(index)
    for mode in ("random", "agent"):
        seats: list[int] = []

        def make(name: str, seed: int, seats: list[int] = seats) -> Any:
            seats.append(seed - deal.seed * 10)
            return base(name, seed)

        row = asyncio.run(play(deal, "llm:default", make, human_seat=True, human=human, table_no=1, person_ballot=mode))
        # Seat 0's ballot is the agent's only in the diagnostic; its words are the person's either way.
        assert (0 in seats) == (mode == "agent"), (mode, seats)
        said = [x["text"] for x in row["said"] if x["seat"] == 0]
        assert said and all(t in human[row["word"].lower()] for t in said), mode
        assert "0" in row["ballot"] and all(m["seat"] != 0 for m in row["moves"])
        # Each AI ballot carries the posterior it was drawn from (the bench's noise-free reading of the votes).
        votes = [m for m in row["moves"] if m["kind"] == "choice"]
        assert votes and all(abs(sum(m["posterior"].values()) - 1) < 1e-6 and m["action"][0] in m["posterior"] for m in votes)


def test_the_chameleon_accuses_the_clue_the_players_suspect_not_a_reference_it_cannot_place(index: VocabIndex) -> None:  # noqa: F811
    # Seat 0 a person's reference that points at nothing on the card, seat 1 a word for the whole card (what the
    # players suspect), seat 3 a clue for the secret; the chameleon (seat 2), not knowing the secret, votes to win.
    s = chameleon_table(["xylophone", "occupation", "court", "lawsuits"])
    g = games.get("chameleon")
    obs = g.observe(s, 2)
    spec = g.legal(s, 2)
    assert isinstance(spec, Choice) and not chameleon.spreads(obs, spec)
    scores = chameleon.evidence(index, obs, spec)
    assert scores is not None
    # The reference clears its speaker a little in the players' eyes, so it is the chameleon's last suspect, not its
    # first (the clue least likely for the secret, as the chameleon once read it, was the reference).
    assert min(scores, key=scores.__getitem__) == "0" and scores["1"] > scores["0"], scores
    # Its scores are the players' own reading, averaged over the secrets the other clues point to.
    card = list(obs.view["card"])
    belief = chameleon.card_posterior(index, card, ["xylophone", "lawsuits"])
    assert scores["1"] == pytest.approx(chameleon.players_suspicion(index, card, "occupation", belief))

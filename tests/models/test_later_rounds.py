"""The rounds after the first: voters keep each seat's evidence across rounds, and the bench plays deals to the end.

Who-is-Spy's second round is voted on every description of the game, the first round's included. Real all-MiniLM-L6-v2 (bundled), real
engines, the real strategic agent (no language model needed for these moves).
"""

from __future__ import annotations

from typing import Any

import games
from bench.fairness import DEALERS, load_human
from games.base import Action, Choice
from models.embeddings import VocabIndex
from tests.models.test_embed_agent import index  # noqa: F401  # the session's MiniLM index
from tests.models.test_fair_voting import played, posterior_of


def second_round(round1: list[str], round2: dict[int, str], out: int = 0, spy_seat: int = 2) -> Any:
    """A spygame table (lawyer against judge) whose round 1 (seats 0-3 in order) voted ``out``, in round 2's vote."""
    g = games.get("spy")
    cfg = g.make_config("spygame", deal={"pair": ["lawyer", "judge"], "spies": [spy_seat], "order": [[0, 1, 2, 3]]})
    s, _ = g.new(cfg, 4, 1)
    for seat, text in enumerate(round1):
        s, _ = g.apply(s, seat, Action.say("describe", text))
    for voter in range(4):
        spec = g.legal(s, voter)
        assert isinstance(spec, Choice)
        target = out if voter != out else next(x for x in range(4) if x != out)
        s, _ = g.apply(s, voter, Action.choose("vote", str(target)))
    assert s.round == 2 and [x for _, x in s.eliminated] == [out]
    while s.phase.value == "describe":
        seat = min(g.to_act(s))
        s, _ = g.apply(s, seat, Action.say("describe", round2[seat]))
    return s


def test_a_round_one_description_still_counts_in_round_two(index: VocabIndex) -> None:  # noqa: F811
    later = {1: "office", 2: "building", 3: "work"}  # round 2 says little either way
    pointed = posterior_of(second_round(["legal", "attorney", "verdict", "clients"], later), 3, index)
    hidden = posterior_of(second_round(["legal", "attorney", "lawyers office", "clients"], later), 3, index)
    # The spy's round-1 description pointing at the other word is what makes it the suspect in round 2.
    assert pointed["2"] == max(pointed.values()) and pointed["2"] > 0.5, pointed
    assert pointed["2"] > hidden["2"] + 0.2, (pointed, hidden)


def test_the_bench_plays_deals_to_the_end_the_same_way_twice(index: VocabIndex) -> None:  # noqa: F811
    human = load_human()
    deals = [d for game in sorted(DEALERS) for d in DEALERS[game](human, 2)]
    first, second = (played(deals, "strategist", index, human, arms=(True,), to_end=True) for _ in range(2))
    assert first == second
    for r in first:
        end = r["end"]
        assert isinstance(end["outsider_caught"], bool) and end["rounds"] >= 1
        # Round 1's measures are those of round 1: its first ballot is the game's first, its outcome the first out.
        assert r["ballot"] and (r["out"] is None or [1, r["out"]] in end["eliminated"])
        if r["game"] == "spy" and end["complete"] and not end["outsider_caught"]:
            assert end["rounds"] >= 2 or r["out"] is None

"""games.vote: the one voting mechanism of Who-is-Spy and the Chameleon."""

from __future__ import annotations

import pytest

from games import vote
from games.base import Action, Choice, IllegalAction, ready_choice
from games.labels import seat_ref


def cast_all(b: vote.Ballot, votes: dict[int, int | None]) -> vote.Ballot:
    for voter, target in votes.items():
        b = b.cast(voter, target)
    return b


def test_most_votes_wins_ties_stay_open_and_nobody_voting_chooses_nobody() -> None:
    b = vote.first(range(4), range(4))
    assert cast_all(b, {0: 1, 1: 2, 2: 1, 3: None}).verdict() == vote.Verdict(1, ())
    assert cast_all(b, {0: 1, 1: 2, 2: 3, 3: 2}).verdict() == vote.Verdict(2, ())
    tie = cast_all(b, {0: 1, 1: 0, 2: 1, 3: 0}).verdict()
    assert tie.chosen is None and tie.tied == (0, 1) and not tie.no_votes
    none = cast_all(b, dict.fromkeys(range(4))).verdict()
    assert none.no_votes and none.chosen is None


def test_runoff_only_after_a_first_ballot_and_when_the_rule_allows() -> None:
    b = cast_all(vote.first(range(4), range(4)), {0: 1, 1: 0, 2: 1, 3: 0})
    v = b.verdict()
    assert b.needs_runoff(v, True) and not b.needs_runoff(v, False)
    r = cast_all(vote.runoff(v.tied, range(4)), {0: 1, 1: 0, 2: 1, 3: 0})
    assert r.runoff and not r.needs_runoff(r.verdict(), True)


def test_a_voter_votes_once_for_a_candidate_other_than_themselves() -> None:
    b = vote.first(range(3), range(3)).cast(0, 1)
    with pytest.raises(IllegalAction, match="already voted"):
        b.cast(0, 2)
    with pytest.raises(IllegalAction):
        b.cast(1, 1)
    with pytest.raises(IllegalAction):
        vote.runoff((0, 1), range(3)).cast(2, 2)
    assert b.waiting() == {1, 2} and b.vote_of(0) == (True, 1) and b.vote_of(1) == (False, None)


def test_options_are_seeded_per_voter_exclude_the_voter_and_name_seats_by_token() -> None:
    b = vote.first(range(8), range(8))
    opts = b.options(3, 42, "salt", 3)
    assert opts == b.options(3, 42, "salt", 3)
    assert sorted(int(o.id) for o in opts) == [0, 1, 2, 4, 5, 6, 7]
    assert all(o.label == seat_ref(int(o.id)) for o in opts)
    assert any(b.options(3, seed, "salt", 3) != opts for seed in range(5))


def test_target_reads_a_vote_or_an_abstention() -> None:
    spec = Choice("vote", "who?", vote.first(range(3), range(3)).options(0, 1))
    assert vote.target(spec, Action("vote", ("abstain",))) is None
    assert vote.target(spec, Action("vote", ("2",))) == 2
    with pytest.raises(IllegalAction):
        vote.target(spec, Action("vote", ("0",)))  # not an option: one's own seat
    assert ready_choice("Talk.").ids() == ("ready",)

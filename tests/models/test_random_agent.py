"""The AI players draw from their seed and how far the game has gone for their seat, not from whether another
seat's simultaneous move was taken first: a game started again from its seed plays out the same."""

from __future__ import annotations

import games
from games.base import Action, Choice
from models.agents.base import settled_events, turn_rng
from models.agents.random_agent import RandomAgent


def _vote_open(seed: int):
    """A Chameleon table at its vote (every seat casts at once), and the same table after seat 0 voted."""
    engine = games.get("chameleon")
    state, _ = engine.new(engine.make_config(), 4, seed)
    while len(engine.to_act(state)) == 1:
        seat = min(engine.to_act(state))
        spec = engine.legal(state, seat)
        assert spec is not None and not isinstance(spec, Choice)
        state, _ = engine.apply(state, seat, Action.say(spec.kind, f"clue{seat}x"))
    first = engine.legal(state, 0)
    assert isinstance(first, Choice)
    voted, _ = engine.apply(state, 0, Action.choose(first.kind, first.options[0].id))
    return engine, state, voted


def test_another_seats_vote_taken_first_changes_no_draw_of_the_model_players() -> None:
    # The language-model and embedding players draw through turn_rng (option order, sampling, candidates).
    for seed in range(20):
        engine, state, voted = _vote_open(seed)
        before, after = engine.observe(state, 3), engine.observe(voted, 3)
        assert len(after.events) > len(before.events)
        for purpose in ("llm-options", "llm-sample", "embed-agent"):
            assert turn_rng(5, before, purpose, 0).random() == turn_rng(5, after, purpose, 0).random()
        # Another attempt still draws anew.
        assert turn_rng(5, before, "llm-options", 0).random() != turn_rng(5, before, "llm-options", 1).random()


async def test_another_seats_vote_taken_first_changes_no_draw_of_the_random_player() -> None:
    engine = games.get("chameleon")
    cfg = engine.make_config()
    agent = RandomAgent("random", 7)
    for seed in range(40):
        state, _ = engine.new(cfg, 4, seed)
        while len(engine.to_act(state)) == 1:  # the clues, one seat at a time, up to the vote all cast at once
            seat = min(engine.to_act(state))
            spec = engine.legal(state, seat)
            assert spec is not None and not isinstance(spec, Choice)
            state, _ = engine.apply(state, seat, Action.say(spec.kind, f"clue{seat}x"))
        first = engine.legal(state, 0)
        assert isinstance(first, Choice) and engine.to_act(state) == frozenset(range(4))
        voted, _ = engine.apply(state, 0, Action.choose(first.kind, first.options[0].id))
        before, after = engine.observe(state, 3), engine.observe(voted, 3)
        assert len(after.events) > len(before.events)  # seat 3 is told that seat 0 has voted
        assert settled_events(after) == settled_events(before)
        spec = engine.legal(state, 3)
        assert spec is not None and spec == engine.legal(voted, 3)
        assert (await agent.act(before, spec)).action == (await agent.act(after, spec)).action

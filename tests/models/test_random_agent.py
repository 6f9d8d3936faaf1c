"""The random player draws from its seed and how far the game has gone for its seat, not from whether another
seat's simultaneous move was taken first: a game started again from its seed plays out the same."""

from __future__ import annotations

import games
from games.base import Action, Choice
from models.agents.random_agent import RandomAgent, settled_events


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

"""Random play with a caller's hand in it (``games.play.random_turns``): the texts a writer chooses
are what its seats write, a text the rules refuse is asked for again, the rest stays random, and a
caller can stop mid-game; ``play_random`` is the same turns played to the end."""

from __future__ import annotations

import random

import pytest

import games
from games.base import Action, Text
from games.catalog import descriptors
from games.play import play_random, random_turns

GAMES = tuple(d.id for d in descriptors())
WORDS = ("zorblaxian", "quexiform", "vrombulate", "plinxter")


@pytest.mark.parametrize("gid", GAMES)
def test_a_writer_chooses_its_seats_texts_and_the_rest_is_random(gid: str) -> None:
    game = games.get(gid)
    cfg = game.make_config()
    n = game.seat_range(cfg)[0]
    asked: list[tuple[int, int]] = []
    before, _deal = game.new(cfg, n, 5)
    writer = None  # the first seat the game asks for a text
    for t in random_turns(game, before, 5, salt="test"):
        if isinstance(game.legal(before, t.seat), Text):
            writer = t.seat
            break
        before = t.state
    assert writer is not None

    def write(seat: int, spec: Text, _r: random.Random, step: int, attempt: int) -> Action | None:
        if seat != writer:
            return None
        asked.append((step, attempt))
        return Action(spec.kind, tuple(WORDS[(step + attempt + i) % len(WORDS)] for i in range(len(spec.fields))))

    state, _deal = game.new(cfg, n, 5)
    turns = list(random_turns(game, state, 5, salt="test", write=write))
    assert turns and not game.to_act(turns[-1].state) and game.result(turns[-1].state) is not None
    mine = [t for t in turns if t.seat == writer and isinstance(t.action.value, tuple) and set(t.action.value) <= set(WORDS)
            and t.action.value]
    others = {w for t in turns if t.seat != writer for w in t.action.value}
    assert asked, "the writer was never asked"
    assert mine, "the seat never wrote its own words"
    assert all((step, a - 1) in asked for step, a in asked if a), "a refused text is asked for again, one attempt on"
    assert not others & set(WORDS)  # other seats write random text, never the writer's words
    assert [t.step for t in turns] == sorted({t.step for t in turns})


def test_play_random_is_random_turns_to_the_end_and_a_caller_can_stop() -> None:
    game = games.get("spymasters")
    cfg = game.make_config()
    whole = play_random(game, cfg, 4, 11)
    state, _deal = game.new(cfg, 4, 11)
    turns = list(random_turns(game, state, 11))
    assert tuple((t.seat, t.action) for t in turns) == whole.actions
    assert game.result(turns[-1].state) == whole.result
    state, _deal = game.new(cfg, 4, 11)
    first = next(iter(random_turns(game, state, 11)))
    assert game.to_act(first.state) and first.step == 0

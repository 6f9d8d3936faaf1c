"""Every text limit lives in the engine's ActionSpec, and the engine enforces exactly it.

Forms (Discord modals, Slack inputs, the console) take ``Text.max_chars``/``max_words`` from the
spec; these tests make sure the engine accepts the last character and word the form allows and
refuses one more, for every text step of every game.
"""

from __future__ import annotations

import pytest

import games
from games import catalog
from games.base import MAX_TEXT_CHARS, Action, IllegalAction, Text
from games.play import play_random
from games.spy import GAME as SPY

NONSENSE = tuple(f"zq{a}{b}x" for a in "abcdefgh" for b in "abcdefghij")


def text_steps(gid: str) -> list[tuple[object, int, Text]]:
    """(state, seat, spec) for every text step reached in random play of every variant."""
    game = games.get(gid)
    out: list[tuple[object, int, Text]] = []
    for variant in game.variants:
        cfg = game.make_config(variant)
        lo, _ = game.seat_range(cfg)
        pt = play_random(game, cfg, lo, 5, vocabulary=NONSENSE)
        state, _ = game.new(cfg, lo, 5)
        for seat, action in pt.actions:
            spec = game.legal(state, seat)
            if isinstance(spec, Text):
                out.append((state, seat, spec))
            state, _ = game.apply(state, seat, action)
    return out


@pytest.mark.parametrize("gid", catalog.ids())
def test_the_engine_enforces_exactly_the_spec_limits(gid: str) -> None:
    game = games.get(gid)
    steps = text_steps(gid)
    assert steps
    for state, seat, spec in steps[:6]:
        assert 1 <= spec.max_chars <= MAX_TEXT_CHARS and spec.max_words >= 1
        n = len(spec.fields)
        # One word of exactly max_chars letters: the longest text a form allows.
        longest = "zq" + "x" * (spec.max_chars - 2)
        fine = [f"zq{chr(97 + i)}x" for i in range(n)]
        game.apply(state, seat, Action(spec.kind, (longest, *fine[1:])))
        with pytest.raises(IllegalAction, match=f"at most {spec.max_chars} characters"):
            game.apply(state, seat, Action(spec.kind, (longest + "x", *fine[1:])))
        # Exactly max_words words fit (when they fit the characters), one more does not.
        words = [f"zq{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(spec.max_words + 1)]
        if len(" ".join(words[:-1])) <= spec.max_chars:
            game.apply(state, seat, Action(spec.kind, (" ".join(words[:-1]), *fine[1:])))
        if len(" ".join(words)) <= spec.max_chars:
            with pytest.raises(IllegalAction, match=f"at most {spec.max_words} word"):
                game.apply(state, seat, Action(spec.kind, (" ".join(words), *fine[1:])))


def test_spy_description_limit_is_the_spec_s() -> None:
    cfg = SPY.make_config("classic")
    state, _ = SPY.new(cfg, 5, 1)
    (seat,) = SPY.to_act(state)
    spec = SPY.legal(state, seat)
    assert isinstance(spec, Text)
    # The form used 240 while a second constant refused over 200: the spec is the one limit.
    assert (spec.max_words, spec.max_chars) == (12, 240)
    SPY.apply(state, seat, Action("describe", ("zq" + "y" * 238,)))
    big = SPY.new(SPY.make_config("classic", max_words=50), 5, 1)[0]
    (s50,) = SPY.to_act(big)
    spec50 = SPY.legal(big, s50)
    assert isinstance(spec50, Text) and spec50.max_chars == MAX_TEXT_CHARS

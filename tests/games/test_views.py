"""Every observation view has exactly the keys of its game's TypedDict, in every phase of play.

The LLM and embedding agents read these keys; the TypedDicts are the contract they read against."""

from __future__ import annotations

import typing

import pytest

import games
from games.chameleon import ChameleonView
from games.decrypto import DecryptoView
from games.play import play_random
from games.spy import SpyView

VIEWS: dict[str, type] = {"decrypto": DecryptoView, "spy": SpyView, "chameleon": ChameleonView}


@pytest.mark.parametrize("gid", sorted(VIEWS))
def test_views_have_the_typed_keys(gid: str) -> None:
    game, view_type = games.get(gid), VIEWS[gid]
    required: frozenset[str] = view_type.__required_keys__  # type: ignore[attr-defined]  # TypedDict class attribute
    optional: frozenset[str] = view_type.__optional_keys__  # type: ignore[attr-defined]  # TypedDict class attribute
    assert set(typing.get_type_hints(view_type)) == required | optional
    for variant in game.variants:
        cfg = game.make_config(variant)
        lo, hi = game.seat_range(cfg)
        for seats in {lo, hi}:
            pt = play_random(game, cfg, seats, 11)
            state, _ = game.new(cfg, seats, 11)
            for seat, action in [*pt.actions, (None, None)]:
                for viewer in range(seats):
                    keys = set(game.observe(state, viewer).view)
                    assert required <= keys <= required | optional, (variant, sorted(keys ^ required))
                if seat is None or action is None:
                    break
                state, _ = game.apply(state, seat, action)

"""Every observation view has exactly the keys of its game's TypedDict (the descriptor's ``view``),
nested TypedDicts included, in every phase of play, for every registered game.

The LLM and embedding agents read these keys; the TypedDicts are the contract they read against."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping

import pytest

from games.catalog import descriptors
from games.descriptor import GameDescriptor
from games.play import play_random

DESCRIPTORS = descriptors()


def _is_typed_dict(t: object) -> bool:
    return isinstance(t, type) and issubclass(t, dict) and hasattr(t, "__required_keys__")


def check(value: object, hint: object, where: str) -> None:
    """``value`` has exactly the keys ``hint`` promises, inside lists, mappings and optionals too."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if _is_typed_dict(hint):
        assert isinstance(value, Mapping), where
        required: frozenset[str] = hint.__required_keys__  # type: ignore[attr-defined]  # TypedDict class attribute
        optional: frozenset[str] = hint.__optional_keys__  # type: ignore[attr-defined]  # TypedDict class attribute
        assert required <= set(value) <= required | optional, (where, sorted(set(value) ^ required))
        hints = typing.get_type_hints(hint)
        for k, v in value.items():
            check(v, hints[k], f"{where}.{k}")
    elif origin in (typing.Union, types.UnionType):
        if value is not None:
            inner = [a for a in args if a is not type(None)]
            if len(inner) == 1:
                check(value, inner[0], where)
    elif origin in (list, tuple) and args and isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check(v, args[0], f"{where}[{i}]")
    elif origin is dict and len(args) == 2 and isinstance(value, Mapping):
        for k, v in value.items():
            check(v, args[1], f"{where}[{k}]")


def test_every_game_declares_its_view() -> None:
    assert all(_is_typed_dict(d.view) for d in DESCRIPTORS), [d.id for d in DESCRIPTORS if not _is_typed_dict(d.view)]


@pytest.mark.parametrize("d", [d for d in DESCRIPTORS if d.view is not None], ids=lambda d: d.id)
def test_views_have_the_typed_keys(d: GameDescriptor) -> None:
    game, view_type = d.engine, d.view
    for variant in game.variants:
        cfg = game.make_config(variant)
        lo, hi = game.seat_range(cfg)
        for seats in sorted({lo, (lo + hi) // 2, hi}):
            pt = play_random(game, cfg, seats, 11)
            state, _ = game.new(cfg, seats, 11)
            for step, (seat, action) in enumerate([*pt.actions, (None, None)]):
                for viewer in range(seats):
                    check(game.observe(state, viewer).view, view_type, f"{d.id}/{variant}/{seats} step {step}")
                if seat is None or action is None:
                    break
                state, _ = game.apply(state, seat, action)

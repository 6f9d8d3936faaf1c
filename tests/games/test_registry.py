"""The game descriptors: what each registered game declares agrees with its engine and its
metrics, and the metrics read a game nobody registered without failing."""

from __future__ import annotations

from typing import ClassVar

import pytest

import games
from games.base import Choice, Text
from games.catalog import GAME_PACKAGES, UnknownGame, descriptor, descriptors, engine, find
from games.decrypto import Decrypto
from games.descriptor import GameDescriptor, MetricScope
from games.metrics import generic_seats, measure, metrics_of
from games.play import play_random
from games.record import Record
from tests.vocabulary import NONSENSE

DESCRIPTORS = sorted(descriptors(), key=lambda d: d.id)


def _played(d: GameDescriptor, variant: str, seed: int) -> tuple[Record, list[str]]:
    """A finished random game as a record, and the kinds of every action asked for in it."""
    cfg = d.engine.make_config(variant)
    seats = d.engine.seat_range(cfg)[0]
    pt = play_random(d.engine, cfg, seats, seed, vocabulary=NONSENSE)
    return Record(d.engine, cfg, seats, seed, tuple(pt.actions), None), [a.kind for _, a in pt.actions]


def test_every_package_registers_one_descriptor() -> None:
    assert len(descriptors()) == len(GAME_PACKAGES)
    assert len({d.id for d in descriptors()}) == len(GAME_PACKAGES)
    names = [n for d in descriptors() for n in (d.id, *d.aliases)]
    assert len(names) == len(set(names)), "an id or alias names two games"


@pytest.mark.parametrize("d", DESCRIPTORS, ids=lambda d: d.id)
def test_descriptor_agrees_with_its_engine(d: GameDescriptor) -> None:
    assert d.engine.id == d.id and engine(d.id) is d.engine and games.get(d.id) is d.engine
    assert descriptor(d.id.upper()) is d
    assert tuple(map(str, d.variants)) == tuple(d.engine.variants)
    assert d.title and d.blurb and d.roles and d.sides
    lo, hi = d.seats
    for v in d.variants:
        vlo, vhi = d.engine.seat_range(d.engine.make_config(str(v)))
        assert lo <= vlo <= vhi <= hi, (v, (vlo, vhi), d.seats)
    for variant, shape in d.seat_shapes.items():
        assert variant in d.variants
        vlo, vhi = d.engine.seat_range(d.engine.make_config(variant))
        assert vlo == vhi == len(shape.roles), "roles fixed to seats name every seat"
        assert set(shape.roles) <= set(d.roles)
    for m in d.metrics:
        assert set(m.roles) <= set(d.roles), m.key


@pytest.mark.parametrize("d", DESCRIPTORS, ids=lambda d: d.id)
def test_clue_kinds_are_text_moves_the_game_asks_for(d: GameDescriptor) -> None:
    """Each declared clue kind is a free-text move some seat is asked for in play."""
    asked: dict[str, type] = {}
    for v in d.variants:
        cfg = d.engine.make_config(str(v))
        seats = d.engine.seat_range(cfg)[0]
        state, _ = d.engine.new(cfg, seats, 11)
        pt = play_random(d.engine, cfg, seats, 11, vocabulary=NONSENSE)
        for seat, action in pt.actions:
            spec = d.engine.legal(state, seat)
            assert isinstance(spec, (Choice, Text))
            asked[spec.kind] = type(spec)
            state, _ = d.engine.apply(state, seat, action)
    for kind in d.clue_kinds:
        assert asked.get(kind) is Text, (kind, asked)


@pytest.mark.parametrize("d", DESCRIPTORS, ids=lambda d: d.id)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_outcomes_and_summaries_are_declared(d: GameDescriptor, seed: int) -> None:
    """Every role, side and per-seat number a finished game yields is one the descriptor
    declares, and every number of the game's summary has a label."""
    seat_keys = {m.key for m in d.metrics if m.scope is MetricScope.SEAT}
    labels, blocks = d.labels(), d.role_blocks()
    seen: set[str] = set()
    for v in d.variants:
        rec, _ = _played(d, str(v), seed)
        measured = measure(rec)
        for o in measured.seats:
            assert o.role in d.roles and o.side in d.sides, (o.role, o.side)
            assert set(o.stats) <= seat_keys, set(o.stats) - seat_keys
            seen.update(o.stats)
        summary = metrics_of([measured])[d.id][str(v)]
        for key, value in summary.items():
            assert key in labels, key
            if key in blocks:
                assert set(value) <= set(labels), set(value) - set(labels)
    assert {m.key for m in d.leaderboard()} <= seen, "a leaderboard column no game fills"


class _Unregistered(Decrypto):
    """Decrypto's rules under an id no package registers: a game the metrics have never heard of."""

    id: ClassVar[str] = "not-registered"


def test_metrics_read_a_game_nobody_registered() -> None:
    game = _Unregistered()
    cfg = game.make_config("benchmark")
    pt = play_random(game, cfg, 3, 5, vocabulary=NONSENSE)
    assert pt.result is not None
    rec = Record(game, cfg, 3, 5, tuple(pt.actions), None)
    assert find(game.id) is None
    measured = measure(rec)
    assert [(o.seat, o.won) for o in measured.seats] == [(s, s in pt.result.winners) for s in range(3)]
    assert measured.seats == tuple(generic_seats(rec, "benchmark", pt.result))
    assert metrics_of([measured]) == {"not-registered": {"benchmark": {"games": 1, "draw_rate": 0.0}}}


def test_unknown_names_are_one_sentence() -> None:
    with pytest.raises(KeyError) as info:
        descriptor("poker")
    assert isinstance(info.value, UnknownGame)
    assert str(info.value).startswith("unknown game 'poker'; choose one of ")
    assert info.value.args[0] == str(info.value)
    assert find("WhoIsSpy") is descriptor("spy") and find("poker") is None

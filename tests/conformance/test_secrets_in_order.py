"""Secrets in order, for every game of the catalog: what each seat is told arrives in the engine's order.

A table of humans only (so every seat gets its own messages) plays each variant to its end through the
real TableService on the in-memory platform, with random legal moves. Afterwards each seat's story is
read twice: as the engine tells it (``observe(...).events``, public and that seat's private events in the
order they happened) and as the seat received it (the table's posts and its own direct messages, in
send order). The two must agree line for line: a seat is never shown the next turn's secret (the next
code, the next card's word) before the current turn's result.

A new game joins by its catalog line: nothing here names a game."""

from __future__ import annotations

import pytest

from bot.core.memory import MemoryPlatform
from bot.core.messages import CommandKind, UserRef
from games.catalog import descriptors
from games.descriptor import GameDescriptor
from tests.bot.core.conftest import HERE, make_harness

CASES = [(d, str(v)) for d in descriptors() for v in d.variants]


@pytest.mark.parametrize(("d", "variant"), CASES, ids=[f"{d.id}-{v}" for d, v in CASES])
@pytest.mark.parametrize("seed", [3, 11])
async def test_each_seat_hears_the_game_in_the_engines_order(tmp_path, d: GameDescriptor, variant: str, seed: int) -> None:
    platform = MemoryPlatform()
    h = await make_harness(f"sqlite+aiosqlite:///{tmp_path}/order.db", platform=platform)
    try:
        seats = d.engine.seat_range(d.engine.make_config(variant))[0]
        users = [UserRef("memory", str(100 + i), f"P{i}") for i in range(seats)]
        r = await h.send(CommandKind.CREATE, users[0], HERE, game=d.id, variant=variant)
        assert r.ok, r.text
        for u in users[1:]:
            assert (await h.send(CommandKind.JOIN, u, HERE)).ok
        r = await h.send(CommandKind.START, users[0], HERE, seed=seed)
        assert r.ok, r.text
        table = next(iter(h.service.tables.values()))
        await h.play_humans(seed=seed)
        assert table.engine.result(table.state) is not None
        for info in table.seats:
            assert info.user is not None
            told = [line for e in table.engine.observe(table.state, info.seat).events
                    for line in table.engine.text(e, table.names).splitlines() if line.strip()]
            wanted = set(told)
            received = [line for s in platform.sent
                        if not s.message.has_controls
                        and ((s.kind == "post" and s.to.startswith(HERE.key)) or (s.kind == "dm" and s.to == info.user.key))
                        for line in s.message.text.replace("**", "").splitlines() if line in wanted]
            assert received[:len(told)] == told, (info.name, _first_difference(told, received))
    finally:
        await h.close()


def _first_difference(told: list[str], received: list[str]) -> str:
    for i, (a, b) in enumerate(zip(told, received, strict=False)):
        if a != b:
            return f"line {i}: the engine says {a!r} next, the seat got {b!r}"
    return f"{len(told)} lines told, {len(received)} received"

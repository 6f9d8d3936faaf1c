"""Which moves SNEAK scores is the game's descriptor's ``clue_kinds``, read when a log is mapped: a game
whose descriptor names no clue kind has nothing scored, with no SNEAK module edited (real logged games,
real SQLite store)."""

from __future__ import annotations

import dataclasses
from importlib import import_module

import pytest

from games.catalog import GAME_PACKAGES, descriptor
from models.eval.games import clue_kinds, hooks, instances_from_log, registry
from models.eval.games.spymasters import board_clues
from storage.store import Store
from tests.eval.logging_helpers import log_random_game


def _without_clue_kinds(monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    for name in GAME_PACKAGES:
        module = import_module(name)
        if module.DESCRIPTOR.id == game:
            monkeypatch.setattr(module, "DESCRIPTOR", dataclasses.replace(module.DESCRIPTOR, clue_kinds=frozenset()))
            return
    raise AssertionError(f"no package describes {game}")


@pytest.mark.parametrize("game", sorted(registry()))
async def test_a_games_scored_moves_are_its_descriptors_clue_kinds(store: Store, game: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    d = descriptor(game)
    variant = str(d.variants[0])
    seats = d.engine.seat_range(d.engine.make_config(variant))[0]
    gid, _ = await log_random_game(store, game, variant, seats, seed=4, humans=())
    log = await store.load_game(gid)
    found = instances_from_log(log)
    kinds = {a.kind for a in log.actions}
    assert found and clue_kinds(game) == d.clue_kinds
    # Only the declared kinds become instances, and the log has moves of other kinds that do not.
    assert {a.kind for a in log.actions if a.seq in {i.action_seq for i in found}} <= d.clue_kinds
    assert kinds - d.clue_kinds
    _without_clue_kinds(monkeypatch, game)
    assert clue_kinds(game) == frozenset() and instances_from_log(log) == []


async def test_spymasters_own_hook_reads_its_descriptors_clue_kinds(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "spymasters" in hooks()
    gid, _ = await log_random_game(store, "spymasters", "classic", 4, seed=3, humans=())
    log = await store.load_game(gid)
    assert board_clues(log)
    _without_clue_kinds(monkeypatch, "spymasters")
    assert board_clues(log) == []

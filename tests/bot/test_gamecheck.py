"""``hushtable doctor``'s list of what each registered game lacks."""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from bot.cli import app
from bot.gamecheck import lacks, report
from games.catalog import descriptors
from games.descriptor import ClueScoring, GameDescriptor


@pytest.mark.parametrize("d", descriptors(), ids=lambda d: d.id)
def test_every_registered_game_is_complete(d: GameDescriptor) -> None:
    assert lacks(d) == []


def test_what_a_game_lacks_is_said_with_what_it_costs() -> None:
    d = descriptors()[0]
    bare = dataclasses.replace(d, id="nosuchgame", view=None, deal=None, golden=(), menu=None, read_seats=None,
                               clue_scoring=ClueScoring.ONE_SECRET)
    said = lacks(bare)
    assert any("no agent module (models/agents/games/nosuchgame.py" in s for s in said)
    assert any("no clue module (models/eval/games/nosuchgame.py" in s for s in said)
    assert any(s.startswith("no view type") for s in said) and any(s.startswith("no deal format") for s in said)
    assert any(s.startswith("no golden cases") for s in said) and any(s.startswith("no metrics") for s in said)
    assert any(s.startswith("no console menu entry") for s in said)


def test_doctor_prints_a_line_per_registered_game(tmp_path) -> None:
    import asyncio

    from storage.store import Store

    db = tmp_path / "h.db"

    async def make() -> None:
        store = await Store.open(f"sqlite:///{db}")
        await store.aclose()

    asyncio.run(make())
    out = CliRunner().invoke(app, ["doctor", "--database", f"sqlite:///{db}"])
    assert out.exit_code == 0, out.output
    assert report() == [f"game {d.id}: complete" for d in descriptors()]
    for line in report():
        assert line in out.output

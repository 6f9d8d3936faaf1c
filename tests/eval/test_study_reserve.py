"""A shown item is its member's for 30 minutes; after that others may take its place, and the member's late
answer counts only while the item still has room. Times are given, never waited for."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from storage import annotations as notes
from storage.annotations import Scope
from storage.store import Store

T = Scope("t")
CONSOLE = Scope("console", None, operator=True)  # the operator's CLI

T0 = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


async def _items(store: Store, *keys: str) -> None:
    await notes.add_items(store, [notes.NewItem(k, "ally", "bench", None, "", {"key": k}) for k in keys])


async def _answers(store: Store) -> dict[str, list[str]]:
    raw, votes = await notes.study(store)
    return {str(d["key"]): [str(v) for v in votes.get(str(d["key"]), [])] for d in raw}


async def test_a_lapsed_item_completed_by_others_gives_the_member_a_new_one(db_url: str) -> None:
    async with await Store.open(db_url) as store:
        await _lapsed_and_completed(store)


async def _lapsed_and_completed(store: Store) -> None:
    await _items(store, "x", "y")
    a = await notes.serve(store, "m:a", T, per_item=2, now=at(0))
    assert a is not None and a.key == "x" and a.fresh
    b = await notes.serve(store, "m:b", T, per_item=2, now=at(10))
    assert b is not None and b.key == "x"  # a's reservation and b: two of two
    assert await notes.answer(store, "m:b", 0, True, now=at(11)) == "x"
    c = await notes.serve(store, "m:c", T, per_item=2, now=at(12))
    assert c is not None and c.key == "y"  # x is full while a holds it
    d = await notes.serve(store, "m:d", T, per_item=2, now=at(40))
    assert d is not None and d.key == "x"  # a's 30 minutes are over
    assert await notes.answer(store, "m:d", 1, False, now=at(41)) == "x"
    # a comes back: x has its two answers, so a gets a new item and may never answer x
    assert await notes.answer(store, "m:a", 0, True, now=at(42)) is None
    back = await notes.serve(store, "m:a", T, per_item=2, now=at(42))
    assert back is not None and back.key == "y" and back.fresh and back.lapsed
    assert await notes.answer(store, "m:a", 0, True, now=at(43)) == "y"
    assert await _answers(store) == {"x": ["0", "1"], "y": ["0"]}


async def test_a_lapsed_item_with_room_is_reserved_again(store: Store) -> None:
    await _items(store, "x")
    assert (await notes.serve(store, "m:a", T, per_item=2, now=at(0))).key == "x"  # type: ignore[union-attr]
    again = await notes.serve(store, "m:a", T, per_item=2, now=at(45))
    assert again is not None and again.key == "x" and not again.fresh and not again.lapsed
    # reserved anew at minute 45: at minute 70 it still holds, so two others fill the item only around it
    other = await notes.serve(store, "m:b", T, per_item=2, now=at(70))
    assert other is not None and other.key == "x"
    assert await notes.serve(store, "m:c", T, per_item=2, now=at(70)) is None
    assert await notes.answer(store, "m:a", 2, True, now=at(71)) == "x"
    assert await notes.answer(store, "m:b", 1, False, now=at(71)) == "x"
    assert await _answers(store) == {"x": ["2", "1"]}


async def test_the_member_is_told_when_their_waiting_item_was_completed(store: Store) -> None:
    import sqlalchemy as sa

    from models.eval.human import Item, Task
    from models.eval.study import LAPSED, HumanStudy
    from storage.tables import AnnotationRow, table_of

    def item(key: str) -> dict[str, object]:
        return Item(key, Task.CHAMELEON, "Fruit", ("pear", "fig"), None, "sweet", ("pear", "fig"), 0,
                    source="bench").to_json()

    await notes.add_items(store, [notes.NewItem(k, "chameleon", "bench", None, "", item(k)) for k in ("x", "y", "z")])
    study = HumanStudy(store, [], per_item=1)
    assert "SNEAK human study" in await study.turn("c:a", CONSOLE)
    async with store.write() as conn:  # a's item was shown 40 minutes ago
        await conn.execute(sa.update(table_of(AnnotationRow)).values(served_at=datetime.now(UTC) - timedelta(minutes=40)))
    shown = await study.turn("c:b", CONSOLE)
    assert "Candidates: pear, fig" in shown
    # b is shown the fresh items first (y, z), then x, which nobody holds any more, and completes all three.
    for k in (1, 2, 3):
        assert f"Your score: {k} of {k} right" in await study.turn("c:b", CONSOLE, "1")
    await notes.add_items(store, [notes.NewItem("w", "chameleon", "bench", None, "", item("w"))])
    text = await study.turn("c:a", CONSOLE, "1")
    assert text.startswith(LAPSED) and "SNEAK human study" in text
    _, votes = await notes.study(store)
    assert votes == {"x": [0], "y": [0], "z": [0]}  # a's late answer to the completed x not counted; w is a's now
    assert (await notes.shown(store))["c:a"] == ["x", "w"]

"""The human study shows a logged clue only while its author's words may go into research: real SQLite and
PostgreSQL logs of a played, scored Chameleon game with two members and two AI seats, members judging it
through ``HumanStudy``, consent given and withdrawn between turns, an erasure, and the migration's backfill."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic import command

from bot.core.privacy import forget
from models.eval.decoys import FixedDecoys
from models.eval.evaluators import EmbeddingEvaluator
from models.eval.live import score_games
from models.eval.study import HumanStudy
from models.worker.embedding_backend import embedder_for
from storage import annotations as notes
from storage.people import set_research
from storage.store import Store, alembic_config
from storage.tables import ActionRow, AnnotationItemRow, SeatRow, table_of
from tests.eval.logging_helpers import log_random_game
from tests.storage import conftest as storage_fixtures

store = storage_fixtures.store  # a Store on each backend (db_url), as the storage tests have it
DECOYS = FixedDecoys(["outdoors", "everyday", "colourful", "household", "popular", "classic"])
ADA, BOB = "console:ada", "console:bob"
SCOPE = notes.Scope("console", None, operator=True)  # every console game: who is asked is not the point here
AI = "ai"  # the AI seats' clues, in ``clues_by``


async def played(store: Store) -> int:
    """A scored game in which Ada (seat 0) and Bob (seat 1) each gave an informed clue beside the AI seats'."""
    gid, _ = await log_random_game(store, "chameleon", "sneak", 4, seed=3, humans=(0, 1), agent="random",
                                   user_keys={0: ADA, 1: BOB}, tenant="console")
    await score_games(store, [EmbeddingEvaluator(embedder_for("minilm"), "embed:minilm")], DECOYS, game_id=gid)
    return gid


async def clues_by(store: Store, gid: int) -> dict[str, set[str]]:
    """Each author's clues among the game's items (``log:GAME:SEQ:PART``), told from the actions and seats
    tables (not from the items' author column, which is what is tested)."""
    async with store.connect() as conn:
        seat_of = dict((await conn.execute(sa.select(table_of(ActionRow).c.seq, table_of(ActionRow).c.seat)
                                           .where(table_of(ActionRow).c.game_id == gid))).all())
        member = {s: k for s, k, kind in (await conn.execute(sa.select(
            table_of(SeatRow).c.seat, table_of(SeatRow).c.user_key, table_of(SeatRow).c.kind)
            .where(table_of(SeatRow).c.game_id == gid))).all() if kind == "human"}
    raw, _ = await notes.study(store)
    out: dict[str, set[str]] = {}
    for item in raw:
        clue = notes.clue_of(str(item["key"]))
        out.setdefault(member.get(seat_of[int(clue.split(":")[2])], AI), set()).add(clue)
    return out


async def opened(store: Store, consent: str) -> tuple[HumanStudy, dict[str, set[str]]]:
    """A scored game (``played``), the study over it under ``consent`` with its items made, and each author's clues."""
    gid = await played(store)
    study = HumanStudy(store, ["embed:minilm"], consent=consent)
    assert await study.refresh() > 0
    return study, await clues_by(store, gid)


async def judged(study: HumanStudy, store: Store, member: str) -> set[str]:
    """The clues a member is shown when they judge until nothing is left (answering 1 each time)."""
    text = await study.turn(member, SCOPE)
    while "No item to judge" not in text:
        text = await study.turn(member, SCOPE, "1")
    return {notes.clue_of(k) for k in (await notes.shown(store)).get(member, [])}


async def test_opt_in_serves_a_members_clue_only_while_they_consent(store: Store) -> None:
    study, by = await opened(store, "opt-in")
    assert by.get(ADA) and by.get(BOB) and by.get(AI)  # the seed gives each kind of author a clue
    await set_research(store, ADA, True)
    # Ada said yes, Bob never said: a third member sees Ada's clues and the AI seats', none of Bob's.
    assert await judged(study, store, "console:cy") == by[ADA] | by[AI]
    # Ada withdraws: from the next turn on nothing of hers is shown; AI clues always are.
    await set_research(store, ADA, False)
    assert await judged(study, store, "console:dee") == by[AI]
    # Bob agrees: his clues come in at once, without any item being added again.
    await set_research(store, BOB, True)
    assert await judged(study, store, "console:eve") == by[BOB] | by[AI]


async def test_an_open_item_is_not_shown_again_after_its_author_withdraws(store: Store) -> None:
    study, by = await opened(store, "opt-in")
    await set_research(store, ADA, True)
    first = await notes.serve(store, "console:cy", SCOPE, per_item=5, consent="opt-in", tasks=None)
    while first is not None and notes.clue_of(first.key) not in by[ADA]:  # until Cy holds one of Ada's clues
        await notes.answer(store, "console:cy", 0, True)
        first = await notes.serve(store, "console:cy", SCOPE, per_item=5, consent="opt-in")
    assert first is not None and first.fresh
    await set_research(store, ADA, False)
    again = await notes.serve(store, "console:cy", SCOPE, per_item=5, consent="opt-in")
    assert again is None or (again.key != first.key and notes.clue_of(again.key) not in by[ADA])


async def test_notice_serves_a_member_until_they_opt_out(store: Store) -> None:
    study, by = await opened(store, "notice")
    # Nobody said anything: everyone's clues are shown.
    assert await judged(study, store, "console:cy") == by[ADA] | by[BOB] | by[AI]
    await set_research(store, BOB, False)
    assert await judged(study, store, "console:dee") == by[ADA] | by[AI]
    # With consent off (no per-member choice) every clue is shown, Bob's too.
    off = HumanStudy(store, ["embed:minilm"], consent="off")
    assert await judged(off, store, "console:eve") == by[ADA] | by[BOB] | by[AI]


async def test_erasure_leaves_no_author_key_and_serves_nothing_of_the_erased_member(store: Store) -> None:
    study, by = await opened(store, "opt-in")
    await set_research(store, ADA, True)
    items = table_of(AnnotationItemRow)
    async with store.connect() as conn:
        authors = dict((await conn.execute(sa.select(items.c.key, items.c.author))).all())
    assert {notes.clue_of(k) for k, a in authors.items() if a == ADA} == by[ADA]
    assert {notes.clue_of(k) for k, a in authors.items() if a is None} == by[AI]
    await forget(store, ADA, actor=ADA)
    async with store.connect() as conn:
        after = dict((await conn.execute(sa.select(items.c.key, items.c.author))).all())
    assert ADA not in after.values()
    erased = {after[k] for k, a in authors.items() if a == ADA}
    assert len(erased) == 1 and next(iter(erased)).startswith("erased:")  # the same unlinked key as her seat
    assert {a for k, a in authors.items() if a == BOB} == {after[k] for k, a in authors.items() if a == BOB}
    # Her erased clues (stand-ins now) are nobody's words to judge: never shown, whatever the mode.
    assert await judged(study, store, "console:cy") == by[AI]
    assert await judged(HumanStudy(store, ["embed:minilm"], consent="notice"), store, "console:dee") == by[BOB] | by[AI]
    assert await judged(HumanStudy(store, ["embed:minilm"], consent="off"), store, "console:eve") == by[BOB] | by[AI]


async def test_the_migration_fills_in_the_authors_of_items_stored_before_it(db_url: str) -> None:
    st = await Store.open(db_url)
    try:
        gid = await played(st)
        await HumanStudy(st, ["embed:minilm"]).refresh()
        by = await clues_by(st, gid)
    finally:
        await st.aclose()
    cfg = alembic_config(db_url)
    await asyncio.to_thread(command.downgrade, cfg, "0011")  # items as stored before authors were kept
    await asyncio.to_thread(command.upgrade, cfg, "head")
    st = await Store.open(db_url)
    try:
        items = table_of(AnnotationItemRow)
        async with st.connect() as conn:
            authors = dict((await conn.execute(sa.select(items.c.key, items.c.author))).all())
    finally:
        await st.aclose()
    found: dict[str, set[str]] = {}
    for key, author in authors.items():
        found.setdefault(author or AI, set()).add(notes.clue_of(str(key)))
    assert found == by

"""The table service with the privacy desk wired as the app wires it: one privacy line on a
member's first join in a tenant (never again there), and an admin's export that carries only
consenting members' words, says how many it withheld and is audited."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from bot.core.messages import Command, CommandKind
from bot.core.privacy import PrivacyDesk
from bot.core.redact import STAND_INS
from storage import people
from tests.bot.core.conftest import ALICE, BOB, HERE, Harness
from tests.bot.core.test_service import open_table


def wire(h: Harness) -> PrivacyDesk:
    desk = PrivacyDesk(h.store, contact="privacy@example.org", consent="opt-in", retention_days=None)
    h.service.join_notice = desk.notice
    h.service.export_filter = desk.export_filter
    h.service.ai_tables.add_finish_listener(desk.after_game)
    return desk


async def test_first_join_line_and_filtered_audited_export(harness: Harness) -> None:
    h = harness
    wire(h)
    r = await h.send(CommandKind.CREATE, ALICE, HERE, game="chameleon", variant="classic")
    assert r.ok
    first = await h.send(CommandKind.JOIN, BOB, HERE)
    assert first.ok and "`privacy`" in first.text
    assert (await h.send(CommandKind.LEAVE, BOB, HERE)).ok
    again = await h.send(CommandKind.JOIN, BOB, HERE)
    assert again.ok and "`privacy`" not in again.text
    await h.send(CommandKind.ABORT, ALICE, HERE)

    await open_table(h, "chameleon", "classic", 1)
    await h.play_humans()
    await people.set_research(h.store, ALICE.key, True)  # Alice consented; Bob never said
    exported = await h.service.export(Command(CommandKind.EXPORT, ALICE, HERE, is_admin=True), fmt="jsonl")
    assert isinstance(exported, tuple), exported
    records = [json.loads(line) for line in exported[1].splitlines()]
    game = next(r for r in records if r["status"] == "finished")
    logged = await h.store.load_game(game["id"])
    bob_seats = {s.seat for s in logged.seats if s.user_key == BOB.key}
    assert bob_seats
    assert game["withheld"] > 0
    texts = [a["value"] for a in game["actions"] if a["seat"] in bob_seats and a["kind"] == "clue"]
    assert texts and all(v[0] in STAND_INS for v in texts), texts
    audit = await people.audit_log(h.store)
    assert audit[0].action == "export" and "withheld" in audit[0].scope and audit[0].rows == len(records)


async def test_a_stop_ends_a_sweep_in_flight_quietly(harness: Harness, monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    """SIGTERM can land while the hourly sweep is inside the database: the sweep is cancelled with the
    bot, has ended before the store closes, and says so in one info line; APScheduler logs no error
    and no traceback."""
    started, finished = asyncio.Event(), asyncio.Event()

    async def slow(_store: object) -> int:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.set()
        return 0

    monkeypatch.setattr("bot.core.privacy.finish_pending", slow)
    desk = PrivacyDesk(harness.store, contact=None, consent="opt-in", retention_days=None)
    caplog.set_level(logging.DEBUG)
    desk.start_schedule()
    await asyncio.wait_for(started.wait(), 10)
    await asyncio.wait_for(desk.stop_schedule(), 10)
    assert finished.is_set(), "the sweep in flight has ended when the stop returns"
    for _ in range(5):
        await asyncio.sleep(0)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert "Traceback" not in caplog.text and "privacy sweep stopped with the bot" in caplog.text

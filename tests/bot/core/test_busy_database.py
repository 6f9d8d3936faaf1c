"""A command the database has no room for gets one sentence, "busy, try again", and changes nothing: a real
SQLite file whose connection pool is held by other work, so the command's checkout times out."""

from __future__ import annotations

import logging
import sqlite3
from contextlib import AsyncExitStack

import pytest
import sqlalchemy as sa

from bot.core.messages import CommandKind
from bot.core.service import BUSY
from storage.engine import out_of_capacity
from tests.bot.core.conftest import ALICE, HERE, Harness


async def test_a_command_that_finds_every_connection_taken_is_told_busy_and_changes_nothing(
        harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    pool = harness.store.engine.sync_engine.pool
    assert isinstance(pool, sa.pool.QueuePool)
    pool._timeout = 0.2  # the checkout wait (30 s by default), short for the test
    async with AsyncExitStack() as held:
        for _ in range(pool.size() + pool._max_overflow):  # every connection the pool may open, held by other work
            await held.enter_async_context(harness.store.engine.connect())
        with caplog.at_level(logging.DEBUG):
            reply = await harness.send(CommandKind.CREATE, ALICE, HERE, inbound="evt-busy", game="spy")
    assert not reply.ok and reply.text == BUSY
    assert "answered busy" in caplog.text and "Traceback" not in caplog.text
    assert not harness.service.tables and (await harness.store.games()) == []
    # With room again, the same command (its event redelivered) is taken once.
    assert (await harness.send(CommandKind.CREATE, ALICE, HERE, inbound="evt-busy", game="spy")).ok
    assert (await harness.send(CommandKind.CREATE, ALICE, HERE, inbound="evt-busy", game="spy")).duplicate


def test_only_capacity_counts_as_busy() -> None:
    assert out_of_capacity(sa.exc.TimeoutError("QueuePool limit of size 5 overflow 10 reached"))
    locked = sqlite3.OperationalError("database is locked")
    locked.sqlite_errorcode = sqlite3.SQLITE_BUSY  # as the driver sets it
    assert out_of_capacity(sa.exc.OperationalError("BEGIN IMMEDIATE", {}, locked))
    syntax = sqlite3.OperationalError("no such table: games")
    syntax.sqlite_errorcode = sqlite3.SQLITE_ERROR
    assert not out_of_capacity(sa.exc.OperationalError("SELECT", {}, syntax))
    assert not out_of_capacity(ValueError("bad input")) and not out_of_capacity(TimeoutError("a model call"))

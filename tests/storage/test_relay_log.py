"""The relay's refused messages are logged without flooding the log: anyone who may connect to the
database may NOTIFY a process's channel as fast as it likes, and each refusal used to be a log line.
The first of a kind is logged at once, the rest of that interval in one line with how many
(``storage.relay.RefusalLog``); none goes uncounted.

Against a real PostgreSQL: a real relay listening on its channel, and a plain asyncpg connection
sending it forged and unsigned notifications."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from datetime import timedelta

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from storage.relay import REFUSALS_LOGGED_EVERY_S, RefusalLog, Sealer
from storage.store import Store
from tests.keys import RELAY_KEY

UNSIGNED = "a relay notification without this deployment's key (or too old) was ignored"
UNOPENED = "a relay message that does not open with this deployment's key was ignored"


def counted(records: list[logging.LogRecord], message: str) -> list[int]:
    """How many refusals each line of ``message`` tells."""
    out = []
    for r in records:
        text = r.getMessage()
        if text == message:
            out.append(1)
        elif text.startswith(message):
            m = re.fullmatch(re.escape(message) + r" \((\d+) times in the last [\d.]+ s\)", text)
            assert m is not None, text
            out.append(int(m.group(1)))
    return out


async def test_one_line_per_kind_per_interval_with_the_count(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("tests.relay_log")
    refusals = RefusalLog(logger, every_s=0.3)
    with caplog.at_level(logging.WARNING, logger="tests.relay_log"):
        for _ in range(50):
            refusals.refused("first kind")
        refusals.refused("second kind")
        assert counted(caplog.records, "first kind") == [1] and counted(caplog.records, "second kind") == [1]
        await asyncio.sleep(0.6)  # the interval ends: the 49 held back are told in one line
        assert counted(caplog.records, "first kind") == [1, 49]
        assert counted(caplog.records, "second kind") == [1]  # nothing held: no second line
        await asyncio.sleep(1.0)  # an interval since that line, and none held: the next is a line at once
        refusals.refused("first kind")
        refusals.refused("first kind")
        refusals.flush()  # closing tells what is held
        assert counted(caplog.records, "first kind") == [1, 49, 1, 1]
    await asyncio.sleep(0.5)
    assert len(caplog.records) == 5, "a line came after the flush"


async def test_a_flood_of_forged_notifications_is_a_few_lines_with_every_refusal_counted(
        pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    store = await Store.open(pg_url)
    u = make_url(pg_url)
    intruder = await asyncpg.connect(user=u.username, password=u.password, database=u.database,
                                     host=u.query.get("host") or u.host or "localhost", port=u.port)
    try:
        await store.own_tables("proc-a", timedelta(seconds=60), relay_key=RELAY_KEY)
        relay = store.relay
        assert relay is not None and relay.refusals.every_s == REFUSALS_LOGGED_EVERY_S
        relay.refusals.every_s = 600.0  # longer than any flood below takes, however slow the machine

        async def handler(body: dict[str, object]) -> dict[str, object]:
            raise AssertionError("a forged request was answered")

        await relay.start(handler)
        wrong = Sealer("another-deployment-key-0123456789abcdef0123456789")
        body = {"from": "intruder", "body": {"game": 1}}
        with caplog.at_level(logging.WARNING, logger="storage.relay"):
            for n in range(100):
                await intruder.execute("SELECT pg_notify($1, $2)", relay.channel, json.dumps({"t": "ask", "id": f"x{n}"}))
                # A well-formed part sealed under another deployment's key fails the MAC check: the same kind.
                for part in wrong.seal(relay.channel, "ask", f"y{n}", body):
                    await intruder.execute("SELECT pg_notify($1, $2)", relay.channel, part)
            for _ in range(100):
                if relay.refused >= 200:
                    break
                await asyncio.sleep(0.05)
            assert relay.refused == 200
            assert counted(caplog.records, UNSIGNED) == [1]
            await relay.aclose()  # closing tells what is held back
            assert counted(caplog.records, UNSIGNED) == [1, 199]
            assert counted(caplog.records, UNOPENED) == []
    finally:
        await intruder.close()
        await store.aclose()

"""The command relay between bot processes against a database role that is not the bot's: real bot
processes' stores and a real PostgreSQL, the bot running under a role with only the grants
docs/scaling.md names, and an intruder role created with LOGIN and no grant at all (PostgreSQL lets
any role that may connect LISTEN on and NOTIFY any channel, and PUBLIC may connect by default).

The intruder is given more than it could learn (the real channel names) and still: a forged SHOW,
a forged move and a forged admin abort (unsigned, signed with another key, or a captured request
sent again) are refused and change nothing; by only listening it hears nothing of the member's
secret or of the relayed command; the tables themselves are closed to it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from bot.core import forward
from bot.core.messages import Command, CommandKind, Place, UserRef
from storage.relay import Sealer
from storage.store import RelayKeyMissing, Store
from tests.keys import RELAY_KEY
from tests.storage.test_command_reach import HOST, PLACE, TENANT, _member_owes_a_move, actions, member_moves, played_once, service_on


def _dsn(url: str, user: str | None = None) -> dict[str, Any]:
    u = make_url(url)
    kw: dict[str, Any] = {"user": user or u.username, "password": "pw" if user else u.password, "database": u.database,
                          "host": u.query.get("host") or u.host or "localhost"}
    if u.port:
        kw["port"] = u.port
    return kw


@pytest.fixture
async def roles(pg_url: str) -> AsyncIterator[tuple[str, str]]:
    """The bot's role (CONNECT through PUBLIC, USAGE and CREATE on the schema: the migrations make its
    tables) and an intruder with LOGIN and nothing granted."""
    n = f"{os.getpid()}_{id(pg_url) % 10_000}"
    bot, intruder = f"hush_bot_{n}", f"hush_intruder_{n}"
    admin = await asyncpg.connect(**_dsn(pg_url))
    try:
        await admin.execute(f"CREATE ROLE {bot} LOGIN PASSWORD 'pw'")
        await admin.execute(f"CREATE ROLE {intruder} LOGIN PASSWORD 'pw'")
        await admin.execute(f"GRANT USAGE, CREATE ON SCHEMA public TO {bot}")
        yield bot, intruder
    finally:
        for role in (bot, intruder):
            await admin.execute(f"DROP OWNED BY {role}")
        await admin.close()
        admin = await asyncpg.connect(**{**_dsn(pg_url), "database": "postgres"})
        try:
            for role in (bot, intruder):
                # The test database is dropped after this fixture: no object of the roles is left.
                await admin.execute(f"DROP ROLE IF EXISTS {role}")
        except asyncpg.PostgresError:
            pass
        finally:
            await admin.close()


async def test_several_processes_on_postgresql_need_the_relay_key(pg_url: str) -> None:
    store = await Store.open(pg_url)
    try:
        for key in (None, "short"):
            with pytest.raises(RelayKeyMissing, match="HUSHTABLE_RELAY_KEY"):
                await store.own_tables("proc-a", timedelta(seconds=5), relay_key=key)
        assert store.leases is None and store.relay is None  # nothing was held
    finally:
        await store.aclose()


async def test_a_role_without_grants_neither_forges_nor_reads_relayed_commands(pg_url: str, roles: tuple[str, str]) -> None:
    bot, intruder = roles
    bot_url = make_url(pg_url).set(username=bot, password="pw").render_as_string(hide_password=False)
    store_a, store_b = await Store.open(bot_url), await Store.open(bot_url)
    spy = await asyncpg.connect(**_dsn(pg_url, intruder))
    heard: list[str] = []
    try:
        await store_a.own_tables("proc-a", timedelta(seconds=5), relay_key=RELAY_KEY)
        await store_b.own_tables("proc-b", timedelta(seconds=60), relay_key=RELAY_KEY)
        a, b = service_on(store_a), service_on(store_b)
        await a.start()
        await b.start()
        relay_a, relay_b = store_a.relay, store_b.relay
        assert relay_a is not None and relay_b is not None
        gid, act = await _member_owes_a_move(a, store_a)
        before = await actions(store_a, gid)

        # The intruder listens where the processes do, and where channels named after the processes'
        # application_name (as pg_stat_activity shows them) would be.
        old = ["hushtable_" + hashlib.sha256(o.encode()).hexdigest()[:40] for o in ("proc-a", "proc-b", intruder)]
        for channel in (relay_a.channel, relay_b.channel, *old):
            await spy.add_listener(channel, lambda _c, _p, _ch, payload: heard.append(payload))
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await spy.fetch("SELECT * FROM games")  # the log itself is closed to it

        # A member's SHOW asked of b (in direct messages: the table stays with a) is relayed to a.
        show = Command(CommandKind.SHOW, HOST, Place("memory", "dm-1"), {"game_id": gid}, None, tenant="memory:dm")
        shown = await b.handle(show)
        assert shown.ok and b.holding.relayed == 1, shown.text
        await asyncio.sleep(0.5)
        assert heard, "the intruder heard the relay's notifications"
        words = {w.strip(".,:;!?()*_`'\"") for w in shown.text.split()}
        secret_words = {w for w in words if len(w) >= 5}
        assert secret_words
        for payload in heard:
            assert set(json.loads(payload)) == {"k", "id", "ts", "i", "n", "p", "mac"}
            assert not any(w in payload for w in secret_words), payload
            assert "Host" not in payload and TENANT not in payload and "is_admin" not in payload
        captured_ask = next(p for p in heard if json.loads(p)["k"] == "ask")

        # Forgeries: unsigned (the relay's old message), signed with another key, and the captured
        # request sent again; each as SHOW, a move and an admin's abort, answered to the intruder.
        abort = Command(CommandKind.ABORT, UserRef("memory", "666", "Intruder"), PLACE, {"game_id": gid}, "abort-x",
                        is_admin=True, tenant=TENANT)
        wrong = Sealer("another-deployment-key-0123456789abcdef0123456789")
        sent = 0
        answered, refused = relay_a.answered, relay_a.refused
        for n, cmd in enumerate((Command(CommandKind.SHOW, HOST, PLACE, {"game_id": gid}, None, tenant=TENANT), act, abort)):
            body = {"game": gid, "command": forward.command_json(cmd), "handback": intruder}
            unsigned = json.dumps({"t": "ask", "id": f"x{n}", "from": intruder, "body": body})
            await spy.execute("SELECT pg_notify($1, $2)", relay_a.channel, unsigned)
            await spy.execute("SELECT pg_notify($1, $2)", old[0], unsigned)
            for part in wrong.seal(relay_a.channel, "ask", f"y{n}", {"from": intruder, "body": body}):
                await spy.execute("SELECT pg_notify($1, $2)", relay_a.channel, part)
            await spy.execute("SELECT pg_notify($1, $2)", relay_a.channel, captured_ask)
            sent += 3
        await asyncio.sleep(1.5)
        assert relay_a.answered == answered, "a forged or replayed request was answered"
        assert relay_a.refused - refused >= sent
        assert await actions(store_a, gid) == before, "a forged move was played"
        row = await store_a.game(gid)
        assert row is not None and row.status.value == "running", "a forged abort ended the game"
        assert gid in a.tables

        # The real move still goes through the relay, once.
        reply = await b.handle(act)
        assert reply.ok and not reply.duplicate, reply.text
        assert await member_moves(store_a, gid, before) == played_once(act)  # once
        await a.wait_idle()
        await b.wait_idle()
        await a.stop()
        await b.stop()
    finally:
        await spy.close()
        await store_a.aclose()
        await store_b.aclose()

"""A bot process for the fencing and outage tests: one of several on a PostgreSQL, it keeps
``want`` tables of its own running (each with one human seat that never answers, so every
human turn ends by its deadline, and AI seats), until the file ``stop`` names exists.

Every chat message and direct message it sends is written to the ``wire`` table through a
database connection of its own (named after its lease owner): the wire is the platform, so the
test judges each send by the database, in commit order, like the turns and deadlines it writes.
A send is one statement in one network message, committed by the server on arrival, as an HTTP
request is handled by a platform once written; like the Discord and Slack adapters, the wire
checks the send's fence right before that request (``bot.core.platform.check_send``). Like a
platform that de-duplicates by a message's key, the wire drops a message whose key (a turn's
outbox id) it already carries (tests/storage/fencing.py counts those in ``wire_dropped``).

    python -m tests.storage.fence_worker URL OWNER LEASE_S WANT DEADLINE_S STOP_FILE
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from datetime import timedelta
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, MessageRef, Outgoing, Place, UserRef
from bot.core.platform import check_send
from bot.core.service import TableService
from bot.settings import Settings
from models.agents import AgentRegistry
from storage.store import Store
from tests.keys import RELAY_KEY

TABLE = ("spy", "classic", 4)  # one human seat and three AI seats
WIRE_SQL = ("CREATE TABLE IF NOT EXISTS wire (id bigserial PRIMARY KEY, channel text, user_key text, key text UNIQUE, "
            "head text, "
            "game_id int, writer text DEFAULT current_setting('application_name'), "
            "at timestamptz DEFAULT clock_timestamp())")


def _literal(value: str | None) -> str:
    return "NULL" if value is None else "'" + value.replace("'", "''") + "'"


class WirePlatform(MemoryPlatform):
    """The in-memory platform, with every send written to the database first (the send itself)."""

    def __init__(self, url: str, owner: str) -> None:
        super().__init__()
        self.dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self.owner = owner
        self._conn: asyncpg.Connection | None = None
        self._lock = asyncio.Lock()

    async def _wire(self, channel: str | None, user_key: str | None, m: Outgoing) -> None:
        async with self._lock:
            if self._conn is None or self._conn.is_closed():
                self._conn = await asyncpg.connect(self.dsn, server_settings={"application_name": self.owner})
            sql = (f"INSERT INTO wire (channel, user_key, key, head) VALUES ({_literal(channel)}, "
                   f"{_literal(user_key)}, {_literal(m.key)}, {_literal((m.title or m.text)[:30])})")
            check_send()  # the request leaves right after this: nothing awaited in between
            try:
                await self._conn.execute(sql)  # no arguments: the simple protocol, one message
            except BaseException:
                conn, self._conn = self._conn, None
                conn.terminate()
                raise

    async def post(self, place: Place, m: Outgoing) -> MessageRef:
        await self._wire(place.channel, None, m)
        return await super().post(place, m)

    async def dm(self, user: UserRef, m: Outgoing) -> MessageRef:
        await self._wire(None, user.key, m)
        return await super().dm(user, m)


async def main(url: str, owner: str, lease_s: float, want: int, deadline_s: float, stop_file: Path) -> None:
    store = await Store.open(url)
    await store.own_tables(owner, timedelta(seconds=lease_s), relay_key=RELAY_KEY)
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]
    service = TableService(store, settings=settings, agents=AgentRegistry())
    service.attach(WirePlatform(url, owner))
    await service.start()
    print("READY", flush=True)
    game, variant, seats = TABLE
    for k in itertools.count():
        if stop_file.exists():
            break
        mine = [t for t in service.tables.values() if not t.over]
        if len(mine) >= want:
            await asyncio.sleep(0.2)
            continue
        host = UserRef("memory", f"{owner}-h{k}", f"H{k}")
        place = Place("memory", f"{owner}-c{k}")
        try:
            for kind, args in ((CommandKind.CREATE, {"game": game, "variant": variant, "deadline_s": deadline_s}),
                               (CommandKind.ADD_AI, {"agent": "random", "count": seats - 1}),
                               (CommandKind.START, {"seed": 7 + k})):
                reply = await service.handle(Command(kind, host, place, args, f"{owner}-{kind}-{k}"))
                if not reply.ok:
                    print(f"REFUSED {kind} {k}: {reply.text}", flush=True)
                    break
        except Exception as exc:  # the database is away: the next table is opened later
            print(f"OPEN FAILED {type(exc).__name__}", flush=True)
            await asyncio.sleep(0.5)
    # Stop opening tables; play on until none of this process's tables is running.
    while any(not t.over for t in service.tables.values()):
        await asyncio.sleep(0.1)
    print("ALL DONE", flush=True)
    await asyncio.sleep(float("inf"))  # the test ends the process when every process is done


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
                     Path(sys.argv[6])))

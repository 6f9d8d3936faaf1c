"""A process that holds every running game of a database and renews its leases until killed
(tests/storage/test_ownership.py SIGKILLs it and watches another process take over)."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from storage.store import Store
from tests.keys import RELAY_KEY


async def main(url: str, owner: str, ttl_s: float) -> None:
    store = await Store.open(url)
    leases = await store.own_tables(owner, timedelta(seconds=ttl_s), relay_key=RELAY_KEY)
    assert leases is not None
    taken = await leases.acquire()
    print(f"HELD {len(taken)}", flush=True)
    while True:  # renew well before expiry, as the bot does
        await asyncio.sleep(ttl_s / 4)
        await leases.acquire()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))

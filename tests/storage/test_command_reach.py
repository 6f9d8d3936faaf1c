"""A member's move that reaches a bot process which does not hold the game (two processes' stores on
one PostgreSQL): while the holder's lease is alive the move is answered with one sentence and
nothing is logged; once the holder stopped renewing (it died), the receiving process takes the game
over and applies the move exactly once."""

from __future__ import annotations

import asyncio
import random
from datetime import timedelta

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.service import TableService
from bot.settings import Settings
from games.play import random_action
from models.agents import AgentRegistry
from storage.store import Store
from tests.vocabulary import NONSENSE

HOST = UserRef("memory", "1", "Host")
PLACE = Place("memory", "chan-1")


def service_on(store: Store) -> TableService:
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]
    service = TableService(store, settings=settings, agents=AgentRegistry())
    service.attach(MemoryPlatform())
    return service


async def actions(store: Store, game_id: int) -> int:
    return len((await store.load_game(game_id)).actions)


async def test_a_move_for_a_table_held_elsewhere_is_refused_then_taken_over(pg_url: str) -> None:
    store_a, store_b = await Store.open(pg_url), await Store.open(pg_url)
    try:
        await store_a.own_tables("proc-a", timedelta(seconds=1))
        await store_b.own_tables("proc-b", timedelta(seconds=60))  # its own supervisor stays out of the way
        a, b = service_on(store_a), service_on(store_b)
        await a.start()
        await b.start()
        for kind, args in ((CommandKind.CREATE, {"game": "spy", "variant": "classic"}),
                           (CommandKind.ADD_AI, {"agent": "random", "count": 4}), (CommandKind.START, {"seed": 3})):
            reply = await a.handle(Command(kind, HOST, PLACE, args, f"{kind}-1"))
            assert reply.ok, reply.text
        (table,) = a.tables.values()
        gid = table.game_id
        for _ in range(500):  # the AIs play until the member owes a move
            await a.wait_idle()
            seat = next((s for s in table.engine.to_act(table.state) if not table.seats[s].is_ai), None)
            if seat is not None:
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the member never had a move to make")
        spec = table.engine.legal(table.state, seat)
        assert spec is not None
        move = random_action(spec, random.Random(1), NONSENSE)
        act = Command(CommandKind.ACT, HOST, PLACE, {"game_id": gid, "seat": seat, "kind": move.kind,
                                                    "value": list(move.value)}, "act-1")
        before = await actions(store_a, gid)

        reply = await b.handle(act)  # proc-a holds the game and renews: b says it is moving
        assert not reply.ok and "moving" in reply.text
        assert await actions(store_b, gid) == before
        assert gid not in b.tables

        await a.stop()  # proc-a dies: its lease is no longer renewed
        await asyncio.sleep(1.2)
        reply = await b.handle(act)  # the same move, sent again: b takes the game over and plays it
        assert reply.ok, reply.text
        assert gid in b.tables and gid in (store_b.leases.held if store_b.leases else {})
        assert await actions(store_b, gid) == before + 1
        assert (await b.handle(act)).duplicate  # once only
        await b.wait_idle()
        assert await actions(store_b, gid) >= before + 1
        await b.stop()
    finally:
        await store_a.aclose()
        await store_b.aclose()

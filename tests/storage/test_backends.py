"""The bot on each database: a full game of every kind through the table service on SQLite and on
PostgreSQL (the log replays to the stored result), and SIGKILL-and-resume on PostgreSQL compared
with an uninterrupted run (tests/bot/core/test_crash_resume.py does the same on SQLite)."""

from __future__ import annotations

import asyncio
import io
import random
from typing import Any

import pytest
import sqlalchemy as sa

from bot.core.memory import MemoryPlatform
from bot.core.messages import Command, CommandKind, Place, UserRef
from bot.core.observe import ServiceObserver
from bot.core.service import TableService
from bot.settings import Settings
from games.catalog import descriptors
from games.record import parse, replay_record
from models.agents import AgentRegistry
from storage.engine import make_engine
from storage.export import export_games
from storage.store import Store
from tests.bot.core import crash_worker

HOST = UserRef("memory", "1", "Host")

def _tables() -> list[tuple[str, str, int]]:
    """One table per registered game: its default variant at its fewest seats."""
    out = []
    for d in descriptors():
        cfg = d.engine.make_config()
        out.append((d.id, str(d.variants[0]), d.engine.seat_range(cfg)[0]))
    return out


GAMES = _tables()


async def play_ai_tables(store: Store, tables: list[tuple[str, str, int]], *, seed: int = 7,
                         observer: ServiceObserver | None = None) -> TableService:
    """Open, fill with random AIs and start one table per entry; returns once every game has ended."""
    settings = Settings(_env_file=None, default_agent="random", fallback_agent="random")  # type: ignore[call-arg]
    service = TableService(store, settings=settings, agents=AgentRegistry(), observer=observer)
    service.attach(MemoryPlatform())
    await service.start()
    for i, (game, variant, seats) in enumerate(tables):
        place = Place("memory", f"chan-{i}")
        for kind, args in ((CommandKind.CREATE, {"game": game, "variant": variant, "spectate": True}),
                           (CommandKind.ADD_AI, {"agent": "random", "count": seats}),
                           (CommandKind.START, {"seed": seed + i})):
            reply = await service.handle(Command(kind, HOST, place, args, f"{kind}-{i}"))
            assert reply.ok, reply.text
    for _ in range(3000):
        # A table marked over is still letting go (result announced, memory freed): wait for it,
        # or stopping would cancel that and leave it counted as running.
        if not await store.unfinished_games() and not service.tables:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the games did not finish")
    await service.stop()
    return service


async def assert_every_game_replays(store: Store, expected: int) -> None:
    """Export every ended game and replay it through its engine: the result must be the stored one."""
    buf = io.StringIO()
    assert await export_games(store, out=buf, fmt="jsonl", secret="k") == expected
    for line in buf.getvalue().splitlines():
        rec = parse([line])
        _, _, result = replay_record(rec)
        assert result is not None and rec.result is not None
        assert sorted(result.winners) == sorted(rec.result["winners"])


async def test_a_full_game_of_each_kind(db_url: str) -> None:
    async with await Store.open(db_url) as store:
        await play_ai_tables(store, GAMES)
        rows = await store.games()
        assert [(r.game, r.status) for r in rows] == [(g, "finished") for g, _, _ in GAMES]
        assert all(r.result for r in rows)
        await assert_every_game_replays(store, len(GAMES))


# --------------------------------------------------------------------------- crash and resume on PostgreSQL


class Probe:
    """Reads a PostgreSQL log from the test process while the worker writes it."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.engine = make_engine(url)

    def __call__(self, sql: str) -> list[Any]:
        async def go() -> list[Any]:
            async with self.engine.connect() as conn:
                return list((await conn.execute(sa.text(sql))).all())

        try:
            return self.loop.run_until_complete(go())
        except sa.exc.ProgrammingError:  # tables not made yet
            return []

    def actions(self) -> int:
        rows = self("select count(*) from actions")
        return int(rows[0][0]) if rows else 0

    def dump(self) -> dict[str, list[Any]]:
        return {
            "games": self("select id, game, variant, config::text, seed, place, status, result::text from games order by id"),
            "seats": self("select game_id, seat, kind, user_key, agent_spec from seats order by game_id, seat"),
            "actions": self("select game_id, seq, seat, kind, value::text, source, actor, inbound_id from actions order by game_id, seq"),
            "events": self("select game_id, seq, action_seq, kind, data::text, audience::text from events order by game_id, seq"),
            "inbound": sorted(r[0] for r in self("select key from inbound")),
        }

    def close(self) -> None:
        self.loop.run_until_complete(self.engine.dispose())
        self.loop.close()


def normalised(probe: Probe) -> dict[str, list[Any]]:
    """The log with game ids replaced by their place. The ids themselves may differ from the reference
    run's: processes that start tables at once number them in any order, and PostgreSQL never hands
    a sequence value back, so a create cut off by SIGKILL before its COMMIT leaves a gap (the same
    table is then created again under the next id)."""
    place = {gid: p for gid, p in probe("select id, place from games")}
    dump = probe.dump()
    out: dict[str, list[Any]] = {"games": sorted((r[5], *r[1:5], *r[6:]) for r in dump["games"])}
    for table in ("seats", "actions", "events"):
        out[table] = sorted((place[r[0]], *r[1:]) for r in dump[table])
    out["inbound"] = dump["inbound"]
    return out


def skip_a_game_id(url: str, probe: Probe) -> None:
    """Take one value from the games' id sequence of ``url`` (its schema made as the bot makes it), as a
    create cut off between its INSERT and its COMMIT does."""
    async def schema() -> None:
        await (await Store.open(url)).aclose()

    probe.loop.run_until_complete(schema())
    assert probe("select nextval(pg_get_serial_sequence('games', 'id'))") == [(1,)]


def run_worker(url: str, probe: Probe, kill_after_actions: int | None = None, timeout: float = 180) -> bool:
    """tests/bot/core/crash_worker.py on this database; SIGKILLed once that many actions are logged."""
    return crash_worker.run(url, probe.actions, kill_after_actions, timeout)


@pytest.fixture
def pg_url_2(postgres_server: Any) -> Any:
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


def test_sigkill_and_resume_on_postgres(crash_reference: str, pg_url_2: str) -> None:
    ref_probe, probe = Probe(crash_reference), Probe(pg_url_2)
    try:
        reference = normalised(ref_probe)
        total = len(reference["actions"])
        # Where a kill lands between a create's INSERT and its COMMIT, the table is created again under
        # the next id; one id is skipped up front so that every run compares through such a gap.
        skip_a_game_id(pg_url_2, probe)
        r = random.Random(1)
        kills = 0
        for _ in range(2):
            done = probe.actions()
            if done >= total - 1:
                break
            if not run_worker(pg_url_2, probe, kill_after_actions=r.randint(done + 1, total - 1)):
                kills += 1
        assert kills >= 1
        assert run_worker(pg_url_2, probe)
        got = normalised(probe)
        for table in ("games", "seats", "actions", "events", "inbound"):
            assert got[table] == reference[table], table
    finally:
        ref_probe.close()
        probe.close()

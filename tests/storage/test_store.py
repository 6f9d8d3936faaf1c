"""The store against a real SQLite file and a real PostgreSQL database (``db_url`` in
tests/conftest.py runs each test on both): sequencing, deduplication, atomic turns,
lifecycle, round trips, deadlines, announce-once, and writers in two connections at once."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from storage import evaluations
from storage.evaluations import EvaluationRecord
from storage.store import (
    ActionRecord,
    AgentCallRecord,
    EventRecord,
    GameNotFound,
    GameStateError,
    SeatRecord,
    Store,
)
from storage.tables import ActionSource, AgentOperation, DeadlineState, GameStatus, SeatKind

# What a value that JSON cannot hold raises, by driver: the driver's TypeError, or SQLAlchemy's wrapper.
UNSERIALISABLE = (TypeError, ValueError, sa.exc.StatementError)


async def create(store: Store, **kw: Any) -> int:
    """``create_game`` for a key never seen: the id is always there."""
    gid = await store.create_game(**kw)
    assert gid is not None
    return gid



SEATS = [
    SeatRecord(0, SeatKind.HUMAN, "Alice", user_key="discord:111"),
    SeatRecord(1, SeatKind.HUMAN, "Bob", user_key="discord:222"),
    SeatRecord(2, SeatKind.AI, "Player 3", agent_spec="llm:smollm2"),
]


async def new_running_game(store: Store, *, game: str = "decrypto", place: str = "chan-1", seed: int = 42) -> int:
    gid = await create(store,
        game=game,
        variant="benchmark",
        config={"turns": 8},
        platform="discord",
        place=place,
        place_name="#games",
        host="discord:111",
        lobby={"seats": ["discord:111", "discord:222"]},
    )
    await store.start_game(
        gid,
        seed=seed,
        config={"turns": 8},
        seats=SEATS,
        events=[EventRecord("deal", {"n": 3}, "public"), EventRecord("secret", {"word": "apple"}, [0])],
        rules_version=f"{game}/1",
    )
    return gid


def hint(seat: int = 0, text: str = "fruit", source: ActionSource = ActionSource.HUMAN, actor: str = "discord:111") -> ActionRecord:
    return ActionRecord(seat, "hint", [text], source, actor)


async def count(store: Store, table: str) -> int:
    async with store.engine.connect() as conn:
        return int((await conn.execute(sa.text(f"SELECT count(*) FROM {table}"))).scalar_one())


# --------------------------------------------------------------------------- lobby → running


async def test_lobby_lifecycle_and_lookup(store: Store) -> None:
    gid = await create(store,
        game="spy", variant="classic", config={}, platform="slack", place="C1", place_name="#fun",
        host="slack:U1", lobby={"seats": []},
    )
    other = await create(store,
        game="spy", variant="classic", config={}, platform="discord", place="C1", place_name="#fun",
        host="discord:1", lobby={},
    )
    await store.update_lobby(gid, {"seats": ["slack:U1", "slack:U2"]}, config={"spies": 1}, variant="blank")
    row = await store.lobby_at("slack", "C1")
    assert row is not None and row.id == gid
    assert row.lobby == {"seats": ["slack:U1", "slack:U2"]} and row.config == {"spies": 1} and row.variant == "blank"
    assert row.created_at.tzinfo is not None and row.created_at.utcoffset() == timedelta(0)
    assert [g.id for g in await store.open_lobbies("slack")] == [gid]
    assert {g.id for g in await store.open_lobbies()} == {gid, other}
    assert await store.lobby_at("slack", "elsewhere") is None

    await store.start_game(gid, seed=-(2**63), config={"spies": 1}, seats=SEATS, events=[], rules_version="spy/1")
    row = await store.lobby_at("slack", "C1")
    assert row is not None and row.status == GameStatus.RUNNING and row.seed == -(2**63)
    assert row.started_at is not None and row.rules_version == "spy/1"
    assert [g.id for g in await store.open_lobbies("slack")] == []
    with pytest.raises(GameStateError):
        await store.update_lobby(gid, {"seats": []})  # roster frozen once dealt
    with pytest.raises(GameStateError):
        await store.start_game(gid, seed=1, config={}, seats=[], events=[], rules_version="spy/1")
    with pytest.raises(GameNotFound):
        await store.update_lobby(9999, {})


async def test_start_game_writes_roster_and_deal_in_order(store: Store) -> None:
    gid = await new_running_game(store)
    log = await store.load_game(gid)
    assert [(s.seat, s.kind, s.user_key, s.display_name, s.agent_spec) for s in log.seats] == [
        (0, "human", "discord:111", "Alice", None),
        (1, "human", "discord:222", "Bob", None),
        (2, "ai", None, "Player 3", "llm:smollm2"),
    ]
    assert [(e.seq, e.kind, e.action_seq, e.audience) for e in log.events] == [
        (1, "deal", None, "public"),
        (2, "secret", None, [0]),
    ]
    assert log.events[1].data == {"word": "apple"} and log.actions == []


async def test_start_game_is_one_transaction(store: Store) -> None:
    gid = await create(store,
        game="decrypto", variant="", config={}, platform="discord", place="p", place_name="", host="discord:1", lobby={}
    )
    bad_events = [EventRecord("deal", {"ok": 1}), EventRecord("secret", {"not json": {1, 2}}, [0])]
    with pytest.raises(UNSERIALISABLE):
        await store.start_game(gid, seed=1, config={}, seats=SEATS, events=bad_events, rules_version="1")
    row = await store.game(gid)
    assert row is not None and row.status == GameStatus.LOBBY and row.seed is None
    assert await count(store, "seats") == 0 and await count(store, "events") == 0


# --------------------------------------------------------------------------- turns


async def test_turns_are_sequenced_per_game_and_events_follow_the_deal(store: Store) -> None:
    a = await new_running_game(store, place="a")
    b = await new_running_game(store, place="b")
    for i in range(3):
        assert await store.append_turn(
            a, action=hint(text=f"w{i}"), events=[EventRecord("hint", {"i": i}), EventRecord("note", {}, [1, 2])],
            inbound_key=f"discord:a{i}",
        )
    assert await store.append_turn(b, action=hint(seat=1, actor="discord:222"), events=[], inbound_key=None)
    log = await store.load_game(a)
    assert [x.seq for x in log.actions] == [1, 2, 3]
    assert [x.value for x in log.actions] == [["w0"], ["w1"], ["w2"]]
    assert [x.inbound_id for x in log.actions] == ["discord:a0", "discord:a1", "discord:a2"]
    assert [(e.seq, e.action_seq) for e in log.events] == [
        (1, None), (2, None), (3, 1), (4, 1), (5, 2), (6, 2), (7, 3), (8, 3),
    ]
    assert log.events[3].audience == [1, 2]
    other = await store.load_game(b)
    assert [x.seq for x in other.actions] == [1] and other.actions[0].seat == 1


async def test_sequence_continues_after_reopening(db_url: str) -> None:
    st = await Store.open(db_url)
    gid = await new_running_game(st)
    await st.append_turn(gid, action=hint(), events=[EventRecord("hint", {})], inbound_key="k1")
    await st.aclose()
    st = await Store.open(db_url)
    try:
        await st.append_turn(gid, action=hint(), events=[EventRecord("hint", {})], inbound_key="k2")
        assert not await st.append_turn(gid, action=hint(), events=[], inbound_key="k1")
        log = await st.load_game(gid)
        assert [a.seq for a in log.actions] == [1, 2] and [e.seq for e in log.events] == [1, 2, 3, 4]
    finally:
        await st.aclose()


async def test_duplicate_inbound_key_writes_nothing(store: Store) -> None:
    gid = await new_running_game(store)
    call = AgentCallRecord(2, "llm:smollm2", AgentOperation.SCORE, "smollm2", [{"role": "user", "content": "?"}], "B", {"A": 0.1, "B": 0.9})
    assert await store.append_turn(gid, action=hint(), events=[EventRecord("hint", {})], inbound_key="slack:Ev1", agent_calls=[call])
    before = {t: await count(store, t) for t in ("actions", "events", "agent_calls", "inbound")}
    again = await store.append_turn(
        gid, action=hint(text="other"), events=[EventRecord("hint", {})], inbound_key="slack:Ev1", agent_calls=[call]
    )
    assert again is False
    assert {t: await count(store, t) for t in before} == before
    # A command without a turn claims its key the same way, and the keys share one namespace.
    assert await store.claim_inbound("slack:Ev2", gid)
    assert not await store.claim_inbound("slack:Ev2", gid)
    assert not await store.claim_inbound("slack:Ev1")
    assert not await store.append_turn(gid, action=hint(), events=[], inbound_key="slack:Ev2")
    assert await store.inbound_seen("slack:Ev1") and await store.inbound_seen("slack:Ev2")
    assert not await store.inbound_seen("slack:Ev3")
    assert await count(store, "actions") == 1


async def test_concurrent_duplicates_write_once(store: Store) -> None:
    gid = await new_running_game(store)
    results = await asyncio.gather(
        *(store.append_turn(gid, action=hint(), events=[EventRecord("hint", {})], inbound_key="dup") for _ in range(8))
    )
    assert sorted(results) == [False] * 7 + [True]
    assert await count(store, "actions") == 1


async def test_failure_mid_turn_leaves_nothing(store: Store) -> None:
    gid = await new_running_game(store)
    before = {t: await count(store, t) for t in ("actions", "events", "agent_calls", "inbound")}
    # The action and the first event are inserted before the bad event fails to serialise.
    with pytest.raises(UNSERIALISABLE):
        await store.append_turn(
            gid, action=hint(), events=[EventRecord("ok", {}), EventRecord("bad", {"x": object()})], inbound_key="k"
        )
    # Here the last insert of the transaction (the agent call) is the one that fails.
    bad_call = AgentCallRecord(2, "llm:smollm2", prompt={"not json": {1, 2}})
    with pytest.raises(UNSERIALISABLE):
        await store.append_turn(gid, action=hint(), events=[EventRecord("ok", {})], inbound_key="k", agent_calls=[bad_call])
    assert {t: await count(store, t) for t in before} == before
    # The key was not consumed: the retried delivery goes through, with seq 1.
    assert await store.append_turn(gid, action=hint(), events=[EventRecord("ok", {})], inbound_key="k")
    log = await store.load_game(gid)
    assert [a.seq for a in log.actions] == [1] and [e.action_seq for e in log.events] == [None, None, 1]


async def test_turn_for_game_not_running_is_refused(store: Store) -> None:
    lobby = await create(store,
        game="decrypto", variant="", config={}, platform="discord", place="p", place_name="", host="discord:1", lobby={}
    )
    with pytest.raises(GameStateError):
        await store.append_turn(lobby, action=hint(), events=[], inbound_key="k")
    with pytest.raises(GameNotFound):
        await store.append_turn(12345, action=hint(), events=[], inbound_key=None)
    gid = await new_running_game(store, place="q")
    await store.finish_game(gid, status=GameStatus.FINISHED, result={"winners": [0]})
    with pytest.raises(GameStateError):
        await store.append_turn(gid, action=hint(), events=[], inbound_key="k2")
    assert await count(store, "inbound") == 0 and await count(store, "actions") == 0


async def test_concurrent_turns_in_one_store_get_distinct_seqs(store: Store) -> None:
    gid = await new_running_game(store)
    oks = await asyncio.gather(
        *(store.append_turn(gid, action=hint(text=f"t{i}"), events=[EventRecord("e", {"i": i})], inbound_key=f"k{i}") for i in range(20))
    )
    assert all(oks)
    log = await store.load_game(gid)
    assert [a.seq for a in log.actions] == list(range(1, 21))
    assert [e.seq for e in log.events] == list(range(1, 23))
    # Each event points at the action written in the same transaction.
    by_seq = {a.seq: a.value[0] for a in log.actions}
    assert all(e.action_seq is not None and by_seq[e.action_seq] == f"t{e.data['i']}" for e in log.events[2:])


async def test_two_stores_on_one_file_interleave_safely(db_url: str) -> None:
    # Two processes on one database: BEGIN IMMEDIATE and busy_timeout serialise their writes.
    a, b = await Store.open(db_url), await Store.open(db_url)
    try:
        gid = await new_running_game(a)
        oks = await asyncio.gather(
            *(
                (a if i % 2 else b).append_turn(gid, action=hint(), events=[EventRecord("e", {})], inbound_key=f"k{i % 15}")
                for i in range(30)
            )
        )
        assert sum(oks) == 15
        log = await b.load_game(gid)
        assert [x.seq for x in log.actions] == list(range(1, 16))
        assert sorted(str(x.inbound_id) for x in log.actions) == sorted(f"k{i}" for i in range(15))
    finally:
        await a.aclose()
        await b.aclose()


async def test_agent_calls_are_tied_to_their_action(store: Store) -> None:
    gid = await new_running_game(store)
    await store.append_turn(gid, action=hint(), events=[], inbound_key=None)
    calls = [
        AgentCallRecord(2, "llm:smollm2", AgentOperation.GENERATE, "smollm2", [{"role": "user", "content": "hint?"}], "bad", retries=1, error="parse"),
        AgentCallRecord(2, "llm:smollm2", AgentOperation.GENERATE, "smollm2", [{"role": "user", "content": "hint?"}], "fruit", latency_ms=12.5),
    ]
    await store.append_turn(
        gid, action=ActionRecord(2, "hint", ["fruit"], ActionSource.AI, "llm:smollm2"), events=[], inbound_key=None, agent_calls=calls
    )
    await store.log_agent_calls([AgentCallRecord(2, "llm:smollm2", AgentOperation.SCORE, game_id=gid, label_probs={"A": 1.0})])
    with pytest.raises(ValueError):
        await store.log_agent_calls([AgentCallRecord(2, "llm:smollm2")])
    rows = await store.agent_calls(gid)
    assert [(r.action_seq, r.operation, r.raw_output, r.retries, r.error) for r in rows] == [
        (2, "generate", "bad", 1, "parse"),
        (2, "generate", "fruit", 0, None),
        (None, "score", "", 0, None),
    ]
    assert rows[1].latency_ms == 12.5 and rows[0].prompt == [{"role": "user", "content": "hint?"}]
    assert rows[2].label_probs == {"A": 1.0}


def test_records_refuse_bad_values() -> None:
    with pytest.raises(ValueError):
        ActionRecord(0, "hint", ["x"], "psychic", "discord:1")  # type: ignore[arg-type]  # a bad source on purpose
    with pytest.raises(ValueError):
        ActionRecord(0, "hint", "x", ActionSource.HUMAN, "discord:1")  # a bare string is not a list of texts
    with pytest.raises(ValueError):
        EventRecord("e", {}, "everyone")
    with pytest.raises(ValueError):
        SeatRecord(0, "robot", "R2")  # type: ignore[arg-type]  # a bad kind on purpose
    with pytest.raises(ValueError):
        AgentCallRecord(0, "x", operation="think")  # type: ignore[arg-type]  # a bad operation on purpose


async def test_records_from_engine_types(store: Store) -> None:
    from games.base import Action, Audience, Event

    gid = await new_running_game(store)
    action = ActionRecord.of(1, Action.say("hint", "red", "sky"), source=ActionSource.HUMAN, actor="discord:222")
    ev = EventRecord.of(Event("hint", {"words": ["red", "sky"]}, Audience.of(1, 0)))
    await store.append_turn(gid, action=action, events=[ev], inbound_key=None)
    log = await store.load_game(gid)
    assert log.actions[0].value == ["red", "sky"]
    back = Event.from_json({"kind": log.events[-1].kind, "data": log.events[-1].data, "audience": log.events[-1].audience})
    assert back == Event("hint", {"words": ["red", "sky"]}, Audience.of(0, 1))


# --------------------------------------------------------------------------- loading, finishing, announcing


async def test_load_and_unfinished_round_trip(store: Store) -> None:
    a = await new_running_game(store, place="a", seed=7)
    b = await new_running_game(store, place="b", seed=8)
    c = await new_running_game(store, place="c", seed=9)
    for gid in (a, b, c):
        await store.append_turn(gid, action=hint(text=f"g{gid}"), events=[EventRecord("hint", {"g": gid})], inbound_key=f"k{gid}")
    await store.finish_game(b, status=GameStatus.FINISHED, result={"winners": [0, 1], "summary": "team wins"})
    await create(store, game="decrypto", variant="", config={}, platform="discord", place="d", place_name="", host="discord:1", lobby={})
    logs = await store.unfinished_games()
    assert [log.row.id for log in logs] == [a, c]
    for log in logs:
        assert log.row.id is not None
        gid = log.row.id
        assert log.row.seed in (7, 9) and len(log.seats) == 3
        assert [x.value for x in log.actions] == [[f"g{gid}"]]
        assert [e.kind for e in log.events] == ["deal", "secret", "hint"] and log.events[-1].data == {"g": gid}
    with pytest.raises(GameNotFound):
        await store.load_game(999)


async def test_finish_then_announce_exactly_once(db_url: str, store: Store) -> None:
    gid = await new_running_game(store)
    assert not await store.mark_announced(gid)  # nothing to announce while running
    await store.set_deadline(gid, 0, datetime.now(UTC) + timedelta(minutes=5))
    await store.finish_game(gid, status=GameStatus.FINISHED, result={"winners": [2]}, events=[EventRecord("end", {"winner": 2})])
    row = await store.game(gid)
    assert row is not None and row.result == {"winners": [2]} and row.finished_at is not None
    assert [g.id for g in await store.unannounced_finished()] == [gid]
    assert await store.pending_deadlines() == []  # an ended game has no running clocks
    log = await store.load_game(gid)
    assert (log.events[-1].seq, log.events[-1].kind, log.events[-1].action_seq) == (3, "end", None)
    with pytest.raises(GameStateError):
        await store.finish_game(gid, status=GameStatus.ABORTED, result=None)
    # Several tasks and a second process race to announce: one wins.
    other = await Store.open(db_url)
    try:
        wins = await asyncio.gather(*(s.mark_announced(gid) for s in [store, other] * 4))
    finally:
        await other.aclose()
    assert wins.count(True) == 1
    assert await store.unannounced_finished() == []
    assert not await store.mark_announced(gid)


async def test_abort_from_lobby_and_finish_rules(store: Store) -> None:
    lobby = await create(store,
        game="decrypto", variant="", config={}, platform="discord", place="p", place_name="", host="discord:1", lobby={}
    )
    with pytest.raises(GameStateError):
        await store.finish_game(lobby, status=GameStatus.FINISHED, result={})  # a lobby never played cannot be won
    with pytest.raises(ValueError):
        await store.finish_game(lobby, status=GameStatus.RUNNING, result=None)
    await store.finish_game(lobby, status=GameStatus.ABORTED, result=None)
    row = await store.game(lobby)
    assert row is not None and row.status == "aborted" and row.result is None
    assert [g.id for g in await store.unannounced_finished()] == [lobby]


async def test_games_filters(store: Store) -> None:
    a = await new_running_game(store, game="decrypto", place="a")
    b = await new_running_game(store, game="spy", place="b")
    await store.finish_game(a, status=GameStatus.FINISHED, result={})
    assert [g.id for g in await store.games(status=GameStatus.FINISHED)] == [a]
    assert [g.id for g in await store.games(status=[GameStatus.FINISHED, GameStatus.RUNNING])] == [a, b]
    assert [g.id for g in await store.games(game="spy")] == [b]
    assert await store.games(since=datetime.now(UTC) + timedelta(seconds=1)) == []
    assert len(await store.games(since=datetime.now(UTC) - timedelta(minutes=1))) == 2
    assert [g.id for g in await store.games(finished_since=datetime.now(UTC) - timedelta(minutes=1))] == [a]


# --------------------------------------------------------------------------- deadlines


async def test_deadlines(store: Store) -> None:
    gid = await new_running_game(store)
    now = datetime.now(UTC).replace(microsecond=0)
    later = now + timedelta(minutes=10)
    d0 = await store.set_deadline(gid, 0, later)
    # An aware time in another zone is the same instant, returned in UTC.
    d1 = await store.set_deadline(gid, 1, (now + timedelta(minutes=2)).astimezone(timezone(timedelta(hours=2))))
    pending = await store.pending_deadlines()
    assert [d.id for d in pending] == [d1, d0]
    assert pending[0].due_at == now + timedelta(minutes=2) and pending[0].due_at.tzinfo is not None

    d0b = await store.set_deadline(gid, 0, now + timedelta(minutes=20))  # replaces seat 0's clock
    assert [d.id for d in await store.pending_deadlines()] == [d1, d0b]

    assert await store.finish_deadline(d1)
    assert not await store.finish_deadline(d1)  # fires once
    assert not await store.finish_deadline(d0)  # was cancelled by the replacement
    d2 = await store.set_deadline(gid, 2, later)
    assert await store.clear_deadlines(gid, seat=0) == 1
    assert [d.id for d in await store.pending_deadlines()] == [d2]
    assert await store.clear_deadlines(gid) == 1
    assert await store.pending_deadlines() == []
    async with store.engine.connect() as conn:
        states: dict[int, str] = dict((await conn.execute(sa.text("SELECT id, state FROM deadlines"))).all())
    assert states == {
        d0: DeadlineState.CANCELLED, d1: DeadlineState.DONE, d0b: DeadlineState.CANCELLED, d2: DeadlineState.CANCELLED,
    }


async def test_evaluations(store: Store) -> None:
    gid = await new_running_game(store)
    await store.append_turn(gid, action=hint(), events=[], inbound_key=None)
    record = EvaluationRecord(
        game_id=gid, action_seq=1, part=0, game="spy", evaluator="sneak:smollm2", settings="s1", settings_json={},
        instance={}, decoys=["pear"], perm_seed=7, ally_probs=None, cham_probs=None, utility=0.5, leakage=0.25,
        soft=0.6, binary=1.0, metric={"utility": 0.5, "leakage": 0.25})
    assert await evaluations.save_evaluations(store, [record, record]) == 1
    assert await evaluations.save_evaluations(store, [record]) == 0  # stored once per move, evaluator and settings
    rows = await evaluations.evaluations(store, game_ids=[gid])
    assert [(r.action_seq, r.evaluator, r.utility, r.metric) for r in rows] == [
        (1, "sneak:smollm2", 0.5, {"utility": 0.5, "leakage": 0.25})]


# --------------------------------------------------------------------------- SQLite settings


async def test_sqlite_pragmas_and_in_memory(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'p.db'}") as store:
        await _sqlite_pragmas_and_in_memory(store)


async def _sqlite_pragmas_and_in_memory(store: Store) -> None:
    async with store.engine.connect() as conn:
        pragma = {p: (await conn.exec_driver_sql(f"PRAGMA {p}")).scalar() for p in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")}
    assert pragma == {"journal_mode": "wal", "synchronous": 1, "busy_timeout": 5000, "foreign_keys": 1}
    # Foreign keys are enforced: a seat cannot point at a game that does not exist.
    with pytest.raises(sa.exc.IntegrityError):
        async with store.engine.begin() as conn:
            await conn.execute(sa.text("INSERT INTO seats (game_id, seat, kind, display_name, joined_at) VALUES (999, 0, 'ai', 'x', '2025-01-01')"))

    mem = await Store.open("sqlite+aiosqlite://")
    try:
        gid = await new_running_game(mem)
        results = await asyncio.gather(
            store.games(), *(mem.append_turn(gid, action=hint(), events=[], inbound_key=f"m{i}") for i in range(5)), mem.unfinished_games()
        )
        assert all(results[1:6])
        assert [a.seq for a in (await mem.load_game(gid)).actions] == [1, 2, 3, 4, 5]
    finally:
        await mem.aclose()


@pytest.mark.parametrize("where", ["file", "memory", "postgres"])
async def test_group_commit_on_both_write_paths(request: pytest.FixtureRequest, tmp_path: Path, where: str) -> None:
    """A SQLite file commits groups on its sqlite3 thread; other databases (in-memory SQLite,
    PostgreSQL) through the async engine. All must number, deduplicate and isolate the same way."""
    urls = {"file": f"sqlite+aiosqlite:///{tmp_path}/g.db", "memory": "sqlite+aiosqlite://"}
    url = urls[where] if where in urls else str(request.getfixturevalue("pg_url"))
    st = await Store.open(url)
    try:
        assert (st._turnlog.engine is not None) == (where == "file")
        ids: list[int] = []
        for _ in range(2):
            gid = await create(st, game="spy", variant="classic", config={}, platform="p", place=f"c{len(ids)}",
                                       place_name="", host="h", lobby={})
            await st.start_game(gid, seed=1, config={}, seats=SEATS, events=[EventRecord("deal", {})], rules_version="1")
            ids.append(gid)
        done = await create(st, game="spy", variant="classic", config={}, platform="p", place="c9",
                                    place_name="", host="h", lobby={})  # never started

        def turn(gid: int, key: str | None) -> Coroutine[Any, Any, bool]:
            return st.append_turn(gid, action=ActionRecord(0, "vote", ["1"], ActionSource.HUMAN, "discord:111"),
                                  events=[EventRecord("a", {}), EventRecord("b", {})], inbound_key=key)

        # Issued together, so they share groups: the bad one fails alone, the repeat writes nothing.
        results = await asyncio.gather(
            *(turn(ids[i % 2], f"k{i}") for i in range(20)), turn(ids[0], "k3"), turn(done, "k99"),
            return_exceptions=True,
        )
        assert results[:20] == [True] * 20
        assert results[20] is False
        assert isinstance(results[21], GameStateError)
        for gid in ids:
            log = await st.load_game(gid)
            assert [a.seq for a in log.actions] == list(range(1, 11))
            assert [e.seq for e in log.events] == list(range(1, 22))
            assert all(e.action_seq == (e.seq - 2) // 2 + 1 for e in log.events[1:])
        assert not await st.inbound_seen("k99")
    finally:
        await st.aclose()


async def test_a_database_error_never_carries_the_values_written(store: Store, tmp_path: Path) -> None:
    """An error's text may be logged or shown: it names the statement, never its values (a secret word
    in a private message, a person's clue), on the store's engine and on the SQLite turn engine."""
    from storage.engine import make_turn_engine, plan_engine

    secret = "SECRET-WORD-PAPAYA"
    insert = sa.text("INSERT INTO no_such_table (x) VALUES (:x)")
    with pytest.raises(sa.exc.DBAPIError) as err:
        async with store.engine.begin() as conn:
            await conn.execute(insert, {"x": secret})
    assert "no_such_table" in str(err.value) and secret not in str(err.value) and secret not in repr(err.value)
    turns = make_turn_engine(plan_engine(f"sqlite+aiosqlite:///{tmp_path / 'turns.db'}"))
    assert turns is not None
    try:
        with pytest.raises(sa.exc.DBAPIError) as sync_err, turns.begin() as sync_conn:
            sync_conn.execute(insert, {"x": secret})
        assert secret not in str(sync_err.value)
    finally:
        turns.dispose()

"""TableService end to end on a real SQLite file with the recording in-memory platform."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from bot.core import codec
from bot.core.memory import Sent
from bot.core.messages import CommandKind, Place, UserRef
from games import get
from games.base import Event, Text, contains_word
from games.catalog import descriptors
from tests.bot.core.conftest import ALICE, BOB, CAROL, HERE, Harness, human
from tests.bot.privately import members_told_privately


def _variants() -> list[tuple[str, str, int]]:
    """Every variant of every registered game: two members and the fewest AI seats it allows (at least one)."""
    return [(d.id, str(v), max(d.engine.seat_range(d.engine.make_config(str(v)))[0] - 2, 1))
            for d in descriptors() for v in d.variants]


GAMES = _variants()


async def open_lobby(h: Harness, game: str, variant: str, ais: int, place: Place = HERE) -> int:
    r = await h.send(CommandKind.CREATE, ALICE, place, game=game, variant=variant)
    assert r.ok, r.text
    assert (await h.send(CommandKind.JOIN, BOB, place)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, place, agent="random", count=ais)).ok
    row = await h.store.lobby_at(place.platform, place.key)
    assert row is not None and row.id is not None
    return row.id


async def open_table(h: Harness, game: str, variant: str, ais: int, place: Place = HERE) -> int:
    gid = await open_lobby(h, game, variant, ais, place)
    r = await h.send(CommandKind.START, ALICE, place)
    assert r.ok, r.text
    return gid


def deal_secrets(h: Harness, game_id: int) -> list[str]:
    """Words some seat may not know at the start, excluding those hidden among public candidates."""
    t = h.service.tables[game_id]
    state, _ = t.engine.new(t.cfg, len(t.seats), t.seed)
    return [s.value for s in t.engine.secrets(state) if not s.among]


async def event_lines(h: Harness, game_id: int) -> tuple[set[str], set[str]]:
    """The lines the engine wrote for some seats only (unless a public event says them too; short ones
    left out), and the lines of its public events, as the bot renders them."""
    glog = await h.store.load_game(game_id)
    names = [s.display_name for s in sorted(glog.seats, key=lambda s: s.seat)]
    engine = get(glog.row.game)
    said: dict[bool, set[str]] = {True: set(), False: set()}
    for e in glog.events:
        text = engine.text(Event.from_json({"kind": e.kind, "data": e.data, "audience": e.audience}), names)
        said[e.audience == "public"].update(ln.strip() for ln in text.splitlines() if ln.strip())
    return {ln for ln in said[False] - said[True] if len(ln) >= 12}, said[True]


def in_channel(h: Harness, place: Place) -> list[Sent]:
    """What the bot posted in ``place``'s channel and its threads, in order."""
    return [s for s in h.platform.public() if s.to.startswith(place.channel + "/") or s.to == place.channel]


@pytest.mark.parametrize(("game", "variant", "ais"), GAMES)
async def test_full_game_humans_and_ai(harness: Harness, game: str, variant: str, ais: int) -> None:
    h = harness
    # A game can end before a member or an AI seat has moved (a Spymasters team finding the assassin
    # with its first guess): then a table in another channel plays again.
    for n in range(6):
        place = HERE if n == 0 else Place("memory", f"again-{n}")
        gid = await open_lobby(h, game, variant, ais, place)
        # The bot's own words are no leak: a line it posted in this channel before anything was dealt (the
        # lobby card's "justone (classic) table #1") knows nothing of the deal, so it is not read for
        # secrets, even when the word dealt is "table".
        own = {ln.strip() for s in in_channel(h, place) for ln in s.message.text.splitlines() if ln.strip()}
        r = await h.send(CommandKind.START, ALICE, place)
        assert r.ok, r.text
        secrets = deal_secrets(h, gid)
        await h.play_humans(seed=gid)
        if {a.source for a in (await h.store.load_game(gid)).actions} >= {"human", "ai"}:
            break
    else:
        raise AssertionError("six games in a row ended before both a member and an AI seat had moved")
    row = await h.store.game(gid)
    assert row is not None
    assert row.status == "finished" and row.result is not None and row.announced_at is not None
    place_key = f"{place.channel}/t{json.loads(json.dumps(row.lobby))['card']['message_id']}"
    channel = in_channel(h, place)
    results = [s for s in channel if s.message.title == f"Game #{gid} is over"]
    assert len(results) == 1, "the result is announced exactly once"
    assert results[0].to == place_key, "the game is played in its own thread"
    hidden_lines, public_lines = await event_lines(h, gid)
    assert hidden_lines, "the game told no seat anything privately: the check would be empty"
    # A game may reveal a secret itself (Just One's "The word was ..." after each card; the last fan-out
    # before the announcement carries the end-of-game reveal): from that public event's message on, the
    # word is no secret. Before it, no message may name it.
    revealed: set[str] = set()
    before_end = channel[: channel.index(results[0]) - 1]
    for s in before_end:
        text = "\n".join(ln for ln in s.message.text.splitlines() if ln.strip() not in own).lower()
        revealed |= {w for ln in public_lines if ln in s.message.text for w in secrets if contains_word(ln.lower(), w)}
        for w in set(secrets) - revealed:
            assert not contains_word(text, w), (w, s.message.text)
    for s in channel:
        for line in s.message.text.splitlines():
            assert line.strip() not in hidden_lines, f"a private event reached the channel: {line}"
    # Everything is logged: actions with sources, events with audiences.
    glog = await h.store.load_game(gid)
    # Members got their secrets and their prompts privately (those who hold a secret or moved).
    members = await members_told_privately(h.store, gid)
    assert members and all(s.user_key and h.platform.dms_to(s.user_key) for s in members), members
    assert glog.actions and all(a.source in ("human", "ai", "fallback", "timeout") for a in glog.actions)
    assert {a.source for a in glog.actions} >= {"human", "ai"}
    async with h.store.engine.connect() as conn:
        calls = (await conn.execute(sa.text("select count(*) from agent_calls where game_id=:g"), {"g": gid})).scalar_one()
    assert calls > 0, "AI calls are logged"


async def test_duplicate_delivery_changes_nothing(harness: Harness) -> None:
    h = harness
    replies = []
    steps: list[tuple[CommandKind, UserRef, dict[str, Any]]] = [
        (CommandKind.CREATE, ALICE, {"game": "chameleon"}),
        (CommandKind.JOIN, BOB, {}),
        (CommandKind.ADD_AI, ALICE, {"agent": "random", "count": 1}),
        (CommandKind.START, ALICE, {}),
    ]
    for kind, user, args in steps:
        first = await h.send(kind, user, HERE, inbound=f"dup-{kind.value}", **args)
        await h.service.wait_idle()  # AI seats may play right after a start
        sent = len(h.platform.sent)
        again = await h.send(kind, user, HERE, inbound=f"dup-{kind.value}", **args)
        await h.service.wait_idle()
        assert first.ok and again.duplicate, (kind, again)
        assert len(h.platform.sent) == sent
        replies.append(first)
    gid = next(iter(h.service.tables))
    await h.service.wait_idle()
    t = h.service.tables[gid]
    for s in sorted(t.engine.to_act(t.state)):
        if t.seats[s].is_ai:
            continue
        spec = t.engine.legal(t.state, s)
        assert spec is not None
        value = ["zq1x"] if isinstance(spec, Text) else [spec.options[0].id]
        first = await h.send(CommandKind.ACT, human(t.seats[s]), t.place, inbound=f"act-{s}", game_id=gid, seat=s,
                             kind=spec.kind, value=value)
        assert first.ok, first.text
        await h.service.wait_idle()
        before = (len(h.platform.sent), len((await h.store.load_game(gid)).actions), t.state)
        again = await h.send(CommandKind.ACT, human(t.seats[s]), t.place, inbound=f"act-{s}", game_id=gid, seat=s,
                             kind=spec.kind, value=value)
        await h.service.wait_idle()
        assert again.duplicate
        assert (len(h.platform.sent), len((await h.store.load_game(gid)).actions), t.state) == before
        break


async def test_bad_input_gets_a_clear_reply_and_changes_nothing(harness: Harness) -> None:
    h = harness
    nowhere = Place("memory", "empty")
    r = await h.send(CommandKind.START, ALICE, nowhere)
    assert not r.ok and "no table" in r.text.lower()
    r = await h.send(CommandKind.CREATE, ALICE, HERE, game="poker")
    assert not r.ok and "unknown game" in r.text.lower()
    r = await h.send(CommandKind.CREATE, ALICE, HERE, game="spy", options={"spies": 9})
    assert not r.ok
    gid = await open_table(h, "chameleon", "classic", 1)
    await h.service.wait_idle()
    t = h.service.tables[gid]
    log_before = len((await h.store.load_game(gid)).actions)
    state_before = t.state
    acting = sorted(t.engine.to_act(t.state))
    idle_humans = [s for s in t.seats if not s.is_ai and s.seat not in acting]
    human_turn = [s for s in t.seats if not s.is_ai and s.seat in acting]
    # Not your seat: Bob presses Alice's button.
    alice = next(s for s in t.seats if s.user and s.user.key == ALICE.key)
    r = await h.send(CommandKind.ACT, BOB, t.place, game_id=gid, seat=alice.seat, kind="clue", value=["x"])
    assert not r.ok and "another player" in r.text
    # A stranger.
    r = await h.send(CommandKind.ACT, UserRef("memory", "999", "Eve"), t.place, game_id=gid, seat=0, kind="clue",
                     value=["x"])
    assert not r.ok and "not playing" in r.text
    for s in idle_humans:  # not your turn
        r = await h.send(CommandKind.ACT, human(s), t.place, game_id=gid, seat=s.seat, kind="clue", value=["x"])
        assert not r.ok
    for s in human_turn:
        r = await h.send(CommandKind.ACT, human(s), t.place, game_id=gid, seat=s.seat, kind="clue", value=["x" * 500])
        assert not r.ok and "characters" in r.text
        if s.seat != t.state.chameleon:  # a clue containing the secret
            r = await h.send(CommandKind.ACT, human(s), t.place, game_id=gid, seat=s.seat, kind="clue",
                             value=[t.state.secret])
            assert not r.ok
        r = await h.send(CommandKind.ACT, human(s), t.place, game_id=gid, seat=s.seat, kind="clue", value="notalist")
        assert not r.ok
    r = await h.send(CommandKind.ACT, ALICE, t.place, game_id=999, seat=0, kind="clue", value=["x"])
    assert not r.ok
    assert t.state is state_before
    assert len((await h.store.load_game(gid)).actions) == log_before
    # Only the host starts or aborts.
    r = await h.send(CommandKind.ABORT, BOB, HERE, game_id=gid)
    assert not r.ok and "host" in r.text


async def test_same_display_name_stays_apart(harness: Harness) -> None:
    h = harness
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="spy")).ok
    assert (await h.send(CommandKind.JOIN, CAROL, HERE)).ok
    assert not (await h.send(CommandKind.JOIN, ALICE, HERE)).ok
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=2)).ok
    assert (await h.send(CommandKind.START, ALICE, HERE)).ok
    t = next(iter(h.service.tables.values()))
    humans = [s for s in t.seats if not s.is_ai]
    assert len({human(s).key for s in humans}) == 2 and len({s.name for s in humans}) == 2
    # Each got their own word, by id, not by name.
    assert h.platform.dms_to(ALICE.key) and h.platform.dms_to(CAROL.key)


async def test_closed_dms_offer_the_reveal_button(harness: Harness) -> None:
    h = harness
    h.platform.closed_dms.add(BOB.key)
    gid = await open_table(h, "spy", "classic", 2)
    await h.service.wait_idle()
    notices = [s for s in h.platform.public() if any(b.id == codec.show_id(gid) for b in s.message.buttons)]
    assert notices and "Bob" in notices[0].message.text
    t = h.service.tables[gid]
    bob = next(s for s in t.seats if s.user and s.user.key == BOB.key)
    word = t.state.words[bob.seat] if hasattr(t.state, "words") else None
    for n in notices:
        if word:
            assert word not in n.message.text
    r = await h.send(CommandKind.SHOW, BOB, t.place, game_id=gid)
    assert r.ok and "secrets" in r.text.lower()
    if word:
        assert word in r.text
    r = await h.send(CommandKind.SHOW, UserRef("memory", "999", "Eve"), t.place, game_id=gid)
    assert not r.ok


async def test_lobby_lifecycle(harness: Harness) -> None:
    h = harness
    assert (await h.send(CommandKind.CREATE, ALICE, HERE, game="decrypto", variant="benchmark")).ok
    assert not (await h.send(CommandKind.CREATE, BOB, HERE, game="spy")).ok  # one table per place
    assert (await h.send(CommandKind.JOIN, BOB, HERE)).ok
    r = await h.send(CommandKind.START, BOB, HERE)
    assert not r.ok and "host" in r.text.lower()
    r = await h.send(CommandKind.START, ALICE, HERE)
    assert not r.ok and "needs 3" in r.text
    assert (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random", count=5)).ok  # capped at the table size
    assert not (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="random")).ok
    assert (await h.send(CommandKind.REMOVE_AI, ALICE, HERE)).ok
    assert not (await h.send(CommandKind.ADD_AI, ALICE, HERE, agent="no-such-agent")).ok
    r = await h.send(CommandKind.LIST, BOB, Place("memory", "elsewhere"))
    assert "decrypto" in r.text
    assert (await h.send(CommandKind.LEAVE, ALICE, HERE)).ok  # the host leaves: Bob hosts
    row = await h.store.lobby_at("memory", HERE.key)
    assert row is not None
    assert row.host == ALICE.key or row.lobby["host"]["user_id"] == BOB.user_id
    assert (await h.send(CommandKind.RULES, BOB, HERE)).text.count(" ") > 30
    r = await h.send(CommandKind.ABORT, BOB, HERE, game_id=row.id)
    assert r.ok or "host" in r.text
    edits = [s for s in h.platform.sent if s.kind == "edit"]
    assert edits, "the lobby card updates in place"


async def test_export_through_the_service(harness: Harness) -> None:
    from bot.core.messages import Command

    h = harness
    await open_table(h, "chameleon", "classic", 1)
    await h.play_humans()
    refused = await h.service.export(Command(CommandKind.EXPORT, BOB, HERE))
    assert not isinstance(refused, tuple) and not refused.ok and "admin" in refused.text
    exported = await h.service.export(Command(CommandKind.EXPORT, BOB, HERE, is_admin=True), fmt="jsonl")
    assert isinstance(exported, tuple), exported
    name, data = exported
    # Raw ids never leave: not as a user key, not as a bare id value (a bare substring "200" also
    # matched microseconds of timestamps, about one run in ten).
    assert name.endswith(".jsonl") and data.count(b"\n") == 1
    assert BOB.key.encode() not in data and b'"200"' not in data
    r = await h.send(CommandKind.EXPORT, BOB, HERE)
    assert not r.ok and "admin" in r.text


def test_serving_raises_the_collectors_thresholds_and_never_lowers_one() -> None:
    import gc

    from bot.core.collector import GC_THRESHOLDS, quiet_collector

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        quiet_collector()
        assert gc.get_threshold() == GC_THRESHOLDS
        gc.set_threshold(GC_THRESHOLDS[0] * 2, 5, GC_THRESHOLDS[2] * 3)
        quiet_collector()
        assert gc.get_threshold() == (GC_THRESHOLDS[0] * 2, GC_THRESHOLDS[1], GC_THRESHOLDS[2] * 3)
    finally:
        gc.set_threshold(*before)

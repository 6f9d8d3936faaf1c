"""Request handling: signatures, retries, export rights, closed DMs, and the command grammar."""

from __future__ import annotations

import time

import pytest

from bot.core.messages import CommandKind
from bot.slack.commands import UsageError, parse
from tests.bot.slack.conftest import Stack
from tests.bot.slack.fake_slack import Signer
from tests.bot.slack.play import find_control
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL, button, lobby_card, open_table
from tests.vocabulary import nonsense_words

_EFFECTS = ("chat.postMessage", "chat.update", "chat.postEphemeral", "views.open", "conversations.open")


def effects(st: Stack) -> list[str]:
    """Calls that change something a member could see (each with its text), then the response_url answers."""
    calls = [f"{c.method} {c.args.get('channel', '')} {str(c.args.get('text', ''))[:80]!r}"
             for c in st.fake.calls if c.method in _EFFECTS]
    return calls + [f"response_url {str(r.get('text', ''))[:80]!r}" for r in st.fake.responses]


def api_effects(st: Stack) -> int:
    return len(effects(st))


async def test_forged_signature_and_stale_timestamp_are_rejected(stack: Stack) -> None:
    st = stack
    body = st.sim.command_body(ALICE, CHANNEL, "play spy")
    forged = await st.sim.send(body, "application/x-www-form-urlencoded", signer=Signer("not-the-secret"))
    stale = await st.sim.send(body, "application/x-www-form-urlencoded", timestamp=int(time.time()) - 10 * 60)
    await st.idle()
    assert (forged, stale) == (401, 401)
    assert api_effects(st) == 0
    assert await st.store.open_lobbies("slack") == []
    # The same body, properly signed and fresh, is accepted: the rejections were about the signature.
    assert await st.sim.send(body, "application/x-www-form-urlencoded") == 200
    await st.idle()
    assert len(await st.store.open_lobbies("slack")) == 1


async def test_retried_action_changes_nothing(stack: Stack) -> None:
    st = stack
    assert await st.sim.command(ALICE, CHANNEL, "play spy") == 200
    await st.idle()
    card = lobby_card(st)
    payload = st.sim.action_payload(BOB, card, button(card, "join"))
    assert await st.sim.interact(payload) == 200
    await st.idle()
    seats = (await st.store.open_lobbies("slack"))[0].lobby["seats"]
    before = api_effects(st)
    # Slack's redelivery carries the same ids; Bolt does not dedupe, the core's storage must.
    assert await st.sim.interact(payload, extra={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}) == 200
    await st.idle()
    assert (await st.store.open_lobbies("slack"))[0].lobby["seats"] == seats
    assert api_effects(st) == before


async def test_retried_event_changes_nothing(stack: Stack) -> None:
    st = stack
    game_id, _ = await open_table(st, "play spy", 2)
    # Wait for a member who owes a description, then answer by DM and replay that event.
    # After the AI seats have played (idle), the turn is a member's.
    table = st.service.tables[game_id]
    acting = table.engine.to_act(table.state)
    writer = next(s.user.user_id for s in table.seats if s.user is not None and s.seat in acting)
    # A made-up word: a real one ("lantern") was the member's own secret in 1 deal of a few hundred,
    # and a description naming it is refused, so the first delivery counted nothing to repeat.
    text = next(nonsense_words())
    status, event_id = await st.sim.dm_text(writer, text)
    assert status == 200
    await st.idle()
    log = await st.store.load_game(game_id)
    assert [a.value for a in log.actions].count([text]) == 1, "the first delivery is the member's move"
    actions = len(log.actions)
    before = effects(st)
    status, _ = await st.sim.dm_text(writer, text, event_id=event_id, extra={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"})
    assert status == 200
    await st.idle()
    log = await st.store.load_game(game_id)
    assert len(log.actions) == actions and [a.value for a in log.actions].count([text]) == 1
    assert effects(st) == before, effects(st)[len(before) - 3:]


async def test_export_is_for_admins_only(stack: Stack) -> None:
    st = stack
    st.fake.admins.add(BOB)
    assert await st.sim.command(ALICE, CHANNEL, "export jsonl") == 200
    await st.idle()
    assert st.fake.files == [] and not st.fake.methods("files.getUploadURLExternal")
    assert "admins" in st.fake.responses[-1]["text"]
    assert await st.sim.command(BOB, CHANNEL, "export jsonl") == 200
    await st.idle()
    assert len(st.fake.files) == 1
    f = st.fake.files[0]
    assert f["channel"] == "D" + BOB  # never into the channel
    assert f["title"].endswith(".jsonl")
    assert st.fake.methods("files.completeUploadExternal")


async def test_closed_dms_get_a_show_my_secret_button(fake, tmp_path) -> None:
    from tests.bot.slack.conftest import open_stack

    fake.closed_dms.add(BOB)
    st = await open_stack(fake, tmp_path / "hush.db")
    try:
        game_id, card = await open_table(st, "play chameleon", 2)
        thread = st.fake.thread(CHANNEL, card.ts)
        found = find_control(thread, f"s:{game_id}")
        assert found is not None, "no 'Show my secret' button in the thread"
        msg, els = found
        assert await st.sim.click(BOB, msg, els[0]) == 200
        await st.idle()
        shown = st.fake.responses[-1]
        assert shown["response_type"] == "ephemeral" and not shown.get("replace_original")
        assert f"game #{game_id}" in shown["text"].lower()
    finally:
        await st.close()


def test_parse_grammar() -> None:
    p = parse("play chameleon sneak mode=match deadline=90")
    assert p.kind is CommandKind.CREATE
    assert p.args == {"game": "chameleon", "variant": "sneak", "options": {"mode": "match"}, "deadline_s": 90}
    assert parse("join 12").args == {"game_id": 12}
    assert parse("ai random 2").args == {"agent": "random", "count": 2}
    assert parse("ai", default_agent="llm:default").args == {"agent": "llm:default", "count": 1}
    assert parse("ai remove random").kind is CommandKind.REMOVE_AI
    assert parse("").verb == parse("help").verb == "help"
    assert parse("export csv since=2025-01-31").args["fmt"] == "csv"
    for bad in ("join x", "dance", "play", "deadline soon", "export since=yesterday"):
        with pytest.raises(UsageError):
            parse(bad)


async def test_retried_vote_click_changes_nothing(stack: Stack) -> None:
    import random

    from games.base import Choice
    from tests.bot.slack.play import human_move

    st = stack
    game_id, _ = await open_table(st, "play chameleon", 2)
    rng = random.Random(7)
    for _ in range(40):  # play the clue round until a member owes a vote
        await st.idle()
        table = st.service.tables[game_id]
        acting = table.engine.to_act(table.state)
        info = next(s for s in table.seats if s.user is not None and s.seat in acting)
        if isinstance(table.engine.legal(table.state, info.seat), Choice):
            break
        await human_move(st, info.user.user_id, game_id, rng, text_by_dm=False)  # type: ignore[union-attr]
    spec = table.engine.legal(table.state, info.seat)
    assert spec is not None
    uid = info.user.user_id  # type: ignore[union-attr]
    msg, els = find_control(st.fake.dms(uid), f"g:{game_id}:{info.seat}:{spec.kind}")  # type: ignore[misc]
    el = els[0]
    selected = el["options"][0]["value"] if el["type"] == "static_select" else None
    payload = st.sim.action_payload(uid, msg, el, selected)
    assert await st.sim.interact(payload) == 200
    await st.idle()
    actions = len((await st.store.load_game(game_id)).actions)
    before = api_effects(st)
    assert await st.sim.interact(payload) == 200
    await st.idle()
    assert len((await st.store.load_game(game_id)).actions) == actions
    assert api_effects(st) == before

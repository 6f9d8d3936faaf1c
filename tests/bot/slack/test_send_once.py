"""A keyed message shows once on Slack, though it is sent at least once: it carries its key in its
metadata, and a send that may be a repeat (a resent outbox row, the retry after a post whose answer
was lost) finds the copy in the place's history instead of posting again. The real Bolt app and
slack_sdk against the fake Slack, which stores metadata and answers the history reads as Slack does."""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from bot.core.messages import DeliveryFailed, Outgoing, Place, UserRef
from bot.slack import adapter
from tests.bot.fakeserver import Fault
from tests.bot.slack.conftest import Stack, make_settings, open_stack
from tests.bot.slack.fake_slack import FakeSlack, Message
from tests.bot.slack.play import human_move
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL, open_table

C = "C1"


@pytest.fixture(autouse=True)
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "RETRY_PAUSE_S", 0.0)


def keyed(fake: FakeSlack, key: str) -> list[Message]:
    return [m for m in fake.messages.values() if (m.metadata or {}).get("event_payload", {}).get("key") == key]


async def where(stack: Stack, kind: str) -> tuple[str, Any]:
    """A place to send to, and how: the channel itself, a thread in it, or a member's DM."""
    platform = stack.bot.platform
    if kind == "dm":
        user = UserRef("slack", ALICE, "alice")
        return "D" + ALICE, lambda m: platform.dm(user, m)
    place = Place("slack", C)
    if kind == "thread":
        anchor = await platform.post(place, Outgoing("a lobby card"))
        place = Place("slack", C, anchor.message_id)
    return C, lambda m: platform.post(place, m)


async def test_a_first_keyed_send_is_one_call_carrying_its_key(stack: Stack) -> None:
    await stack.bot.platform.post(Place("slack", C), Outgoing("Round 1 begins.", key="k1"))
    posts = stack.fake.methods("chat.postMessage")
    assert len(posts) == 1 and posts[0]["metadata"] == {"event_type": adapter.METADATA_EVENT,
                                                         "event_payload": {"key": "k1"}}
    assert stack.fake.history_reads == []


@pytest.mark.parametrize("kind", ["channel", "thread", "dm"])
async def test_a_resent_message_already_on_slack_is_not_posted_again(stack: Stack, kind: str) -> None:
    channel, send = await where(stack, kind)
    since = time.time()
    first = await send(Outgoing("Bob voted.", key="k1"))
    before = len(stack.fake.methods("chat.postMessage"))
    # The same row again (its sent mark was lost, or a new holder took the table over).
    again = await send(Outgoing("Bob voted.", key="k1", maybe_sent_since=since))
    assert (again.channel, again.message_id) == (first.channel, first.message_id) == (channel, first.message_id)
    assert len(stack.fake.methods("chat.postMessage")) == before and len(keyed(stack.fake, "k1")) == 1
    method, args = stack.fake.history_reads[-1]
    assert method == ("conversations.replies" if kind == "thread" else "conversations.history")
    assert args["include_all_metadata"] in (True, "true", "1") and float(args["oldest"]) < since
    # A row that may have been sent but was not is sent, once.
    await send(Outgoing("Carol voted.", key="k2", maybe_sent_since=since))
    assert len(keyed(stack.fake, "k2")) == 1 and len(stack.fake.methods("chat.postMessage")) == before + 1


async def test_the_copy_is_found_pages_back(stack: Stack) -> None:
    platform = stack.bot.platform
    since = time.time()
    await platform.post(Place("slack", C), Outgoing("Bob voted.", key="k1"))
    for n in range(adapter.HISTORY_PAGE + 50):  # chatter after it: newest first, the copy is on page 2
        ts = stack.fake._next_ts()
        stack.fake.messages[(C, ts)] = Message(C, ts, f"chatter {n}", [])
    await platform.post(Place("slack", C), Outgoing("Bob voted.", key="k1", maybe_sent_since=since))
    assert len(keyed(stack.fake, "k1")) == 1
    assert [a.get("cursor") is not None for _m, a in stack.fake.history_reads] == [False, True]


@pytest.mark.parametrize("key", ["5:12:1:waiting", "5:end", "5:12:back"])
async def test_another_apps_message_with_our_key_is_not_taken_for_the_copy(stack: Stack, key: str) -> None:
    """The keys are predictable and any app can post any metadata: only this app's own message is a copy."""
    since = time.time()
    ts = stack.fake._next_ts()
    stack.fake.messages[(C, ts)] = Message(C, ts, "spoofed", [], metadata={"event_type": adapter.METADATA_EVENT,
                                           "event_payload": {"key": key}}, author=("UOTHER", "BOTHER", "AOTHER"))
    ref = await stack.bot.platform.post(Place("slack", C), Outgoing("Your turn.", key=key, maybe_sent_since=since))
    assert ref.message_id != ts and len(keyed(stack.fake, key)) == 2
    assert stack.fake.messages[(C, ref.message_id)].text == "Your turn."


@pytest.mark.parametrize("lost", ["drop", "500"])
@pytest.mark.parametrize("kind", ["thread", "dm"])
async def test_a_post_whose_answer_was_lost_is_not_made_twice(stack: Stack, lost: str, kind: str) -> None:
    channel, send = await where(stack, kind)
    stack.fake.lost_answers = [lost]
    ref = await send(Outgoing("Alice gave a clue.", key="k1"))
    made = keyed(stack.fake, "k1")
    assert len(made) == 1 and (ref.channel, ref.message_id) == (channel, made[0].ts)
    assert len([c for c in stack.fake.methods("chat.postMessage") if c.get("metadata")]) == 1
    assert len(stack.fake.history_reads) == 1


async def test_a_post_that_timed_out_is_not_made_twice(stack: Stack) -> None:
    stack.bot.platform._posts.timeout = 1  # the fake answers after 2 s
    stack.fake.lost_answers = ["late"]
    ref = await stack.bot.platform.post(Place("slack", C), Outgoing("Alice gave a clue.", key="k1"))
    assert [m.ts for m in keyed(stack.fake, "k1")] == [ref.message_id]
    assert len(stack.fake.methods("chat.postMessage")) == 1 and len(stack.fake.history_reads) == 1


async def test_an_unkeyed_message_is_one_try_without_metadata(stack: Stack) -> None:
    stack.fake.lost_answers = ["500"]
    with pytest.raises(DeliveryFailed):
        await stack.bot.platform.post(Place("slack", C), Outgoing("The table is back."))
    assert [("metadata" in c) for c in stack.fake.methods("chat.postMessage")] == [False]
    assert stack.fake.history_reads == []


async def test_a_lost_answer_to_a_post_that_was_not_made_is_posted_again(stack: Stack) -> None:
    # Slack refused this one before making it (a 500 from in front of it): the history has no copy.
    stack.fake.faults.append(_once_500())
    await stack.bot.platform.post(Place("slack", C), Outgoing("Alice gave a clue.", key="k1"))
    assert len(keyed(stack.fake, "k1")) == 1 and len(stack.fake.history_reads) == 1


def _once_500() -> Fault:
    hits: list[int] = []

    def applies(_method: str, path: str) -> bool:
        if path == "/api/chat.postMessage" and not hits:
            hits.append(1)
            return True
        return False

    return Fault(applies, {"ok": False, "error": "internal_error"}, status=500)


@pytest.mark.parametrize("error", ["missing_scope", "ratelimited"])
async def test_a_failed_history_read_still_delivers(stack: Stack, caplog: pytest.LogCaptureFixture, error: str) -> None:
    if error == "ratelimited":  # as Slack answers a read over its rate: HTTP 429
        reads = ("/api/conversations.history", "/api/conversations.replies")
        stack.fake.faults.append(Fault(lambda _m, path: path in reads, {"ok": False, "error": error}, status=429))
    else:
        stack.fake.history_refused[C] = error
    ref = await stack.bot.platform.post(Place("slack", C), Outgoing("Bob voted.", key="k1", maybe_sent_since=time.time()))
    assert [m.ts for m in keyed(stack.fake, "k1")] == [ref.message_id]
    assert any("reading the history of C1 failed" in r.getMessage() and error in r.getMessage()
               for r in caplog.records if r.levelno == logging.WARNING)
    # With the answer lost and no history to look in, it is sent again: twice rather than never.
    stack.fake.lost_answers = ["500"]
    await stack.bot.platform.post(Place("slack", C), Outgoing("Carol voted.", key="k2"))
    assert len(keyed(stack.fake, "k2")) == 2


async def test_a_restart_after_lost_sent_marks_posts_each_message_once(fake: FakeSlack, tmp_path: Path) -> None:
    db = tmp_path / "hush.db"
    first = await open_stack(fake, db)
    game_id, _card = await open_table(first, "play spy", 2)
    rng = random.Random(7)
    for _ in range(2):  # turns that send messages (the deal's go out apart)
        table = first.service.tables[game_id]
        mover = next(s.user.user_id for s in table.seats if s.user is not None and s.seat in table.acting())
        await human_move(first, mover, game_id, rng, text_by_dm=False)
        await first.idle()
    await first.close()  # the holder goes away ...
    with sqlite3.connect(db) as conn:  # ... and the marks of what it had sent were never written
        keys = [k for (k,) in conn.execute("SELECT id FROM outbox WHERE game_id = ?", (game_id,))]
        conn.execute("UPDATE outbox SET sent_at = NULL WHERE game_id = ?", (game_id,))
    assert keys, "the game's turns logged no messages"
    assert all(len(keyed(fake, k)) == 1 for k in keys), "a message of the first holder is missing"
    posts = len(fake.methods("chat.postMessage"))

    second = await open_stack(fake, db)  # the next holder sends every unmarked row again
    try:
        await second.idle()
        await second.service.turns.outbox.flush()
        assert {k: len(keyed(fake, k)) for k in keys} == dict.fromkeys(keys, 1)
        assert len(fake.history_reads) >= 1
        # What it posted is its own ("The table is back", the digests, prompts), none of the rows.
        assert not any(c.get("metadata", {}).get("event_payload", {}).get("key") in keys
                       for c in fake.methods("chat.postMessage")[posts:])
        with sqlite3.connect(db) as conn:
            unsent = conn.execute("SELECT count(*) FROM outbox WHERE game_id = ? AND sent_at IS NULL", (game_id,))
            assert unsent.fetchone() == (0,)
        assert any("is back" in m.text for m in fake.thread(CHANNEL, _card.ts))
        assert fake.dms(BOB)
    finally:
        await second.close()


async def test_the_start_says_which_history_scopes_the_token_lacks(fake: FakeSlack, tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    settings = make_settings(fake, tmp_path / "hush.db")
    assert await adapter.check_tokens(settings) == "Hush"
    assert not [r for r in caplog.records if "lacks" in r.getMessage()]  # installed from the manifest
    fake.scopes = [s for s in fake.scopes if s not in ("groups:history", "mpim:history")]
    assert await adapter.check_tokens(settings) == "Hush"
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "lacks" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("SLACK_BOT_TOKEN lacks groups:history, mpim:history:")

"""The Discord-specific paths: closed DMs, a restart mid-game, duplicate interactions, export
permissions, autocomplete and mention safety, all through the real client and the fake server."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from bot.core.service import TableService
from bot.discord.adapter import run_discord
from bot.settings import Settings
from models.agents.random_agent import RandomAgent
from storage.store import Store
from tests.bot.discord.conftest import Harness
from tests.bot.discord.driver import Players, assert_no_secret_in_channels, card_of, open_table, over_messages, secrets_of
from tests.bot.discord.fake_discord import FakeDiscord


async def test_closed_dms_get_the_ephemeral_reveal(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob", dms_closed=True)
    gid, thread = await open_table(harness, alice, [bob], "spy", "spygame", 2)

    notices = [m for m in fake.in_channel(thread) if f"s:{gid}" in fake.custom_ids(m)]
    assert notices and "can't message you privately" in notices[0]["content"]
    assert fake.dms(bob) == [], "nothing can have reached bob's closed DMs"
    assert any(r.status == 403 for r in fake.requests if r.channel_id == fake.dm_of_user.get(bob))

    # Pressing the button reveals bob's word to bob alone.
    secrets = await secrets_of(harness, gid)
    ix = await fake.click(bob, notices[0], f"s:{gid}")
    assert ix.ephemeral and any(re.search(rf"\b{re.escape(w)}\b", ix.text, re.I) for w in secrets.words), ix.text

    players = Players(harness, gid, thread, [alice, bob])
    await players.play(closed={bob})
    assert players.reveals > 1 and len(over_messages(fake, thread, gid)) == 1
    assert_no_secret_in_channels(fake, await secrets_of(harness, gid))


async def test_restart_mid_game_keeps_old_buttons_working(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    gid, thread = await open_table(harness, alice, [bob], "chameleon", "classic", 1)
    players = Players(harness, gid, thread, [alice, bob])

    # Play until one member holds an open prompt, then restart before they answer it.
    pending: tuple[int, dict[str, Any]] | None = None
    for _ in range(50):
        await harness.idle()
        waiting = [(u, m) for u in (alice, bob) if (m := players.latest_prompt(u)) is not None]
        if waiting:
            pending = waiting[0]
            break
    assert pending is not None, "nobody was ever prompted"
    uid, old = pending

    identifies = fake.identifies
    await harness.stop()
    await harness.start()  # a new client, the same fake server, the same database file
    assert fake.identifies == identifies + 1

    assert await players.answer(uid, old), "a prompt sent before the restart must still be answerable"
    await players.play()
    assert len(over_messages(fake, thread, gid)) == 1
    assert_no_secret_in_channels(fake, await secrets_of(harness, gid))


async def test_duplicate_interaction_changes_nothing(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    gid, thread = await open_table(harness, alice, [bob], "decrypto", "benchmark", 1)
    players = Players(harness, gid, thread, [alice, bob])

    target = None
    for _ in range(50):
        await harness.idle()
        for u in (alice, bob):
            m = players.latest_prompt(u)
            if m is not None and any(c["type"] == 3 for c in fake.components(m)):
                target = (u, m)
                break
            if m is not None:
                await players.answer(u, m)
        if target:
            break
    assert target is not None, "no select-menu prompt came"
    uid, msg = target
    select = next(c for c in fake.components(msg) if c["type"] == 3)
    value = select["options"][0]["value"]
    iid = fake.snowflake()

    first = await fake.select(uid, msg, select["custom_id"], [value], iid=iid)
    assert "Got it" in first.text
    await harness.idle()
    assert harness.store is not None
    actions = len((await harness.store.load_game(gid)).actions)
    requests = len(fake.public_requests())

    again = await fake.select(uid, msg, select["custom_id"], [value], iid=iid)
    await harness.idle()
    assert again.ephemeral and "Already done" in again.text
    assert len((await harness.store.load_game(gid)).actions) == actions
    assert len(fake.public_requests()) == requests, "a duplicate must post nothing"


async def test_duplicate_slash_command_opens_one_lobby(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    iid = fake.snowflake()
    first = await fake.slash(alice, "play", iid=iid, game="spy")
    assert "is open" in first.text
    again = await fake.slash(alice, "play", iid=iid, game="spy")
    assert again.ephemeral and "is open" not in again.text
    await harness.idle()
    assert len(fake.in_channel(fake.channel_id)) == 1


async def test_export_is_for_admins_only(harness: Harness) -> None:
    fake = harness.fake
    bob = fake.add_member(name="bob")
    carol = fake.add_member(name="carol", admin=True)
    export = next(c for c in fake.commands if c["name"] == "export")
    assert int(export["default_member_permissions"]) == 1 << 5  # Manage Server, by default

    refused = await fake.slash(bob, "export", format="jsonl")
    assert refused.ephemeral and "admin" in refused.text.lower() and not refused.files

    allowed = await fake.slash(carol, "export", format="csv")
    assert allowed.ephemeral and allowed.files, allowed.text
    assert all(name.endswith(".csv") for name in allowed.files)


async def test_autocomplete_and_no_mentions(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    choices = await fake.autocomplete(alice, "play", "variant", "", game="chameleon")
    assert {c["value"] for c in choices} == {"classic", "sneak"}
    agents = await fake.autocomplete(alice, "ai", "agent", "ran")
    assert [c["value"] for c in agents] == ["random"]

    # A display name that tries to ping everyone lands in the lobby card, with mentions off.
    mallory = fake.add_member(name="@everyone <@&1>")
    await fake.slash(mallory, "play", game="spy")
    await harness.idle()
    card = fake.in_channel(fake.channel_id)[-1]
    assert "@everyone" in card["content"]
    sends = [r for r in fake.requests
             if r.method in ("POST", "PATCH") and re.fullmatch(r"/channels/\d+/messages(/\d+)?", r.path)]
    assert sends
    for r in sends:
        assert r.body.get("allowed_mentions", {}).get("parse") == [], (r.path, r.body)


async def test_run_discord_serves_until_cancelled(fake: FakeDiscord, settings: Settings, error_trap: object) -> None:
    """The production entry point: connects, syncs, starts the service, serves, stops on cancel."""
    store = await Store.open(settings.database_url)
    service = TableService(store, settings=settings, agents=lambda spec, seed: RandomAgent(spec, seed))
    task = asyncio.create_task(run_discord(service, settings, guild_ready_timeout=0.1))
    try:
        await fake.wait_for(lambda: fake.commands and fake.identifies, timeout=10)
        alice = fake.add_member(name="alice")
        ix = await fake.slash(alice, "play", game="chameleon")
        assert "is open" in ix.text
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await store.aclose()
    assert task.cancelled()


async def test_refused_input_is_explained_privately(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    ix = await fake.slash(alice, "play", game="spy")
    gid = int(re.search(r"Table #(\d+)", ix.text).group(1))  # type: ignore[union-attr]
    await fake.click(bob, card_of(fake, gid), f"l:{gid}:join")
    before = len(fake.public_requests())
    refused = await fake.click(bob, card_of(fake, gid), f"l:{gid}:start")
    assert refused.ephemeral and "host" in refused.text
    too_few = await fake.click(alice, card_of(fake, gid), f"l:{gid}:start")
    assert too_few.ephemeral and "seats" in too_few.text
    bad = await fake.slash(alice, "play", game="spy", options="spies=9")
    assert bad.ephemeral and "options" in bad.text  # parsed by /play and checked by the engine
    await harness.idle()
    assert len(fake.public_requests()) == before, "a refused command posts nothing in the channel"


async def test_ai_seats_are_added_and_removed_by_slash_command(harness: Harness) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    await fake.slash(alice, "play", game="spy")
    added = await fake.slash(alice, "ai", agent="random", count=2)
    assert "Added 2" in added.text
    removed = await fake.slash(alice, "removeai")
    assert "Removed" in removed.text
    await harness.idle()
    assert harness.store is not None
    row = (await harness.store.open_lobbies("discord"))[0]
    assert [s["kind"] for s in row.lobby["seats"]] == ["human", "ai"]


class _LeavesPromptsUnanswered(Players):
    """Players whose member with closed DMs leaves every prompt a notice reveals unanswered until they
    have pressed "Show my secret" again on their own (the driver's press-again path)."""

    let_go = 0
    closed_members: frozenset[int] = frozenset()

    async def answer(self, uid: int, msg: dict[str, Any]) -> bool:
        if uid in self.closed_members and not self.pressed_again:
            self.let_go += 1
            self.done.add(msg["id"])
            return False
        return await super().answer(uid, msg)


async def test_a_member_with_closed_dms_presses_show_again_while_owing_a_move(harness: Harness) -> None:
    """The players' driver itself: a member with closed DMs who left a revealed prompt unanswered (or
    pressed before it was ready) presses "Show my secret" again once the table is quiet and they still
    owe a move, instead of waiting for a notice that will not come; the game then ends."""
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob", dms_closed=True)
    gid, thread = await open_table(harness, alice, [bob], "spy", "spygame", 2)
    players = _LeavesPromptsUnanswered(harness, gid, thread, [alice, bob])
    players.closed_members = frozenset({bob})
    await players.play(closed={bob})
    assert players.let_go >= 1 and players.pressed_again >= 1
    assert len(over_messages(fake, thread, gid)) == 1

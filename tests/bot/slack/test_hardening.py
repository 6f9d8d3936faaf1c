"""The Slack side of the hardening: tenant and admin verdict on every command (2), agents among the
operator's choices (1), inert player text (6), every failed send a DeliveryFailed and a game
that survives a Web API answering a bare {"ok": true} (10), labels shortened from the middle
(20), a replayed export request uploading nothing twice (25)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.core import codec
from bot.core.messages import Button, Command, DeliveryFailed, Outgoing, Reply, UserRef
from bot.slack.blocks import render
from bot.slack.context import delivery
from games.base import Choice, Text
from tests.bot.slack.conftest import Stack, open_stack
from tests.bot.slack.fake_slack import TEAM, FakeSlack, Message
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL
from tests.vocabulary import NONSENSE


def record(st: Stack) -> list[Command]:
    seen: list[Command] = []
    handle: Callable[[Command], Awaitable[Reply]] = st.service.handle

    async def recording(cmd: Command) -> Reply:
        seen.append(cmd)
        return await handle(cmd)

    st.service.handle = recording  # type: ignore[method-assign]
    return seen


def game_id_of(st: Stack) -> int:
    found = [int(m.group(1)) for r in st.fake.responses if (m := re.search(r"Table #(\d+)", str(r.get("text"))))]
    assert found, st.fake.responses
    return found[-1]


async def test_every_command_carries_its_workspace_and_admin_verdict(fake: FakeSlack, tmp_path: Path) -> None:
    """Item 2: tenant "slack:<team>"; admin = users.info admin/owner or a configured user, for every kind."""
    fake.admins.add(BOB)
    st = await open_stack(fake, tmp_path / "hush.db", admin_users=("UCAROL",))
    try:
        seen = record(st)
        assert await st.sim.command(ALICE, CHANNEL, "play spy") == 200
        await st.idle()
        for user in (BOB, "UCAROL"):
            assert await st.sim.command(user, CHANNEL, "join") == 200
            await st.idle()
        assert [(c.user.user_id, c.tenant, c.is_admin) for c in seen] == [
            (ALICE, f"slack:{TEAM}", False), (BOB, f"slack:{TEAM}", True), ("UCAROL", f"slack:{TEAM}", True)]
    finally:
        await st.close()


async def test_ai_agent_must_be_one_of_the_choices(stack: Stack) -> None:
    """Item 1: `/hushtable ai <spec>` takes only an offered agent name."""
    st = stack
    assert await st.sim.command(ALICE, CHANNEL, "play spy") == 200
    await st.idle()
    assert await st.sim.command(ALICE, CHANNEL, "ai llm:openai:http://attacker.example/v1#m") == 200
    await st.idle()
    assert "among: random" in st.fake.responses[-1]["text"]
    seats = (await st.store.open_lobbies("slack"))[0].lobby["seats"]
    assert [s["kind"] for s in seats] == ["human"]


async def test_player_text_is_inert(stack: Stack) -> None:
    """Item 6: a name holding <!channel>, a user mention or a link is escaped once, by render."""
    st = stack
    hostile = urlencode({"user_name": "<!channel> <@U1> <https://evil.example|free>"})
    body = st.sim.command_body(ALICE, CHANNEL, "play spy").replace("user_name=ualice", hostile)
    assert await st.sim.send(body, "application/x-www-form-urlencoded") == 200
    await st.idle()
    card = st.fake.in_channel(CHANNEL)[-1]
    blob = card.text + str(card.blocks)
    assert "&lt;!channel&gt;" in blob and "&lt;@U1&gt;" in blob and "&lt;https://evil.example|free&gt;" in blob
    assert "<!channel>" not in blob and "<@U1>" not in blob and "<https://evil" not in blob


@pytest.mark.parametrize("error", [OSError("reset"), TimeoutError(), KeyError("channel"), TypeError("x")])
def test_every_failure_of_a_send_is_delivery_failed(error: Exception) -> None:
    with pytest.raises(DeliveryFailed), delivery("chat.postMessage"):
        raise error


async def test_a_bare_ok_web_api_leaves_no_table_stuck(stack: Stack) -> None:
    """Item 10: every method answers {"ok": true} (bolt's mock Web API): no channel, no ts.
    Nothing the bot posts arrives, yet every command is answered and the game ends."""
    st = stack
    st.fake.bare_ok()
    assert await st.sim.command(ALICE, CHANNEL, "play chameleon") == 200
    await st.idle()
    gid = game_id_of(st)
    for user, text in ((BOB, f"join {gid}"), (ALICE, "ai random 2"), (ALICE, f"start {gid}")):
        assert await st.sim.command(user, CHANNEL, text) == 200
        await st.idle()
    assert gid in st.service.tables, st.fake.responses[-1]
    words = iter(NONSENSE * 5)
    for _ in range(200):
        await st.idle()
        table = st.service.tables.get(gid)
        if table is None or table.over:  # a finished table leaves memory
            break
        acting = table.engine.to_act(table.state)
        mover = next(u for u in (ALICE, BOB) if (i := table.seat_of(UserRef("slack", u))) is not None and i.seat in acting)
        info = table.seat_of(UserRef("slack", mover))
        assert info is not None
        spec = table.engine.legal(table.state, info.seat)
        if isinstance(spec, Text):
            assert (await st.sim.dm_text(mover, "; ".join(next(words) for _ in spec.fields)))[0] == 200
        else:
            assert isinstance(spec, Choice)
            # What the prompt's button would carry, had Slack shown it.
            element = {"action_id": codec.action_id(gid, info.seat, spec.kind, spec.options[0].id), "type": "button",
                       "text": {"type": "plain_text", "text": spec.options[0].label}}
            element["value"] = element["action_id"]
            assert await st.sim.click(mover, Message("D" + mover, "1.000001", "", []), element) == 200
    else:
        raise AssertionError("the game did not end")
    row = await st.store.game(gid)
    assert row is not None and row.status == "finished"
    assert st.fake.faulted, "the bare answers were never exercised"


def test_labels_keep_their_disambiguating_suffix() -> None:
    """Item 20: 75 characters for buttons and options; the " (2)" survives."""
    name = "Maximilian-Alexander " * 5
    buttons = tuple(Button(f"g:1:0:vote:{i}", f"{name}({i})") for i in range(3))
    rendered = render(Outgoing("vote", buttons=buttons))
    labels = [el["text"]["text"] for b in rendered.blocks if b["type"] == "actions" for el in b["elements"]]
    assert [lb[-3:] for lb in labels] == ["(0)", "(1)", "(2)"] and all(len(lb) <= 75 for lb in labels)
    select = render(Outgoing("vote", buttons=buttons, select_id="g:1:0:vote"))
    options: list[Any] = [o["text"]["text"] for b in select.blocks if b["type"] == "actions" for o in b["elements"][0]["options"]]
    assert len(set(options)) == 3 and all(o.endswith(f"({i})") for i, o in enumerate(options))


async def test_a_replayed_export_request_uploads_once(stack: Stack) -> None:
    """Item 25: the same signed request, replayed within its 5 minutes, is one export."""
    st = stack
    st.fake.admins.add(BOB)
    body = st.sim.command_body(BOB, CHANNEL, "export jsonl")
    assert await st.sim.send(body, "application/x-www-form-urlencoded") == 200
    await st.idle()
    assert await st.sim.send(body, "application/x-www-form-urlencoded") == 200
    await st.idle()
    assert len(st.fake.files) == 1
    assert "already sent" in st.fake.responses[-1]["text"]


@pytest.mark.parametrize("text", ["ai ²", "ai ①", "ai " + "5" * 5000, "deadline १", "deadline １", "deadline ٣", "status ²"])
async def test_a_number_in_another_script_is_one_clear_line(stack: Stack, text: str) -> None:
    st = stack
    assert await st.sim.command(ALICE, CHANNEL, "play spy") == 200
    await st.idle()
    assert await st.sim.command(ALICE, CHANNEL, text) == 200
    await st.idle()
    assert "whole number (digits 0-9)" in st.fake.responses[-1]["text"], st.fake.responses[-1]

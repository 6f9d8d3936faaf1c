"""The Discord side of the hardening: tenants and admin rights per guild (2), agents among the
operator's choices (1), inert player text (6), every failed send a DeliveryFailed (10),
long messages split (19), labels shortened from the middle (20), Label modals (21).
Each test failed on the main branch before these changes."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

import discord
import pytest

from bot.core.messages import Button, Command, DeliveryFailed, Form, Outgoing, Place, Reply
from bot.discord.platform import delivery
from bot.discord.text import escape, markup
from bot.discord.views import FormModal, view_of
from tests.bot.discord.conftest import Harness
from tests.bot.discord.driver import Players, assert_no_secret_in_channels, open_table, over_messages, secrets_of
from tests.bot.fakeserver import Fault


def record(harness: Harness) -> list[Command]:
    """Every command the real service receives (observed, then handled as usual)."""
    service = harness.service
    assert service is not None
    seen: list[Command] = []
    handle: Callable[[Command], Awaitable[Reply]] = service.handle
    export = service.export

    async def recording(cmd: Command) -> Reply:
        seen.append(cmd)
        return await handle(cmd)

    async def recording_export(cmd: Command, *args: Any, **kw: Any) -> Any:
        seen.append(cmd)
        return await export(cmd, *args, **kw)

    service.handle = recording  # type: ignore[method-assign]
    service.export = recording_export  # type: ignore[method-assign]
    return seen


async def test_commands_carry_their_guild_and_its_admin_verdict(harness: Harness) -> None:
    """Item 2: tenant "discord:<guild>"; admin = Manage Server there or a configured role *id*."""
    fake = harness.fake
    # Mallory holds a role *named* like an admin role: a name proves nothing (the setting is gone).
    mallory = fake.add_member(name="mallory", extra_roles=(fake.plain_role_id,))
    carol = fake.add_member(name="carol", admin=True)
    seen = record(harness)

    refused = await fake.slash(mallory, "export", format="jsonl")
    assert not refused.files and "admin" in refused.text.lower()
    allowed = await fake.slash(carol, "export", format="csv")
    assert allowed.files
    assert [(c.tenant, c.is_admin) for c in seen] == [(f"discord:{fake.guild_id}", False), (f"discord:{fake.guild_id}", True)]

    # The operator names the role by id: now its members administer this guild.
    await harness.stop()
    harness.bot_options = {"admin_role_ids": [fake.plain_role_id]}
    await harness.start()
    seen = record(harness)
    promoted = await fake.slash(mallory, "export", format="jsonl")
    assert promoted.files, promoted.text
    assert seen[-1].is_admin and seen[-1].tenant == f"discord:{fake.guild_id}"


async def test_ai_agent_must_be_one_of_the_choices(harness: Harness) -> None:
    """Item 1: /ai offers the service's agent choices; anything else typed is refused."""
    fake = harness.fake
    alice = fake.add_member(name="alice")
    await fake.slash(alice, "play", game="spy")
    for spec in ("llm:openai:http://attacker.example/v1#m", "embed:../..", "llm:/any/path"):
        refused = await fake.slash(alice, "ai", agent=spec)
        assert refused.ephemeral and "random" in refused.text and "Added" not in refused.text
    added = await fake.slash(alice, "ai", agent="random")
    assert "Added 1" in added.text
    await harness.idle()
    assert harness.store is not None
    row = (await harness.store.open_lobbies("discord"))[0]
    assert [s.get("agent") for s in row.lobby["seats"] if s["kind"] == "ai"] == ["random"]


def test_escape_makes_markup_inert() -> None:
    raw = "[free nitro](https://evil.example) <@&1> <#2> ||spoiler|| `code` # big\n> quote **b**"
    out = escape(raw)
    assert "\\[free nitro\\](https://evil.example)" in out
    assert "\\<@&1>" in out and "\\<#2>" in out and "\\|\\|spoiler\\|\\|" in out and "\\`code\\`" in out
    assert "\n\\> quote" in out and "\\*\\*b\\*\\*" in out
    assert markup("**Spy** [x](y)") == "**Spy** \\[x\\](y)"  # the core's own bold survives


async def test_player_text_renders_inert_in_channel_messages(harness: Harness) -> None:
    """Item 6: a display name that is a masked link or a role mention is shown as text."""
    fake = harness.fake
    mallory = fake.add_member(name="[free nitro](https://evil.example) <@&1>")
    await fake.slash(mallory, "play", game="spy")
    await harness.idle()
    card = fake.in_channel(fake.channel_id)[-1]["content"]
    assert "\\[free nitro\\](https://evil.example)" in card and "\\<@&1>" in card
    assert not re.search(r"(?<!\\)\[free nitro(?<!\\)\]\(", card) and not re.search(r"(?<!\\)<@&1>", card)


async def test_malformed_responses_become_failed_deliveries(harness: Harness) -> None:
    """Item 10: a send that raises something other than discord.HTTPException (here a message
    object discord.py cannot parse) is a DeliveryFailed; the game goes on to its end."""
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    broken = f"/channels/{fake.dm_channel(alice)}/messages"
    fake.faults.append(Fault(lambda method, path: method == "POST" and path == broken, {"nonsense": True}))
    gid, thread = await open_table(harness, alice, [bob], "spy", "spygame", 2)
    assert fake.faulted, "the broken DM channel was never used"
    players = Players(harness, gid, thread, [alice, bob])
    await players.play(closed={alice})
    assert len(over_messages(fake, thread, gid)) == 1
    assert_no_secret_in_channels(fake, await secrets_of(harness, gid))


@pytest.mark.parametrize("error", [OSError("connection reset"), TimeoutError(), KeyError("id"), TypeError("x")])
def test_every_failure_of_a_send_is_delivery_failed(error: Exception) -> None:
    with pytest.raises(DeliveryFailed), delivery("post"):
        raise error


async def test_long_messages_are_split_at_lines(harness: Harness) -> None:
    """Item 19: over 2,000 characters, a message is split at line breaks; nothing is dropped."""
    fake = harness.fake
    assert harness.bot is not None
    lines = [f"{i}) candidate {'Bartholomew ' * 3}{i}" for i in range(150)]
    vote = (Button("g:1:0:vote:0", "first"), Button("g:1:0:vote:1", "second"))
    before = len(fake.in_channel(fake.channel_id))
    await harness.bot.platform.post(Place("discord", str(fake.channel_id)), Outgoing("\n".join(lines), buttons=vote))
    sent = fake.in_channel(fake.channel_id)[before:]
    assert len(sent) > 1 and all(len(m["content"]) <= 2000 for m in sent)
    assert "\n".join(m["content"] for m in sent).replace("\\", "").splitlines() == [
        ln.replace("\\", "") for ln in lines]
    assert [bool(fake.custom_ids(m)) for m in sent] == [False] * (len(sent) - 1) + [True]


def test_labels_keep_their_disambiguating_suffix() -> None:
    """Item 20 on Discord: 80 characters for buttons, 100 for select options."""
    name = "Maximilian-Alexander " * 6
    buttons = tuple(Button(f"g:1:0:vote:{i}", f"{name}({i})") for i in range(3))
    view = view_of(Outgoing("vote", buttons=buttons))
    assert view is not None
    labels = [c["label"] for row in view.to_components() for c in row["components"]]
    assert [lb[-3:] for lb in labels] == ["(0)", "(1)", "(2)"] and all(len(lb) <= 80 for lb in labels)
    many = tuple(Button(f"g:1:0:vote:{i}", f"{name}{name}({i})") for i in range(30))
    select = view_of(Outgoing("vote", buttons=many, select_id="g:1:0:vote"))
    assert select is not None
    options = [o["label"] for row in select.to_components() for c in row["components"] for o in c.get("options", [])]
    assert options[:3] and [o[-3:] for o in options[:3]] == ["(0)", "(1)", "(2)"] and all(len(o) <= 100 for o in options)


def test_modal_text_inputs_sit_in_label_components() -> None:
    """Item 21: discord.py 2.7 has discord.ui.Label, the layout Discord documents now."""
    modal = FormModal(Form("g:1:0:hints", "Hints", ("Hint 1", "Hint 2"), 30, "one word"))
    comps = modal.to_dict()["components"]
    assert [c["type"] for c in comps] == [discord.ComponentType.label.value] * 2
    assert [c["label"] for c in comps] == ["Hint 1", "Hint 2"]
    assert [c["component"]["custom_id"] for c in comps] == ["f0", "f1"]

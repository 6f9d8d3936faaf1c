"""Full games of every registered game and variant in a fake guild: two human members and AI seats,
played end to end through the real discord.py client (slash command, lobby buttons, thread,
DMs with secrets, modals, select menus, the result posted once), with no secret in any channel."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.core.messages import Outgoing, Place
from games.catalog import descriptors
from tests.bot.discord.conftest import Harness
from tests.bot.discord.driver import (
    Players,
    assert_no_private_line_in_channels,
    assert_no_secret_in_channels,
    open_table,
    over_messages,
    private_lines,
    secrets_of,
)
from tests.bot.privately import members_told_privately


def _tables() -> list[tuple[str, str, int]]:
    """Every variant of every registered game at its fewest seats: two members, the rest AI."""
    out = []
    for d in descriptors():
        for v in d.variants:
            lo = d.engine.seat_range(d.engine.make_config(str(v)))[0]
            out.append((d.id, str(v), max(lo - 2, 1)))
    return out


@pytest.mark.parametrize(("game", "variant", "ai"), _tables())
async def test_full_game(harness: Harness, game: str, variant: str, ai: int) -> None:
    fake = harness.fake
    alice = fake.add_member(name="alice")
    bob = fake.add_member(name="bob")
    # The AI seats can end a game before a member's first move (Spymasters' other team finding the
    # assassin): then the table plays again.
    for _ in range(4):
        gid, thread = await open_table(harness, alice, [bob], game, variant, ai)
        # Secrets went by DM (in benchmark Decrypto the interceptor holds none); the thread got the opening post.
        assert fake.dms(alice) or fake.dms(bob), "no secret was sent privately"
        assert fake.in_channel(thread), "nothing posted in the game's thread"
        players = Players(harness, gid, thread, [alice, bob], dm_text_once=alice)
        await players.play()
        await harness.idle()
        if players.accepted:
            break

    assert len(over_messages(fake, thread, gid)) == 1, "the result must be posted exactly once"
    assert players.accepted > 0
    # Every member who holds a secret or moved was told by DM (a Spymasters guesser may hold nothing).
    assert harness.store is not None
    members = {int(str(s.user_key).split(":", 1)[1]) for s in await members_told_privately(harness.store, gid)}
    assert members and members <= {alice, bob} and all(fake.dms(m) for m in members), members
    # Text prompts were answered through the modal (one spy description by DM reply), choices
    # with more than a few options through a select menu. Seating is random, so which humans
    # write (Decrypto's encoder may be the AI) varies from run to run.
    assert players.modals + players.dm_replies >= (1 if players.forms_seen else 0)
    assert players.selects >= (1 if players.selects_seen else 0)
    assert players.forms_seen or players.selects_seen
    # Where a text prompt offers "Or reply here", alice's first answer went by DM reply.
    assert players.dm_replies == (1 if players.reply_offered else 0)
    secrets = await secrets_of(harness, gid)
    if secrets.words:  # a game that deals words: none of them in any channel until the game says it
        assert_no_secret_in_channels(fake, secrets)
    # Every game: no line written for some seats only (a word, a code, a board's key) reaches a channel.
    assert_no_private_line_in_channels(fake, await private_lines(harness, gid))
    # The lobby card was edited in place (no second card) and lost its buttons once the game began.
    cards = [m for m in fake.in_channel(fake.channel_id) if f"table #{gid}" in m["content"]]
    assert len(cards) == 1 and not fake.custom_ids(cards[0])


async def test_the_secret_check_passes_the_rules_wording_and_fails_a_leak(harness: Harness) -> None:
    """The channel check itself, on real posts: a line the engine wrote for a public event passes
    even where its wording holds a dealt word ("Tie between ..." when the word is "tie"); the same
    word in any other line fails, in the same message too."""
    fake = harness.fake
    alice, bob = fake.add_member(name="alice"), fake.add_member(name="bob")
    gid, thread = await open_table(harness, alice, [bob], "spy", "classic", 2)
    secrets = await secrets_of(harness, gid)
    assert secrets.words and secrets.said, "a spy deal: words dealt, the round announced"
    word = sorted(secrets.words)[0]
    first_said = secrets.said[0][0]
    worded = replace(secrets, said=(*secrets.said, (first_said, f"{word.capitalize()} between bob and alice.")))
    assert harness.bot is not None
    place = Place("discord", str(fake.channel_id), str(thread))
    await harness.bot.platform.post(place, Outgoing(f"{word.capitalize()} between bob and alice."))
    assert_no_secret_in_channels(fake, worded)
    with pytest.raises(AssertionError, match="secret"):
        assert_no_secret_in_channels(fake, secrets)  # the same line is no event's: a leak
    await harness.bot.platform.post(place, Outgoing(f"{word.capitalize()} between bob and alice.\nPsst: {word}"))
    with pytest.raises(AssertionError, match="secret"):
        assert_no_secret_in_channels(fake, worded)

"""A whole Spymasters game in the fake Slack workspace through the real slack-bolt app: four
members (so both spymasters are people); the key by DM to the spymasters only, never in the
channel or the game's thread; the result posted once in the thread."""

from __future__ import annotations

import json

from bot.core.messages import UserRef
from tests.bot.slack.conftest import Stack
from tests.bot.slack.play import play_to_end
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL, button, lobby_card

CAROL, DAVE = "UCAROL", "UDAVE"
KEY_LINE = "The key, for the spymasters only."


async def test_full_spymasters_game(stack: Stack) -> None:
    st = stack
    assert await st.sim.command(ALICE, CHANNEL, "play spymasters") == 200
    await st.idle()
    card = lobby_card(st)
    game_id = int(button(card, "join")["action_id"].split(":")[1])
    for user in (BOB, CAROL, DAVE):
        assert await st.sim.click(user, card, button(card, "join")) == 200
        await st.idle()
    assert await st.sim.click(ALICE, card, button(card, "start")) == 200
    await st.idle()
    table = st.service.tables[game_id]
    masters = set(table.state.spymasters)
    seat_of = {u: table.seat_of(UserRef("slack", u)) for u in (ALICE, BOB, CAROL, DAVE)}
    moves = await play_to_end(st, game_id, [ALICE, BOB, CAROL, DAVE], seed=game_id)
    assert moves["modal"] > 0, "the spymasters wrote their clues in the modal"
    assert moves["button"] + moves["select"] > 0, "numbers and guesses were chosen"
    await st.idle()
    row = await st.store.game(game_id)
    assert row is not None and row.status == "finished"
    thread = st.fake.thread(CHANNEL, card.ts)
    assert sum(f"Game #{game_id} is over" in m.text for m in thread) == 1
    for c in st.fake.calls:
        if c.method in ("chat.postMessage", "chat.update") and not str(c.args.get("channel", "")).startswith("D"):
            assert KEY_LINE not in str(c.args.get("text", "")) + json.dumps(c.args.get("blocks", "")), "the key reached a channel"
    for user, info in seat_of.items():
        assert info is not None
        got = any(KEY_LINE in m.text or KEY_LINE in json.dumps(m.blocks) for m in st.fake.dms(user))
        assert got == (info.seat in masters), (user, info.seat, masters)

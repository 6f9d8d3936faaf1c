"""A restart mid-game over the same database, and the Socket Mode path through the real
AsyncSocketModeHandler."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from bot.core.service import TableService
from bot.slack.adapter import build_app
from models.agents import AgentRegistry
from storage.store import Store
from tests.bot.slack.conftest import make_settings, open_stack
from tests.bot.slack.fake_slack import FakeSlack
from tests.bot.slack.play import human_move, play_to_end
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL, open_table


async def test_restart_mid_game_finishes_on_the_next_click(fake: FakeSlack, tmp_path: Path) -> None:
    db = tmp_path / "hush.db"
    first = await open_stack(fake, db)
    game_id, card = await open_table(first, "play spy", 2)
    await first.idle()
    actions_before = len((await first.store.load_game(game_id)).actions)
    old_prompts = {m.ts for m in fake.dms(ALICE) + fake.dms(BOB)}
    await first.close()  # the process goes away mid-game

    # A new app over the same database: buttons and forms posted before still work.
    second = await open_stack(fake, db)
    try:
        assert game_id in second.service.tables
        # The next click is on a prompt posted before the restart.
        table = second.service.tables[game_id]
        acting = table.engine.to_act(table.state)
        mover = next(s.user.user_id for s in table.seats if s.user is not None and s.seat in acting)
        assert await human_move(second, mover, game_id, random.Random(1), text_by_dm=False, among=old_prompts) == "modal"
        await second.idle()
        after = (await second.store.load_game(game_id)).actions
        assert str(after[actions_before].inbound_id).startswith("slack:view:")  # the member's answer came first
        moves = await play_to_end(second, game_id, [ALICE, BOB], seed=3)
        assert sum(moves.values()) > 0
        row = await second.store.game(game_id)
        assert row is not None and row.status == "finished"
        assert len((await second.store.load_game(game_id)).actions) > actions_before
        thread = fake.thread(CHANNEL, card.ts)
        assert sum(f"Game #{game_id} is over" in m.text for m in thread) == 1
    finally:
        await second.close()


async def test_socket_mode_slash_command(fake: FakeSlack, tmp_path: Path) -> None:
    settings = make_settings(fake, tmp_path / "hush.db", slack_mode="socket", slack_signing_secret=None)
    store = await Store.open(settings.database_url)
    service = TableService(store, settings=settings, agents=AgentRegistry())
    bot = build_app(service, settings)
    service.attach(bot.platform)
    await service.start()
    handler = AsyncSocketModeHandler(bot.app, settings.slack_app_token)
    try:
        await handler.connect_async()
        payload = {
            "team_id": "T0HUSH", "channel_id": CHANNEL, "user_id": ALICE, "user_name": "ualice",
            "command": "/hushtable", "text": "play chameleon", "api_app_id": "AHUSH",
            "response_url": f"{fake.base}/response/sock1", "trigger_id": "1.sock",
        }
        envelope = await fake.socket_send("slash_commands", payload, accepts_response_payload=True)
        for _ in range(500):
            if any(a.get("envelope_id") == envelope for a in fake.socket_acks):
                break
            await asyncio.sleep(0.01)
        assert any(a.get("envelope_id") == envelope for a in fake.socket_acks), "the envelope was not acked"
        await bot.idle()
        assert fake.methods("apps.connections.open")
        lobbies = await store.open_lobbies("slack")
        assert len(lobbies) == 1 and lobbies[0].game == "chameleon"
        cards = [m for m in fake.in_channel(CHANNEL) if any(el["action_id"].startswith("l:") for el in m.actions())]
        assert len(cards) == 1
        assert any(r["token"] == "sock1" and "Table #" in r["text"] for r in fake.responses)
        assert not json.dumps(fake.socket_acks).count("error")
    finally:
        await handler.close_async()
        await bot.idle()
        await service.stop()
        await store.aclose()

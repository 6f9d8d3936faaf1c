"""Commands and replies survive the trip to a table's holder and back as JSON (bot/core/forward.py)."""

from __future__ import annotations

import json

from bot.core.forward import command_from, command_json, reply_from, reply_json
from bot.core.messages import Button, Command, CommandKind, Form, Outgoing, Place, Reply, Style, UserRef


def test_a_command_and_its_reply_come_back_equal() -> None:
    cmd = Command(CommandKind.ACT, UserRef("discord", "42", "Ann"), Place("discord", "c1", "t9"),
                  {"game_id": 7, "seat": 2, "kind": "vote", "value": ["Player 3"]}, "ix-1", is_admin=True,
                  tenant="discord:99")
    assert command_from(json.loads(json.dumps(command_json(cmd)))) == cmd
    prompt = Outgoing("Your turn ✋", buttons=(Button("p:7:2:0", "Player 1", Style.PRIMARY), Button("p:7:2:1", "Player 2")),
                      select_id="s:7:2", form=Form("f:7:2", "Your clue", ("clue",), 24, "one word"), title="Game #7",
                      user_text=True)
    for reply in (Reply("Got it."), Reply.error("That game is over."), Reply("secret digest", outgoing=prompt),
                  Reply("Already done", duplicate=True)):
        assert reply_from(json.loads(json.dumps(reply_json(reply), ensure_ascii=False))) == reply

"""The app manifest matches what the adapter listens for."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.slack.adapter import HISTORY_SCOPES
from bot.slack.commands import COMMAND

MANIFEST = Path(__file__).resolve().parents[3] / "deploy" / "slack-manifest.yaml"


def test_manifest_matches_the_adapter() -> None:
    m = yaml.safe_load(MANIFEST.read_text())
    assert [c["command"] for c in m["features"]["slash_commands"]] == [COMMAND]
    scopes = set(m["oauth_config"]["scopes"]["bot"])
    assert {"commands", "chat:write", "im:write", "im:history", "users:read", "files:write"} <= scopes
    assert set(HISTORY_SCOPES) <= scopes  # a message that may be there already is looked for first
    assert m["settings"]["event_subscriptions"]["bot_events"] == ["message.im"]
    assert m["settings"]["interactivity"]["is_enabled"] and m["settings"]["socket_mode_enabled"]

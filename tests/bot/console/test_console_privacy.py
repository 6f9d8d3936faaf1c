"""The members' data commands at the console (``privacy``, ``research on|off``, ``mydata``,
``forget-me [confirm]``, ``audit``) on a real SQLite log: bad input is one line and changes
nothing; mydata writes the member's JSON; forget-me asks first, then erases."""

from __future__ import annotations

import io
import json
from pathlib import Path

from bot.console.app import ConsolePlatform, ConsoleUI
from bot.core.privacy import PrivacyDesk
from bot.core.service import TableService
from bot.settings import Settings
from models.agents import AgentRegistry
from storage import people
from storage.store import Store
from tests.storage.test_people import UNIQUE, log_game


async def test_console_privacy_commands(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'c.db'}"
    settings = Settings(database_url=url, log_dir=tmp_path / "logs", privacy_contact="privacy@example.org",
                        _env_file=None)  # type: ignore[call-arg]
    store = await Store.open(url)
    out = io.StringIO()
    try:
        me = "console:you"
        await log_game(store, "chameleon", 5, ((me, "You", UNIQUE),))
        desk = PrivacyDesk(store, contact=settings.privacy_contact, consent="opt-in", retention_days=None)
        ui = ConsoleUI(TableService(store, settings=settings, agents=AgentRegistry()), ConsolePlatform(out), settings,
                       privacy=desk)

        async def say(line: str) -> str:
            start = len(out.getvalue())
            assert await ui.command(line)
            return out.getvalue()[start:]

        text = await say("privacy")
        assert "privacy@example.org" in text and "forget-me" in text and "mydata" in text
        assert "out of research" in await say("research")
        assert (await say("research maybe")).startswith("Say `research on`")
        assert await people.research_choices(store) == {}
        assert (await say("research on one")).startswith("! ")
        assert "Thanks" in await say("research on")
        assert await people.research_choices(store) == {me: True}

        written = await say("mydata")
        path = Path(written.split(" in ", 1)[1].strip().rstrip("."))
        data = json.loads(path.read_text())
        assert data["member"] == me and data["research_consent"] is True and len(data["games"]) == 1
        assert oct(path.stat().st_mode & 0o777) == "0o600"

        assert (await say("forget-me now")).startswith("! ")
        assert "Confirm" in await say("forget-me")
        assert (await people.member_data(store, me))["games"]  # nothing erased before confirming
        assert "Erased from 1 game(s)." in await say("forget-me confirm")
        assert (await people.member_data(store, me))["games"] == []
        audit = await say("audit")
        assert "data export" in audit and "erasure done" in audit and me not in audit
    finally:
        await store.aclose()


async def test_the_first_join_notice_shows_once_per_tenant(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'n.db'}")
    try:
        desk = PrivacyDesk(store, contact=None, consent="notice", retention_days=None)
        assert await desk.notice("discord:g1", "discord:1") is not None
        assert await desk.notice("discord:g1", "discord:1") is None
        assert await desk.notice("discord:g2", "discord:1") is not None
        assert "ask this server's admins" in desk.privacy_text()
        assert await desk.consents("discord:1")  # notice: in unless they said no
    finally:
        await store.aclose()

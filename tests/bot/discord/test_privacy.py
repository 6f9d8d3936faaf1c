"""`/privacy` (with its research buttons), `/research`, `/mydata`, `/forget-me` (with its confirmation button) and `/audit`
through real discord.py against the fake Discord: every answer only to the member, the data as an
attached file, nothing erased before the member presses "Erase me", the audit for admins."""

from __future__ import annotations

import json

from bot.core.privacy import PrivacyDesk
from bot.discord.privacy import CONFIRM_ID, RESEARCH_OFF_ID, RESEARCH_ON_ID
from storage import people
from tests.bot.discord.conftest import Harness


async def test_privacy_commands(harness: Harness) -> None:
    h = harness
    await h.stop()
    desk: dict[str, PrivacyDesk] = {}

    def options() -> dict[str, object]:
        assert h.store is not None
        desk["d"] = PrivacyDesk(h.store, contact="https://example.org/privacy", consent="opt-in", retention_days=None)
        return {"privacy": desk["d"]}

    h.options_for_bot = options  # type: ignore[method-assign]
    await h.start()
    fake = h.fake
    alice = fake.add_member(name="alice")
    carol = fake.add_member(name="carol", admin=True)
    me = f"discord:{alice}"
    assert h.store is not None

    shown = await fake.slash(alice, "privacy")
    assert "https://example.org/privacy" in shown.text and "forget-me" in shown.text
    assert "out of research" in (await fake.slash(alice, "research")).text
    # The notice's buttons: another member's click changes nothing; the asker's records their choice.
    notice = shown.messages[-1]
    other = await fake.click(carol, notice, RESEARCH_ON_ID)
    assert "Only the member who asked" in other.text and await people.research_choices(h.store) == {}
    assert "Thanks" in (await fake.click(alice, notice, RESEARCH_ON_ID)).text
    assert await people.research_choices(h.store) == {me: True}
    assert "left out" in (await fake.click(alice, notice, RESEARCH_OFF_ID)).text
    assert await people.research_choices(h.store) == {me: False}
    assert "Thanks" in (await fake.slash(alice, "research", choice="on")).text
    assert await people.research_choices(h.store) == {me: True}

    got = await fake.slash(alice, "mydata")
    assert got.files
    data = json.loads(next(iter(got.files.values())))
    assert data["member"] == me and data["research_consent"] is True

    assert "Only admins" in (await fake.slash(alice, "audit")).text
    asked = await fake.slash(alice, "forget-me")
    assert "Confirm" in asked.text and await people.research_choices(h.store) == {me: True}
    message = asked.messages[-1]
    other = await fake.click(carol, message, CONFIRM_ID)
    assert "Only the member" in other.text and await people.research_choices(h.store) == {me: True}
    done = await fake.click(alice, message, CONFIRM_ID)
    assert "Erased from 0 game(s)." in done.text
    assert await people.research_choices(h.store) == {}
    audit = (await fake.slash(carol, "audit")).text
    assert "data export" in audit and "erasure done" in audit and me not in audit

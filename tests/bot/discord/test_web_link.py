"""`/web` through real discord.py against the fake Discord: while the site is off, one sentence; with it on, a
member gets a link to their guild's finished games under their pseudonym, an admin one that covers the study,
each shown only to them, and the link's scope is the guild it was asked in."""

from __future__ import annotations

import re

from bot.web import links
from bot.web.wiring import WebLinks
from storage.export import pseudonym
from storage.export_secret import export_secret
from tests.bot.discord.conftest import Harness


async def test_web_answers_off_then_a_scoped_link_to_members_and_admins(harness: Harness) -> None:
    h = harness
    fake = h.fake
    alice = fake.add_member(name="alice")
    assert (await fake.slash(alice, "web")).text == "The web view is not switched on for this bot."

    await h.stop()
    made: dict[str, WebLinks] = {}

    def options() -> dict[str, object]:
        assert h.store is not None
        made["w"] = WebLinks(h.settings.model_copy(update={"web_port": 8765}), h.store)
        return {"web": made["w"]}

    h.options_for_bot = options  # type: ignore[method-assign]
    await h.start()
    carol = fake.add_member(name="carol", admin=True)
    assert h.store is not None
    key = made["w"].key
    for member, admin in ((alice, False), (carol, True)):
        shown = await fake.slash(member, "web")
        url = re.search(r"http://\S+", shown.text)
        assert url is not None and "keep it to yourself" in shown.text, shown.text
        token = url.group().split("/s/", 1)[1].split("/", 1)[0]
        scope = links.verify(key, token)
        tenant = f"discord:{fake.guild_id}"
        assert scope.tenant == tenant and scope.admin is admin and scope.game is None
        assert scope.member == pseudonym(export_secret(h.store.plan, None), f"discord:{member}", tenant=tenant)

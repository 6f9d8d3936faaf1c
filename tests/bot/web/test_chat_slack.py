"""`/hushtable web` on Slack (the real Bolt app over HTTP, the fake Web API): a member gets a link to their
workspace's finished games under their pseudonym, an admin one that covers the study, and while the site is off
a sentence saying so. The link opens the real site."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.web import links
from bot.web.server import Site, WebServer
from bot.web.wiring import web_links
from storage.export import pseudonym
from storage.export_secret import export_secret
from tests.bot.slack.conftest import open_stack
from tests.bot.slack.fake_slack import TEAM, FakeSlack
from tests.bot.slack.test_games import ALICE, BOB, CHANNEL


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    f = FakeSlack()
    await f.start()
    yield f
    await f.close()


async def test_a_member_and_an_admin_each_get_their_link(fake: FakeSlack, tmp_path: Path) -> None:
    fake.admins.add(BOB)
    st = await open_stack(fake, tmp_path / "hush.db")
    server = None
    try:
        assert await st.sim.command(ALICE, CHANNEL, "web") == 200
        await st.idle()
        assert fake.responses[-1]["text"] == "The web view is not switched on for this bot."
        server = await WebServer.start(Site(st.store, links.signing_key(links.key_path_for_sqlite(tmp_path / "hush.db")),
                                            export_secret(st.store.plan)))
        st.bot.context.web = web_links(st.settings.model_copy(update={"web_port": server.port}), st.store)
        found = {}
        for user in (ALICE, BOB):
            assert await st.sim.command(user, CHANNEL, "web") == 200
            await st.idle()
            text = str(fake.responses[-1]["text"])
            m = re.search(r"(http://\S+?/s/([^/\s>|]+)/)", text)
            assert m, text
            found[user] = (m.group(1), links.verify(links.signing_key(links.key_path_for_sqlite(tmp_path / "hush.db")), m.group(2)))
        for user, admin in ((ALICE, False), (BOB, True)):
            scope = found[user][1]
            assert scope.tenant == f"slack:{TEAM}" and scope.admin is admin
            assert scope.member == pseudonym(export_secret(st.store.plan), f"slack:{user}", tenant=f"slack:{TEAM}")
        async with aiohttp.ClientSession() as http:
            async with http.get(found[ALICE][0]) as resp:
                assert resp.status == 200 and "Finished games" in await resp.text()
            async with http.get(found[ALICE][0] + "study") as resp:
                assert resp.status == 404
            async with http.get(found[BOB][0] + "study") as resp:
                assert resp.status == 200
    finally:
        if server is not None:
            await server.aclose()
        await st.close()

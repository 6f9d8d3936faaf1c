"""What a member asking for the site in a chat gets: a link naming their tenant and their pseudonym, admin
scope only for admins, and nothing at all while the site is off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.settings import Settings
from bot.web import links
from bot.web.wiring import web_links
from storage.export import pseudonym
from storage.export_secret import export_secret
from storage.store import Store


def _settings(**kw: Any) -> Settings:
    return Settings(_env_file=None, **kw)  # type: ignore[call-arg]  # _env_file: a pydantic-settings init-only option


async def test_a_member_gets_their_tenant_and_pseudonym_and_admins_the_study(tmp_path: Path) -> None:
    store = await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'hush.db'}")
    try:
        assert web_links(_settings(), store) is None, "the site is off: no link is made"
        maker = web_links(_settings(web_port=8123, web_link_hours=2), store)
        assert maker is not None
        text = maker.answer("discord:1", "discord:member-4242", admin=False)
        url = text.split(": ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:8123/s/") and "2 h" in text and "study" not in text
        scope = links.verify(links.signing_key(links.key_path_for_sqlite(tmp_path / "hush.db")), url.split("/s/")[1].rstrip("/"))
        assert scope.tenant == "discord:1" and not scope.admin and scope.game is None
        # The member's id is long enough that the signed token cannot hold it by chance (a two-digit id did, now and then).
        assert scope.member == pseudonym(export_secret(store.plan), "discord:member-4242", tenant="discord:1") and "member-4242" not in url
        admin = web_links(_settings(web_url="https://games.example.org/"), store)
        assert admin is not None
        text = admin.answer("slack:T1", "slack:U1", admin=True)
        assert "https://games.example.org/s/" in text and "study" in text
    finally:
        await store.aclose()

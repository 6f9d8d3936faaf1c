"""The web view inside `hushtable run`: off unless HUSHTABLE_WEB_PORT is set, bound before the bot says it runs,
a busy port or a bad host refused in one line, and its pages served through a signed link while the bot runs."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.web import links
from tests.bot.discord.fake_discord import FakeDiscord
from tests.bot.test_startup import base_env, closed_port, discord_env, hushtable_run, refused


@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    yield server
    await server.close()


async def test_a_busy_web_port_or_a_bad_host_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_WEB_PORT=str(port)))
    assert len(lines) == 1 and f"HUSHTABLE_WEB_PORT: cannot listen on 127.0.0.1:{port}" in lines[0], lines
    lines = await refused(tmp_path, base_env(tmp_path, DISCORD_TOKEN="t", HUSHTABLE_WEB_PORT="8080",
                                             HUSHTABLE_WEB_HOST="999.1.1.1", HUSHTABLE_WEB_URL="ftp://x"))
    assert len(lines) == 2 and all(ln.startswith("hushtable: HUSHTABLE_WEB_") for ln in lines), lines


async def test_the_bot_serves_the_site_through_signed_links_only(tmp_path: Path, discord_fake: FakeDiscord) -> None:
    port = closed_port()
    env = {**discord_env(tmp_path, discord_fake.api, discord_fake.gateway), "HUSHTABLE_WEB_PORT": str(port)}
    async with hushtable_run(tmp_path, env) as run:
        await run.wait_for(lambda lines: any(ln.startswith("hushtable: web view:") for ln in lines))
        line = next(ln for ln in run.lines if ln.startswith("hushtable: web view:"))
        assert f"127.0.0.1:{port}" in line
        key = links.signing_key(links.key_path_for_sqlite(tmp_path / "hush.db"))
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/s/{links.make(key, 'discord:1')}/") as resp:
                assert resp.status == 200 and "No finished game matches" in await resp.text()
                assert resp.headers["Referrer-Policy"] == "no-referrer" and resp.headers["Cache-Control"] == "no-store"
            async with http.get(f"{base}/s/{links.make(b'x' * 64, 'discord:1')}/") as resp:
                assert resp.status == 403
            async with http.get(f"{base}/") as resp:
                assert resp.status == 404
    assert "Traceback" not in run.text
    logs = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "logs").rglob("*") if p.is_file())
    assert "/s/" not in logs, "no address with a token is ever logged"

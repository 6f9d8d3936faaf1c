"""Slack's HTTP mode under a flood of heads that announce a body and never send it: the signature is checked only
once the body is in, so such a head once held one of the 256 connection slots "busy" for the whole body deadline and
260 of them shut out every signed request. Signed commands must still be answered (>= 95%) during the flood."""

from __future__ import annotations

import asyncio
import contextlib
import time

import aiohttp

from tests.bot.slack.conftest import Stack
from tests.bot.slack.test_games import ALICE, CHANNEL

STALLED = 300  # over the cap of 256


async def _stalled(port: int, path: str) -> asyncio.StreamWriter | None:
    """A head as Slack's would look (a fresh timestamp, a signature that only the body can disprove), no body."""
    try:
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     f"X-Slack-Request-Timestamp: {int(time.time())}\r\nX-Slack-Signature: v0=00\r\nContent-Length: 4096\r\n\r\n".encode())
        await writer.drain()
    except OSError:
        return None
    return writer


async def test_signed_commands_are_answered_during_a_flood_of_stalled_bodies(stack: Stack) -> None:
    st = stack
    port = st.runner.addresses[0][1]  # type: ignore[attr-defined]
    path = st.settings.slack_path
    held: list[asyncio.StreamWriter] = []
    answered = 0
    try:
        for _ in range(STALLED):
            if (w := await _stalled(port, path)) is not None:
                held.append(w)
        await asyncio.sleep(0.2)  # every head is in and waiting for its body
        # a fresh connection per command, as a flood would leave no keep-alive standing
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as session:
            for _ in range(20):
                for _ in range(15):  # the flood goes on between the commands
                    if (w := await _stalled(port, path)) is not None:
                        held.append(w)
                body = st.sim.command_body(ALICE, CHANNEL, "help")
                headers = st.sim.signer.headers(body, "application/x-www-form-urlencoded")
                with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):
                    async with session.post(st.sim.app_url, data=body.encode(), headers=headers,
                                            timeout=aiohttp.ClientTimeout(total=10)) as resp:
                        await resp.read()
                        answered += resp.status == 200
        await st.idle()
        assert answered >= 19, f"{answered}/20 signed commands answered during the flood"
        assert st.runner.closed_for_cap > 0  # type: ignore[attr-defined]  # the flood did reach the cap
    finally:
        for w in held:
            w.close()

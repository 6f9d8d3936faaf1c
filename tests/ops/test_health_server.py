"""The ops server under hostile local clients, with real sockets on localhost: half-open requests
are cut at the header timeout and never hold more than the connection cap; slow, huge and
malformed requests get their status and a DEBUG line without a traceback; it binds to loopback
unless told otherwise. And Slack's signed-request endpoint answers a non-numeric timestamp with
400, not 500."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import aiohttp
import pytest

from bot.ops.health import OpsServer
from bot.ops.metrics import PrometheusObserver
from bot.ops.wiring import start_ops
from storage.store import Store

HALF_OPEN = 60
CAP = 8


async def _exchange(port: int, data: bytes, *, read_s: float = 5.0) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        async with asyncio.timeout(read_s):
            return await reader.read()
    finally:
        writer.close()


async def _until(done: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not done():
        assert loop.time() < deadline, what
        await asyncio.sleep(0.02)


async def _closed_by_server(reader: asyncio.StreamReader) -> bool:
    try:
        async with asyncio.timeout(0.05):
            await reader.read()
        return True  # EOF or an answer then EOF: the server let the connection go
    except TimeoutError:
        return False  # still held open
    except ConnectionError:
        return True


async def test_half_open_requests_are_capped_and_cut_at_the_header_timeout(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        server = await OpsServer.start(store, PrometheusObserver(), header_timeout_s=0.6, max_connections=CAP)
        conns: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        try:
            assert server.host == "127.0.0.1"
            for _ in range(HALF_OPEN):  # each sends half a request head and then nothing
                reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
                writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
                await writer.drain()
                conns.append((reader, writer))
            # Waits for the server's counts rather than for a time a loaded machine may stretch.
            # (A connection pushed out ends in its own task, a moment after the one that took its place.)
            await _until(lambda: server.refused >= HALF_OPEN - CAP and server.active <= CAP,
                         "the connections over the cap were not refused")
            held = [c for c in conns if not await _closed_by_server(c[0])]
            assert len(held) <= CAP
            await _until(lambda: server.active == 0, "the half-open requests were never cut")  # the header timeout
            assert all([await _closed_by_server(r) for r, _ in held])
            reply = await _exchange(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b"\r\n\r\nok\n")
        finally:
            for _, w in conns:
                w.close()
            await server.aclose()


@pytest.mark.parametrize(("data", "status"), [
    (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", b"400"),  # a TLS hello on a plain port
    (b"GET\r\n\r\n", b"400"),
    (b"GET /healthz HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
    (b"GET /healthz HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", b"400"),
    (b"POST /metrics HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n", b"413"),
    (b"POST /healthz HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", b"408"),  # the rest of the body never comes
    (b"GET /healthz HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n", b"400"),
    (b"DELETE /healthz HTTP/1.1\r\n\r\n", b"405"),
    (b"GET /nope HTTP/1.1\r\n\r\n", b"404"),
])
async def test_bad_requests_get_a_status_and_a_debug_line_without_traceback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, data: bytes, status: bytes) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.ops.health")
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        server = await OpsServer.start(store, PrometheusObserver(), header_timeout_s=0.5, body_timeout_s=0.3)
        try:
            reply = await _exchange(server.port, data)
            assert reply.split(b" ")[1] == status
            metrics = await _exchange(server.port, b"GET /metrics HTTP/1.1\r\n\r\n")
            assert b"hushtable_commands" in metrics  # the server goes on
        finally:
            await server.aclose()
    ours = [r for r in caplog.records if r.name == "bot.ops.health"]
    assert all(r.levelno <= logging.INFO and r.exc_info is None for r in ours)
    if status not in (b"404",):
        assert any(r.levelno == logging.DEBUG for r in ours)


async def test_the_ops_server_binds_to_loopback_unless_told(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        ops = await start_ops(SimpleNamespace(ops_port=0), store)
        try:
            assert ops.server is not None and ops.server.host == "127.0.0.1"
        finally:
            await ops.aclose()


async def test_slack_answers_a_non_numeric_timestamp_with_400(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from bot.core.service import TableService
    from bot.slack.adapter import build_app, serve_http
    from models.agents import AgentRegistry
    from tests.bot.slack.conftest import make_settings
    from tests.bot.slack.fake_slack import FakeSlack

    fake = FakeSlack()
    await fake.start()
    settings = make_settings(fake, tmp_path / "h.db")
    store = await Store.open(settings.database_url)
    runner = None
    try:
        bot = build_app(TableService(store, settings=settings, agents=AgentRegistry()), settings)
        runner = await serve_http(bot, "127.0.0.1", 0, settings.slack_path)
        port = runner.addresses[0][1]
        async with aiohttp.ClientSession() as http:
            for stamp in ("abc", "１２３", "9" * 40, "-5"):
                async with http.post(f"http://127.0.0.1:{port}{settings.slack_path}", data="command=%2Fhushtable",
                                     headers={"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": "v0=00",
                                              "Content-Type": "application/x-www-form-urlencoded"}) as resp:
                    assert resp.status == 400, stamp
    finally:
        if runner is not None:
            await runner.cleanup()
        await store.aclose()
        await fake.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_healthz_is_answered_while_40_local_clients_hold_the_32_connections(tmp_path: Path) -> None:
    async with await Store.open(f"sqlite+aiosqlite:///{tmp_path / 'h.db'}") as store:
        server = await OpsServer.start(store, PrometheusObserver())  # the defaults: 32 connections, 5 s for a head
        conns = []
        try:
            for _ in range(40):  # idle: connected, nothing sent
                conns.append(await asyncio.open_connection("127.0.0.1", server.port))
            await asyncio.sleep(0.1)
            reply = await _exchange(server.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", read_s=2.0)
            assert reply.startswith(b"HTTP/1.1 200 "), reply
            assert server.active <= server.max_connections + 1
        finally:
            for _, w in conns:
                w.close()
            await server.aclose()


async def test_slack_http_mode_survives_idle_connections_and_deep_json(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from bot.core.service import TableService
    from bot.slack.adapter import build_app, serve_http
    from models.agents import AgentRegistry
    from tests.bot.slack.conftest import SECRET, make_settings
    from tests.bot.slack.fake_slack import FakeSlack, Signer

    fake = FakeSlack()
    await fake.start()
    settings = make_settings(fake, tmp_path / "h.db")
    store = await Store.open(settings.database_url)
    server = None
    conns = []
    try:
        bot = build_app(TableService(store, settings=settings, agents=AgentRegistry()), settings)
        server = await serve_http(bot, "127.0.0.1", 0, settings.slack_path, max_connections=8)
        port = server.addresses[0][1]
        for _ in range(20):
            conns.append(await asyncio.open_connection("127.0.0.1", port))
        await asyncio.sleep(0.1)
        url = f"http://127.0.0.1:{port}{settings.slack_path}"
        deep = '{"type": "event_callback", "event": ' + "[" * 100_000 + "]" * 100_000 + "}"
        async with aiohttp.ClientSession() as http:
            headers = Signer(SECRET).headers(deep, "application/json")
            async with http.post(url, data=deep, headers=headers) as resp:
                assert resp.status == 400
            body = '{"type": "url_verification", "challenge": "c1"}'
            async with http.post(url, data=body, headers=Signer(SECRET).headers(body, "application/json")) as resp:
                assert resp.status == 200 and "c1" in await resp.text()
        assert server.closed_for_cap >= 12
    finally:
        for _, w in conns:
            w.close()
        if server is not None:
            await server.close()
        await store.aclose()
        await fake.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len([r for r in caplog.records if "connection(s) closed" in r.getMessage()]) == 1

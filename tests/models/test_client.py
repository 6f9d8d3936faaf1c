"""Clients: in-process vs HTTP agree; HTTP timeouts, retries and a dead worker; the per-spec pool."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from models.client import (
    ClientOptions,
    ClientPool,
    HttpClient,
    InProcessClient,
    canonical_spec,
    make_client,
)
from models.types import GenerateRequest, InferenceError, Message, ScoreRequest
from models.worker.fake_backend import FakeBackend, fake_probs
from models.worker.openai_backend import OpenAIInference
from models.worker.server import start_server

MSGS = (
    Message("system", "You are the decoder in Decrypto. Keywords: 1 ocean, 2 piano, 3 tiger, 4 candle."),
    Message("user", "Hints: waves, keys, stripes. Which keyword does 'waves' point to? Answer with A, B, C or D."),
)


async def _raw_server(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> TestServer:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    server = TestServer(app, host="127.0.0.1", port=0)
    await server.start_server()
    return server


async def test_http_and_in_process_clients_agree_on_the_tiny_llama(backend) -> None:  # noqa: ANN001
    local = InProcessClient.over(backend)
    await local.start()
    handle = await start_server(await local.ready(), "127.0.0.1", 0)
    remote = HttpClient(handle.url, timeout_s=60)
    try:
        gen = GenerateRequest(MSGS, max_tokens=6, temperature=0.0)
        score = ScoreRequest(MSGS, ("A", "B", "C", "D"))
        g_local, g_remote = await local.generate(gen), await remote.generate(gen)
        s_local, s_remote = await local.score_labels(score), await remote.score_labels(score)
        assert g_remote.text == g_local.text
        assert g_remote.model == g_local.model == "tiny-llama"
        assert g_remote.completion_tokens == g_local.completion_tokens
        assert s_remote.probs == pytest.approx(s_local.probs, abs=1e-6)
        assert sum(s_remote.probs) == pytest.approx(1.0)
        assert remote.model_id == "tiny-llama"
    finally:
        await remote.aclose()
        await handle.close()
        await local.aclose()


async def test_stalled_worker_raises_within_the_timeout() -> None:
    hits = 0

    async def stall(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        await asyncio.sleep(30)
        return web.json_response({})

    server = await _raw_server(stall)
    client = HttpClient(str(server.make_url("")), timeout_s=0.5, retries=3)
    try:
        with pytest.raises(InferenceError, match="within 0.5 s"):
            await client.generate(GenerateRequest(MSGS))
        # A stalled request is not sent again (the timeout bounds the whole call): counted at the server
        # rather than on a clock a loaded machine stretches (where even the first may not arrive in time).
        assert hits <= 1
    finally:
        await client.aclose()
        await server.close()


async def test_retries_5xx_then_succeeds_and_gives_up_when_out_of_tries() -> None:
    hits = 0

    async def flaky(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        if hits <= 2:
            return web.Response(status=503, text="warming up")
        return web.json_response({"probs": [0.25, 0.75], "model": "m"})

    server = await _raw_server(flaky)
    url = str(server.make_url(""))
    try:
        ok = HttpClient(url, timeout_s=5, retries=2, backoff_s=0.01)
        res = await ok.score_labels(ScoreRequest(MSGS, ("A", "B")))
        assert res.probs == (0.25, 0.75) and hits == 3
        await ok.aclose()

        hits = 0
        short = HttpClient(url, timeout_s=5, retries=1, backoff_s=0.01)
        with pytest.raises(InferenceError, match="503.*after 2 tries"):
            await short.score_labels(ScoreRequest(MSGS, ("A", "B")))
        assert hits == 2
        await short.aclose()
    finally:
        await server.close()


async def test_model_errors_are_not_retried() -> None:
    hits = 0

    async def broken(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        return web.json_response({"error": "CUDA out of memory", "kind": "model_error", "retryable": False}, status=500)

    server = await _raw_server(broken)
    client = HttpClient(str(server.make_url("")), timeout_s=5, retries=3, backoff_s=0.01)
    try:
        with pytest.raises(InferenceError, match="out of memory"):
            await client.generate(GenerateRequest(MSGS))
        assert hits == 1
    finally:
        await client.aclose()
        await server.close()


async def test_dead_worker_raises_after_bounded_retries() -> None:
    backend = FakeBackend()
    local = InProcessClient.over(backend)
    handle = await start_server(await local.ready(), "127.0.0.1", 0)
    client = HttpClient(handle.url, timeout_s=3, retries=2, backoff_s=0.01)
    try:
        assert (await client.health())["status"] == "ok"
        await handle.close()  # the worker dies
        # Three refused tries, told apart from a wait for the whole call's 3 s ("did not answer within").
        with pytest.raises(InferenceError, match="unreachable.*after 3 tries"):
            await client.generate(GenerateRequest(MSGS))
    finally:
        await client.aclose()
        await local.aclose()


async def test_in_process_client_loads_in_the_background() -> None:
    release = threading.Event()

    def slow_load() -> FakeBackend:
        release.wait(10)
        return FakeBackend("slow-model")

    client = InProcessClient(slow_load, model_id="pending")
    await client.start()
    assert not client.loaded  # start returned while the load still waits for ``release``
    call = asyncio.create_task(client.score_labels(ScoreRequest(MSGS, ("A", "B"))))
    await asyncio.sleep(0.05)
    assert not call.done()
    release.set()
    res = await asyncio.wait_for(call, 10)
    assert res.probs == pytest.approx(fake_probs(MSGS, ("A", "B")))
    assert client.loaded and client.model_id == "slow-model"
    await client.aclose()


async def test_failed_load_becomes_inference_error() -> None:
    def broken() -> FakeBackend:
        raise FileNotFoundError("no such model folder")

    client = InProcessClient(broken, model_id="missing")
    await client.start()
    for _ in range(2):  # every caller learns why, not just the first
        with pytest.raises(InferenceError, match="no such model folder"):
            await client.generate(GenerateRequest(MSGS))
    await client.aclose()


def test_canonical_spec() -> None:
    assert canonical_spec("llm:default") == "default"
    assert canonical_spec("llm:http://w:8100/") == "http://w:8100"
    assert canonical_spec("llm:openai:http://g:8000/v1#m") == "openai:http://g:8000/v1#m"
    assert canonical_spec("llm:models/x") == canonical_spec("./models/x")
    with pytest.raises(ValueError):
        canonical_spec("llm:")


async def test_pool_shares_one_client_per_spec() -> None:
    pool = ClientPool(ClientOptions(worker_url="http://worker:8100"))
    try:
        a = await pool.get("llm:fake")
        b = await pool.get("fake")
        c = await pool.get("llm:fake:other")
        assert a is b and a is not c
        assert isinstance(await pool.get("llm:openai:http://gpu:8000/v1#qwen"), OpenAIInference)
        http = await pool.get("llm:http://127.0.0.1:9")
        assert isinstance(http, HttpClient) and http.base_url == "http://127.0.0.1:9"
        default = await pool.get("llm:default")
        assert isinstance(default, HttpClient) and default.base_url == "http://worker:8100"
        res = await a.generate(GenerateRequest(MSGS, max_tokens=3))
        assert res.model == "fake"
        assert len(pool.specs()) == 5
    finally:
        await pool.aclose()
    assert pool.specs() == []


def test_local_paths_make_lazy_in_process_clients(tmp_path) -> None:  # noqa: ANN001
    client = make_client(f"llm:{tmp_path}")
    assert isinstance(client, InProcessClient) and client.model_id == tmp_path.name
    assert isinstance(make_client("llm:default"), InProcessClient)  # no worker configured


async def test_missing_local_model_fails_with_inference_error(tmp_path) -> None:  # noqa: ANN001
    client = make_client(f"llm:{tmp_path / 'nope.gguf'}")
    try:
        with pytest.raises(InferenceError, match="failed to load"):
            await client.generate(GenerateRequest(MSGS))
    finally:
        await client.aclose()

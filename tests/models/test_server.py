"""The worker's HTTP server over a Batcher and the fake backend: endpoints, validation, metrics, cancellation."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from models.client import HttpClient
from models.types import GenerateRequest, GenerateResult, InferenceError, Message, ScoreRequest, ScoreResult
from models.worker.batcher import Batcher
from models.worker.fake_backend import FakeBackend, fake_probs, fake_text
from models.worker.server import make_app, start_server

MSGS = [{"role": "system", "content": "You are an encoder."}, {"role": "user", "content": "Give a hint for OCEAN."}]
TUPLE_MSGS = tuple(Message(m["role"], m["content"]) for m in MSGS)


async def _client_for(inference: object, **kw: object) -> TestClient:
    client = TestClient(TestServer(make_app(inference, **kw)))  # type: ignore[arg-type]
    await client.start_server()
    return client


@pytest.fixture
async def fake_batcher() -> AsyncIterator[Batcher]:
    b = Batcher(FakeBackend("fake-1", fail_on=lambda r: "explode" in r.messages[-1].content), max_wait_s=0.001)
    await b.start()
    yield b
    await b.aclose()


@pytest.fixture
async def http(fake_batcher: Batcher) -> AsyncIterator[TestClient]:
    client = await _client_for(fake_batcher, max_body_bytes=4096)
    yield client
    await client.close()


async def test_generate_returns_the_backends_answer(http: TestClient) -> None:
    resp = await http.post("/v1/generate", json={"messages": MSGS, "max_tokens": 3, "seed": 7})
    assert resp.status == 200
    data = await resp.json()
    assert data["text"] == fake_text(TUPLE_MSGS, 3, 7)
    assert data["model"] == "fake-1"
    assert set(data) == {"text", "model", "prompt_tokens", "completion_tokens", "latency_s", "cached_tokens"}
    assert data["prompt_tokens"] > 0 and data["completion_tokens"] == len(data["text"].split())


async def test_score_returns_probabilities_in_label_order(http: TestClient) -> None:
    resp = await http.post("/v1/score", json={"messages": MSGS, "labels": ["A", "B", "C"]})
    assert resp.status == 200
    data = await resp.json()
    assert data["probs"] == pytest.approx(list(fake_probs(TUPLE_MSGS, ("A", "B", "C"))))
    assert sum(data["probs"]) == pytest.approx(1.0)
    assert data["model"] == "fake-1"


async def test_healthz(http: TestClient) -> None:
    resp = await http.get("/healthz")
    assert resp.status == 200
    assert await resp.json() == {"status": "ok", "model": "fake-1", "queue_depth": 0}


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/v1/generate", b"{not json", "malformed JSON"),
        ("/v1/generate", b"", "empty body"),
        ("/v1/generate", b"[1, 2]", "JSON object"),
        ("/v1/generate", {"max_tokens": 4}, "'messages'"),
        ("/v1/generate", {"messages": [{"role": "wizard", "content": "hi"}]}, "'messages'"),
        ("/v1/generate", {"messages": []}, "at least one message"),
        ("/v1/generate", {"messages": MSGS, "max_tokens": "many"}, "'max_tokens' must be an integer"),
        ("/v1/generate", {"messages": MSGS, "max_tokens": 0}, "between 1 and"),
        ("/v1/generate", {"messages": MSGS, "temperature": -1}, "'temperature'"),
        ("/v1/generate", {"messages": MSGS, "stop": [3]}, "'stop'"),
        ("/v1/generate", {"messages": MSGS, "seed": True}, "'seed'"),
        ("/v1/generate", {"messages": MSGS, "max_token": 3}, "unknown field"),
        ("/v1/score", {"messages": MSGS}, "'labels'"),
        ("/v1/score", {"messages": MSGS, "labels": ["A", "A"]}, "distinct"),
        ("/v1/score", {"messages": MSGS, "labels": ["A", ""]}, "non-empty"),
        ("/v1/score", {"messages": MSGS, "labels": ["A"], "mode": "vibes"}, "'mode'"),
    ],
)
async def test_bad_requests_get_400_with_a_reason(http: TestClient, path: str, body: object, needle: str) -> None:
    if isinstance(body, bytes):
        resp = await http.post(path, data=body, headers={"Content-Type": "application/json"})
    else:
        resp = await http.post(path, json=body)
    assert resp.status == 400
    data = await resp.json()
    assert needle in data["error"]
    assert data["kind"] == "bad_request" and data["retryable"] is False


async def test_body_over_limit_is_413(http: TestClient) -> None:
    big = [{"role": "user", "content": "x" * 5000}]
    resp = await http.post("/v1/generate", json={"messages": big})
    assert resp.status == 413
    assert "4096-byte limit" in (await resp.json())["error"]


async def test_model_error_is_500_and_only_hits_that_request(http: TestClient) -> None:
    bad = http.post("/v1/generate", json={"messages": [{"role": "user", "content": "please explode"}]})
    good = http.post("/v1/generate", json={"messages": MSGS})
    r_bad, r_good = await asyncio.gather(bad, good)
    assert r_bad.status == 500
    data = await r_bad.json()
    assert data["kind"] == "model_error" and "failure requested" in data["error"] and data["retryable"] is False
    assert r_good.status == 200


class _Refusing:
    """An Inference whose model refuses every request as invalid (like a label set that is not single tokens)."""

    model_id = "refusing"

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        raise ValueError("label 'Zebra' is not a single token")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise ValueError("label 'Zebra' is not a single token")

    async def aclose(self) -> None:
        pass


async def test_model_refusal_is_422() -> None:
    client = await _client_for(_Refusing())
    try:
        resp = await client.post("/v1/score", json={"messages": MSGS, "labels": ["Zebra"]})
        assert resp.status == 422
        assert "single token" in (await resp.json())["error"]
    finally:
        await client.close()


def _sample(metrics: str, name: str, **labels: str) -> float:
    sel = ",".join(f'{k}="{v}"' for k, v in labels.items())
    pat = "^" + re.escape(name + (f"{{{sel}}}" if sel else "")) + r" (\S+)$"
    m = re.search(pat, metrics, re.M)
    assert m is not None, f"{name} {labels} not in metrics:\n{metrics}"
    return float(m.group(1))


async def test_metrics_count_requests_tokens_and_latency(http: TestClient) -> None:
    for _ in range(3):
        assert (await http.post("/v1/generate", json={"messages": MSGS, "max_tokens": 2})).status == 200
    assert (await http.post("/v1/score", json={"messages": MSGS, "labels": ["A", "B"]})).status == 200
    assert (await http.post("/v1/score", json={"messages": MSGS, "labels": []})).status == 400
    resp = await http.get("/metrics")
    assert resp.status == 200 and resp.content_type == "text/plain"
    text = await resp.text()
    assert _sample(text, "hushtable_requests_total", endpoint="generate", status="200") == 3
    assert _sample(text, "hushtable_requests_total", endpoint="score", status="200") == 1
    assert _sample(text, "hushtable_requests_total", endpoint="score", status="400") == 1
    assert _sample(text, "hushtable_request_latency_seconds_count", endpoint="generate") == 3
    assert _sample(text, "hushtable_request_latency_seconds_bucket", endpoint="generate", le="+Inf") == 3
    prompt = FakeBackend().count_tokens(TUPLE_MSGS)
    assert _sample(text, "hushtable_prompt_tokens_total", endpoint="generate") == 3 * prompt
    assert _sample(text, "hushtable_completion_tokens_total") >= 3
    assert _sample(text, "hushtable_requests_in_flight", endpoint="generate") == 0
    # Every sample line is "name{labels} value" and every family is typed.
    for line in text.splitlines():
        assert line.startswith("# ") or re.fullmatch(r'[a-z_]+(\{[^}]*\})? [-+0-9.eInf]+', line), line
    # The batcher's own view: what reached the model, in how many batches.
    assert _sample(text, "hushtable_batcher_queue_depth") == 0
    assert _sample(text, "hushtable_batcher_requests_total", kind="generate") == 3
    assert _sample(text, "hushtable_batcher_requests_total", kind="score") == 1
    assert 1 <= _sample(text, "hushtable_batcher_batch_size_count") <= 4
    assert _sample(text, "hushtable_batcher_latency_seconds_count", kind="generate") == 3
    assert "# TYPE hushtable_batcher_batch_size histogram" in text


class _Gate:
    """An Inference that waits until released, and records whether its caller was cancelled."""

    model_id = "gate"

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def generate(self, req: GenerateRequest) -> GenerateResult:
        self.entered.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")

    async def score_labels(self, req: ScoreRequest) -> ScoreResult:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


async def test_client_disconnect_cancels_the_request_over_a_real_socket() -> None:
    gate = _Gate()
    handle = await start_server(gate, "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as s:
            call = asyncio.create_task(s.post(f"{handle.url}/v1/generate", json={"messages": MSGS}))
            await asyncio.wait_for(gate.entered.wait(), 5)
            call.cancel()  # the caller gives up: its connection is closed
            with pytest.raises(asyncio.CancelledError):
                await call
        await asyncio.wait_for(gate.cancelled.wait(), 5)
        async with aiohttp.ClientSession() as s:
            text = await (await s.get(f"{handle.url}/metrics")).text()
        assert _sample(text, "hushtable_requests_cancelled_total", endpoint="generate") == 1
        assert _sample(text, "hushtable_requests_in_flight", endpoint="generate") == 0
    finally:
        await handle.close()


class GatedBackend(FakeBackend):
    """The fake model, busy with each batch until the test opens ``gate``."""

    def __init__(self) -> None:
        super().__init__("fake-busy")
        self.gate, self.entered = threading.Event(), threading.Event()

    def generate_batch(self, reqs: Sequence[GenerateRequest]) -> list[GenerateResult | Exception]:
        self.entered.set()
        assert self.gate.wait(30)
        return super().generate_batch(reqs)


async def _until(done: Callable[[], Awaitable[bool]], what: str) -> None:
    for _ in range(1500):
        if await done():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(what)


async def test_a_request_whose_client_left_never_reaches_the_model() -> None:
    # Each step waits for the state it needs (the model busy, the second request queued, its cancel seen),
    # not for a time a loaded machine may stretch past the model's work.
    backend = GatedBackend()
    batcher = Batcher(backend, max_batch=1, max_wait_s=0.001)
    await batcher.start()
    handle = await start_server(batcher, "127.0.0.1", 0)
    url = f"{handle.url}/v1/generate"
    try:
        async with aiohttp.ClientSession() as s1, aiohttp.ClientSession() as s2:
            first = asyncio.create_task(s1.post(url, json={"messages": MSGS}))
            assert await asyncio.to_thread(backend.entered.wait, 30), "the first request never reached the model"
            second = asyncio.create_task(s2.post(url, json={"messages": [{"role": "user", "content": "late"}]}))

            async def queued() -> bool:
                return batcher.stats.queue_depth == 1

            async def seen_gone() -> bool:
                text = await (await s1.get(f"{handle.url}/metrics")).text()
                return _sample(text, "hushtable_requests_cancelled_total", endpoint="generate") == 1

            await _until(queued, "the second request never queued")
            second.cancel()  # its caller gives up while it waits in the queue
            await _until(seen_gone, "the server never saw the second caller leave")
            backend.gate.set()
            answer = await first
            assert answer.status == 200, await answer.text()

        async def dropped() -> bool:
            return batcher.stats.cancelled == 1

        await _until(dropped, "the batcher never dropped the abandoned request")
        assert backend.batch_sizes == [1]  # only the first request was ever run
    finally:
        await handle.close()
        await batcher.aclose()


async def test_real_socket_concurrent_requests_are_batched() -> None:
    backend = FakeBackend("fake-sock", delay_s=0.02)
    batcher = Batcher(backend, max_batch=8, max_wait_s=0.01)
    await batcher.start()
    handle = await start_server(batcher, "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as s:
            bodies = [{"messages": [{"role": "user", "content": f"hint {i}"}], "max_tokens": 4} for i in range(8)]
            resps = await asyncio.gather(*(s.post(f"{handle.url}/v1/generate", json=b) for b in bodies))
            texts = [json.loads(await r.text())["text"] for r in resps]
        assert texts == [fake_text((Message("user", f"hint {i}"),), 4) for i in range(8)]
        # Eight callers, fewer model calls: the batcher grouped them.
        assert sum(backend.batch_sizes) == 8 and len(backend.batch_sizes) < 8
    finally:
        await handle.close()
        await batcher.aclose()


def test_fake_backend_is_deterministic_and_scriptable() -> None:
    a, b = FakeBackend(), FakeBackend()
    req = ScoreRequest(TUPLE_MSGS, ("A", "B", "C", "D"))
    (ra,), (rb,) = a.score_batch([req]), b.score_batch([req])
    assert isinstance(ra, ScoreResult) and isinstance(rb, ScoreResult)
    assert ra.probs == rb.probs and sum(ra.probs) == pytest.approx(1.0)
    other = ScoreRequest((Message("user", "something else"),), req.labels)
    assert a.score_batch([other])[0].probs != ra.probs  # type: ignore[union-attr]

    scripted = FakeBackend(reply=["3-1-4", "first line\nsecond line"], fail_on=lambda r: "boom" in r.messages[0].content)
    reqs = [
        GenerateRequest(TUPLE_MSGS),
        GenerateRequest((Message("user", "boom"),)),
        GenerateRequest(TUPLE_MSGS, stop=("\n",)),
        GenerateRequest(TUPLE_MSGS, max_tokens=2),
    ]
    out = scripted.generate_batch(reqs)
    assert [getattr(r, "text", None) for r in out] == ["3-1-4", None, "first line", fake_text(TUPLE_MSGS, 2)]
    assert isinstance(out[1], InferenceError)
    assert scripted.batch_sizes == [4]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_hushtable_worker_command_serves_and_stops_on_sigterm() -> None:
    port = _free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from bot.cli import app; app()", "worker", "--model", "fake:cli", "--port", str(port),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )
    client = HttpClient(f"http://127.0.0.1:{port}", timeout_s=2, retries=0)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                health = await client.health()
                break
            except InferenceError:
                if time.monotonic() > deadline or proc.returncode is not None:
                    raise
                await asyncio.sleep(0.1)
        assert health == {"status": "ok", "model": "cli", "queue_depth": 0}
        res = await client.score_labels(ScoreRequest(TUPLE_MSGS, ("A", "B")))
        assert res.probs == pytest.approx(fake_probs(TUPLE_MSGS, ("A", "B")))
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), 20)
        assert proc.returncode == 0, err.decode()
        assert b"worker stopped" in err
    finally:
        await client.aclose()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def test_a_worker_with_a_token_answers_only_calls_that_carry_it(fake_batcher: Batcher) -> None:
    handle = await start_server(fake_batcher, "127.0.0.1", 0, token="s3cret-token")
    try:
        async with aiohttp.ClientSession() as s:
            async with s.post(f"{handle.url}/v1/generate", json={"messages": MSGS, "max_tokens": 3}) as resp:
                assert resp.status == 401
                assert "HUSHTABLE_WORKER_TOKEN" in (await resp.json())["error"]
            async with s.post(f"{handle.url}/v1/generate", json={"messages": MSGS, "max_tokens": 3},
                              headers={"Authorization": "Bearer wrong"}) as resp:
                assert resp.status == 401
            async with s.get(f"{handle.url}/healthz") as resp:
                assert resp.status == 200  # health checks need no token
        wrong = HttpClient(handle.url, token="wrong", retries=0)
        with pytest.raises(InferenceError):
            await wrong.generate(GenerateRequest(messages=TUPLE_MSGS, max_tokens=3))
        await wrong.aclose()
        right = HttpClient(handle.url, token="s3cret-token")
        out = await right.generate(GenerateRequest(messages=TUPLE_MSGS, max_tokens=3, seed=7))
        assert out.text == fake_text(TUPLE_MSGS, 3, 7)
        await right.aclose()
    finally:
        await handle.close()


async def test_a_worker_refuses_to_listen_beyond_loopback_without_a_token(fake_batcher: Batcher) -> None:
    from models.worker.server import UnsafeBind, is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3") and not is_loopback("worker")
    with pytest.raises(UnsafeBind, match="HUSHTABLE_WORKER_TOKEN"):
        await start_server(fake_batcher, "0.0.0.0", 0)


def test_the_worker_command_refuses_an_open_bind_in_one_line(tmp_path: object) -> None:
    import os
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUSHTABLE_")}
    out = subprocess.run([sys.executable, "-m", "bot.cli", "worker", "--model", "fake", "--host", "0.0.0.0", "--port", "0"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    lines = (out.stdout + out.stderr).strip().splitlines()
    assert len(lines) == 1 and "HUSHTABLE_WORKER_TOKEN" in lines[0] and "Traceback" not in out.stderr

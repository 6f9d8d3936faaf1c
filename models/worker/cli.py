"""Entry point of ``hushtable worker``: load a model, put a batcher in front of it, serve HTTP."""

from __future__ import annotations

import asyncio
import logging
import signal

from models.types import Backend
from models.worker.batcher import Batcher
from models.worker.server import UnsafeBind, is_loopback, serve

log = logging.getLogger(__name__)


def load_backend(model: str, device: str = "cpu", dtype: str = "float32") -> Backend:
    """``fake`` / ``fake:NAME`` for the deterministic fake; otherwise a transformers model spec."""
    if model == "fake" or model.startswith("fake:"):
        from models.worker.fake_backend import FakeBackend

        return FakeBackend(model.partition(":")[2] or "fake")
    # Imported only here so `hushtable worker --model fake` starts without torch.
    from models.worker.transformers_backend import TransformersBackend

    return TransformersBackend.load(model, device, dtype)


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
    log.info("loading model %s on %s (%s)", model, device, dtype)
    backend = await asyncio.to_thread(load_backend, model, device, dtype)
    batcher = Batcher(backend, max_batch=max_batch, max_wait_s=max_wait_ms / 1000.0)
    await batcher.start()
    try:
        await serve(batcher, host, port, token=token)
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
) -> None:
    """Blocking: run the worker until interrupted (Ctrl-C ends it cleanly)."""
    try:
        asyncio.run(run_worker_async(model, device, dtype, host, port, max_batch, max_wait_ms, handle_signals=True, token=token))
    except (KeyboardInterrupt, asyncio.CancelledError):
        log.info("worker stopped")

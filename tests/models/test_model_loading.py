"""Model loads in one process: two at once (the bundled SmolLM2 and MiniLM) both come out whole,
a failed load is retried once and reported, and an embedder busy in a daemon thread never
aborts the process at exit."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from models.bundled import ModelLoadFailed, load_model
from models.types import GenerateRequest, Message

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.real_model
def test_smollm2_and_minilm_loaded_at_once_both_work():
    from models.worker.embedding_backend import TransformersEmbedder
    from models.worker.transformers_backend import TransformersBackend

    for _ in range(3):  # the race showed in two of three tries
        start = threading.Barrier(2)

        def llm(start: threading.Barrier = start) -> TransformersBackend:
            start.wait()
            return TransformersBackend.load("default")

        def embed(start: threading.Barrier = start) -> np.ndarray:
            start.wait()
            return TransformersEmbedder("minilm").embed(["apple", "pear"])

        with ThreadPoolExecutor(2) as pool:
            backend_f, vecs_f = pool.submit(llm), pool.submit(embed)
            backend, vecs = backend_f.result(timeout=600), vecs_f.result(timeout=600)
        assert vecs.shape[0] == 2 and np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
        (gen,) = backend.generate_batch([GenerateRequest((Message("user", "Say hello."),), max_tokens=4)])
        assert not isinstance(gen, Exception) and gen.completion_tokens > 0


def test_a_failed_load_is_retried_once_and_reported(caplog: pytest.LogCaptureFixture):
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return "model"

    with caplog.at_level(logging.WARNING, logger="models.bundled"):
        assert load_model("default", flaky) == "model"
    assert len(tries) == 2
    assert [r.getMessage() for r in caplog.records] == ["model default failed to load (NotImplementedError); trying once more"]


def test_a_load_failing_twice_is_raised_never_dropped(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> str:
        raise RuntimeError("no")

    with caplog.at_level(logging.WARNING, logger="models.bundled"), pytest.raises(ModelLoadFailed, match="'default' failed to load twice"):
        load_model("default", broken)
    assert len(caplog.records) == 2 and caplog.records[-1].levelno == logging.ERROR


def test_missing_files_are_not_retried() -> None:
    tries: list[int] = []

    def missing() -> str:
        tries.append(1)
        raise FileNotFoundError("nothing there")

    with pytest.raises(FileNotFoundError):
        load_model("/nowhere", missing)
    assert tries == [1]


@pytest.mark.real_model
def test_exit_while_an_embedder_works_in_a_daemon_thread_is_clean():
    # What the agents' vocabulary warm-up does: embed in a daemon thread, while the command ends.
    script = textwrap.dedent("""
        import threading, time
        from models.worker.embedding_backend import TransformersEmbedder
        e = TransformersEmbedder("minilm")
        e.embed(["warm"])
        words = [f"word{i} thing{i * 7} other{i * 13}" for i in range(20000)]
        def warm():
            try:
                e.embed(words)
            except Exception:
                pass
        threading.Thread(target=warm, daemon=True).start()
        time.sleep(1.0)
        print("done")
    """)
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip() == "done" and "terminate called" not in run.stderr


@pytest.mark.real_model
def test_exit_while_an_embedder_loads_in_a_daemon_thread_waits_for_the_load():
    # `hushtable run` stopped by SIGTERM a second after start: the vocabulary warm-up is still loading
    # the model. The exit waits for the load (which needs transformers' thread pool, so it must run before
    # the pools stop), and the warm-up then stops between batches. A thread frozen inside torch while the
    # interpreter finalizes aborts the process ("terminate called without an active exception").
    script = textwrap.dedent("""
        import logging, threading
        logging.basicConfig(level=logging.INFO, format="%(message)s")
        from models.worker.embedding_backend import TransformersEmbedder
        e = TransformersEmbedder("minilm")
        started = threading.Event()
        def warm():
            started.set()
            e.embed([f"word{i}" for i in range(5000)])
        threading.Thread(target=warm, daemon=True).start()
        started.wait()
        print("done")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(Path.home())})
    assert run.returncode == 0 and "terminate called" not in run.stderr, run.stderr[-2000:]
    assert run.stdout.strip() == "done"
    assert "model minilm loaded in" in run.stderr and "failed to load" not in run.stderr, run.stderr[-2000:]

"""WAL checkpoints of a SQLite file, off the writers' path.

In WAL mode SQLite appends every commit to the ``-wal`` file and, by default, the commit that
takes the file past 1,000 pages copies the pages back into the database and syncs it (an
"automatic checkpoint"): 15-20 ms on the development machine, paid by that one commit with the
store's write lock held, so every turn queued behind it waits too. With 1,000 tables that is a
checkpoint every few seconds and the slowest percent of commands.

A ``Database`` on a SQLite file turns automatic checkpoints off on its own connections
(``PRAGMA wal_autocheckpoint=0``, ``storage.engine``) and hands them to a ``Checkpointer``: told
after each write, it runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a connection of its own in a
thread of its own, at most every ``every_s`` seconds while writes come in and not at all when
none do. A passive checkpoint never waits for readers or writers (WAL lets writers append while
it copies); what it cannot copy yet, the next one does. A failed checkpoint is logged and tried
again after the next write: no write ever waits for one or fails because of one. Other processes
on the same file (the CLI) checkpoint their own writes the same way, and SQLite checkpoints
whatever is left when the last connection to the file closes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from storage.engine import BUSY_TIMEOUT_MS

log = logging.getLogger(__name__)

CHECKPOINT_EVERY_S = 1.0


class Checkpointer:
    """Passive WAL checkpoints of one SQLite file, at most every ``every_s`` seconds after a write."""

    def __init__(self, path: Path, *, every_s: float = CHECKPOINT_EVERY_S) -> None:
        self.path = path
        self.every_s = every_s
        self.runs = 0  # checkpoints run (for tests and metrics)
        self.failures = 0
        self._dirty = False
        self._task: asyncio.Task[None] | None = None
        self._conn: sqlite3.Connection | None = None
        # One thread of its own: a checkpoint's sync never takes a thread the turn log's commits use.
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="hushtable-checkpoint")
        self._closed = False

    def wrote(self) -> None:
        """Called after each committed write: a checkpoint follows within ``every_s`` seconds."""
        if self._closed:
            return
        self._dirty = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # a write outside a loop: the next write in one starts the task
            return
        task = self._task
        if task is None or task.done() or task.get_loop() is not loop:
            self._task = loop.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self._dirty and not self._closed:
            self._dirty = False
            try:
                await loop.run_in_executor(self._thread, self._checkpoint)
            except Exception as exc:  # a busy or failing disk: the next write tries again
                self.failures += 1
                log.warning("WAL checkpoint failed (%s); writes go on and the next one tries again", type(exc).__name__)
            await asyncio.sleep(self.every_s)

    def _checkpoint(self) -> None:
        if self._conn is None:
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        self.runs += 1

    def _close_conn(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def aclose(self) -> None:
        """Stop; a checkpoint running in its thread finishes first."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        await asyncio.get_running_loop().run_in_executor(self._thread, self._close_conn)
        self._thread.shutdown(wait=True)

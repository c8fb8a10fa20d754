"""Redis writes that no job waits on, sent in batches from one background thread.

Under load a worker's job threads share one GIL, and every blocking Redis round trip costs a
job several milliseconds of waiting to get it back (docs/PERFORMANCE.md). Some of a job's writes
need no reply and no ordering with the result: the session log's "already written" marker, the
shared record of recent completions that ``tersify status`` reads, a circuit breaker's reset
after an ordinary success. Those are queued here and sent together, one pipeline per
``interval`` at most, from one thread.

Counts that many jobs add to (``every``) are sent once per ``period`` (a second) whatever the
number of jobs: one command per count, not one per job.

They are best effort by design. A write lost to a crash or to an unreachable Redis costs at
most a cached summary made again, a second of completions missing from the status rates, or a
failure count that a later success resets; each caller's docstring says which.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import redis
import structlog

log = structlog.get_logger("tersify.writebehind")

Write = Callable[[Any], object]  # given a non-transactional pipeline, queues commands on it


class WriteBehind:
    """Queue fire-and-forget Redis writes; a daemon thread sends them in batches."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        interval: float = 0.02,
        limit: int = 10_000,
        period: float = 1.0,
    ) -> None:
        self._client = client
        self._interval = interval
        self._period = period
        self._periodic: list[Write] = []
        self._due = 0.0  # monotonic: when the periodic writes are sent next
        self._pending: deque[Write] = deque(maxlen=limit)  # the oldest go first when Redis is gone
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None
        self._send_lock = threading.Lock()

    def submit(self, write: Write) -> None:
        """Queue ``write``; it reaches Redis within about ``interval`` seconds."""
        self._pending.append(write)
        if self._closed:  # the worker is shutting down: no thread left to send it
            self.flush()
            return
        if self._thread is None:
            self._start()
        self._wake.set()

    def every(self, write: Write) -> None:
        """Run ``write`` with the batch about once a ``period`` (it writes what accumulated),
        once the thread runs (``running``)."""
        with self._send_lock:
            self._periodic.append(write)

    def running(self) -> None:
        """Make sure the thread runs, without sending anything now (a periodic write has
        something to send)."""
        if self._thread is None and not self._closed:
            self._start()

    def flush(self, *, periodic: bool = False) -> int:
        """Send everything queued now (and the periodic writes: ``periodic``), in the caller's
        thread; the number of writes sent."""
        with self._send_lock:
            batch: list[Write] = []
            while self._pending and len(batch) < 1000:
                batch.append(self._pending.popleft())
            if periodic or time.monotonic() >= self._due:
                self._due = time.monotonic() + self._period
                batch += self._periodic
            if not batch:
                return 0
            try:
                with self._client.pipeline(transaction=False) as pipe:
                    for write in batch:
                        write(pipe)
                    pipe.execute(raise_on_error=False)
            except redis.RedisError as exc:
                log.warning("deferred_writes_lost", writes=len(batch), error=type(exc).__name__)
                return 0
            return len(batch)

    def close(self) -> None:
        """Stop the thread and send what is left (best effort)."""
        self._closed = True
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        while self.flush(periodic=True) > len(self._periodic):
            pass

    def _start(self) -> None:
        with self._send_lock:
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="tersify-writebehind", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while not self._closed:
            if not self._wake.wait(timeout=self._period):
                self.flush()  # the periodic writes, when due
                continue
            self._stop.wait(self._interval)  # let a batch gather; close() cuts it short
            self._wake.clear()
            while self._pending and self.flush() and not self._closed:
                pass

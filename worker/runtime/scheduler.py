"""The process's scheduler: one background thread that renews the gate leases of in-flight jobs
and runs the periodic chores (sweep, heartbeat, redelivery) on the same clock.

It starts with the first lease or chore registered; ``worker.broker.signals`` registers every
chore of a worker process, in one place.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import structlog

from tersify.errors import TersifyError
from tersify.gate import SessionGate
from tersify.settings import Settings

log = structlog.get_logger("tersify.scheduler")


class Scheduler:
    """Renews registered holds every third of a lease, all in one gate call; runs periodic chores
    between renewals."""

    def __init__(self, gate: SessionGate, settings: Settings) -> None:
        self._gate = gate
        self._every = max(0.05, settings.gate_lease_seconds / 3)
        self._holds: dict[str, tuple[str, int]] = {}
        self._chores: list[tuple[float, Callable[[], object]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @contextmanager
    def holding(self, session_id: str, job_id: str, token: int | None) -> Iterator[None]:
        """Keep the job's hold renewed while the block runs (no-op for jobs without a hold)."""
        if token is None:
            yield
            return
        with self._lock:
            self._holds[job_id] = (session_id, token)
        self._ensure_thread()
        try:
            yield
        finally:
            with self._lock:
                self._holds.pop(job_id, None)

    def every(self, interval: float, chore: Callable[[], object]) -> None:
        """Run ``chore`` about every ``interval`` seconds on the scheduler's thread."""
        with self._lock:
            self._chores.append((interval, chore))
        self._ensure_thread()

    def stop(self) -> None:
        """Stop the thread (bounded wait)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="tersify-scheduler", daemon=True
                )
                self._thread.start()

    def _tick(self) -> float:
        with self._lock:
            return min([self._every, *(interval for interval, _ in self._chores)])

    def _run(self) -> None:
        last_run: dict[int, float] = {}
        last_renewal = time.monotonic()
        while not self._stop.wait(self._tick()):
            now = time.monotonic()
            if now - last_renewal >= self._every:
                last_renewal = now
                self._renew_all()
            with self._lock:
                chores = list(enumerate(self._chores))
            for index, (interval, chore) in chores:
                if now - last_run.get(index, 0.0) >= interval:
                    last_run[index] = now
                    self._safely(chore)

    def _renew_all(self) -> None:
        # one gate call renews every hold of this process, however many jobs it runs
        with self._lock:
            holds = [(sid, job_id, token) for job_id, (sid, token) in self._holds.items()]
        try:
            renewed = self._gate.renew_all(holds)
        except TersifyError as exc:
            log.warning("lease_renew_failed", jobs=len(holds), error=str(exc))
            return
        for (session_id, job_id, _), ok in zip(holds, renewed, strict=True):
            with self._lock:
                running = job_id in self._holds  # a job that just finished released it
            if not ok and running:
                log.warning("lease_lost", job_id=job_id, session_id=session_id)

    @staticmethod
    def _safely(chore: Callable[[], object]) -> None:
        try:
            chore()
        except Exception as exc:  # a chore's failure must not kill the renewals
            log.exception(
                "chore_failed", chore=getattr(chore, "__name__", repr(chore)), error=str(exc)
            )

"""The process's scheduler: one background thread that renews the gate leases of in-flight jobs
and runs the periodic chores (sweep, heartbeat, redelivery) on the same clock.

It starts with the first lease or chore registered; ``worker.broker.signals`` registers every
chore of a worker process, in one place. A chore that keeps failing (Redis down) is logged when
its failure starts or changes kind and when it recovers, not at every run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
import structlog

from tersify.errors import RedisUnavailableError, TersifyError
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
        self._renew_failing = False  # the last renewal failed (logged once, until one succeeds)
        self._chores: list[Chore] = []
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

    def every(self, interval: float, chore: Callable[[], object], name: str = "") -> None:
        """Run ``chore`` about every ``interval`` seconds on the scheduler's thread (``name``:
        what its log lines call it)."""
        with self._lock:
            self._chores.append(Chore(interval, chore, name or getattr(chore, "__name__", "")))
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
            return min([self._every, *(chore.interval for chore in self._chores)])

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
            for index, chore in chores:
                if now - last_run.get(index, 0.0) >= chore.interval:
                    last_run[index] = now
                    chore.run()

    def _renew_all(self) -> None:
        # one gate call renews every hold of this process, however many jobs it runs
        with self._lock:
            holds = [(sid, job_id, token) for job_id, (sid, token) in self._holds.items()]
        try:
            renewed = self._gate.renew_all(holds)
        except TersifyError as exc:
            if not self._renew_failing:  # once until a renewal goes through again
                log.warning("lease_renew_failed", jobs=len(holds), error=str(exc))
            self._renew_failing = True
            return
        if self._renew_failing:
            log.info("lease_renew_recovered", jobs=len(holds))
            self._renew_failing = False
        for (session_id, job_id, _), ok in zip(holds, renewed, strict=True):
            with self._lock:
                running = job_id in self._holds  # a job that just finished released it
            if not ok and running:
                log.warning("lease_lost", job_id=job_id, session_id=session_id)


# Failures that say a service is out of reach: their traceback tells nothing more.
_UNREACHABLE = (RedisUnavailableError, redis.ConnectionError, redis.TimeoutError)


class Chore:
    """A periodic chore and its failure state: logged when it starts failing, when the kind of
    failure changes and when it recovers, never at every run."""

    def __init__(self, interval: float, work: Callable[[], object], name: str) -> None:
        self.interval = interval
        self.work = work
        self.name = name
        self.failing: str | None = None  # the exception type of the current run of failures
        self.failures = 0

    def run(self) -> None:
        """Run once; a failure must not kill the scheduler's thread (nor the lease renewals)."""
        try:
            self.work()
        except Exception as exc:
            self.failures += 1
            kind = type(exc).__name__
            if kind != self.failing:
                self.failing = kind
                log.error(
                    "chore_failed",
                    chore=self.name,
                    error=f"{kind}: {exc}",
                    logged="once, until it recovers or fails otherwise",
                    exc_info=not _unreachable(exc),
                )
            return
        if self.failing is not None:
            log.info("chore_recovered", chore=self.name, failed_runs=self.failures)
            self.failing, self.failures = None, 0


def _unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error that caused it (kombu wraps redis-py's), is Redis out of
    reach."""
    for _ in range(10):  # a bounded walk down the chain
        if exc is None:
            return False
        if isinstance(exc, _UNREACHABLE):
            return True
        exc = exc.__cause__ or exc.__context__
    return False

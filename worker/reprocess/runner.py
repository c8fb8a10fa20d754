"""Running a plan: submit on the batch queue with a bounded number in flight, record results."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from tersify.client import Producer, SummaryHandle
from tersify.contract import JobOptions, Queue, SummaryResult
from tersify.errors import ResultTimeoutError, TersifyError
from tersify.worker.reprocess.checkpoint import Checkpoint
from tersify.worker.reprocess.estimate import cost, estimate_job
from tersify.worker.reprocess.reader import ArchivedJob

log = structlog.get_logger(__name__)
# A reprocessed output is summarized on its own: told as what changed since the output before it,
# it would measure the change summary, not the model or prompt the run is meant to compare.
_ON_ITS_OWN = JobOptions(rerun=False)

_WAIT_SLICE_SECONDS = 0.1  # how long to block on the oldest job before polling the others


@dataclass
class RunStats:
    """What a run did: outcomes by new method (plus ``timeout``, ``error``) and money spent."""

    outcomes: Counter[str] = field(default_factory=Counter)
    spent_usd: float = 0.0
    stopped_on_budget: bool = False
    not_submitted: int = 0


@dataclass
class _InFlight:
    item: ArchivedJob
    handle: SummaryHandle
    estimate_usd: float
    submitted: float


class Runner:
    """Re-summarizes archived jobs through the batch queue, never the session gate."""

    def __init__(
        self,
        producer: Producer,
        checkpoint: Checkpoint,
        *,
        parallel: int,
        timeout: float,
        max_cost: float | None,
        on_done: Callable[[RunStats], None] = lambda stats: None,
    ) -> None:
        self._producer = producer
        self._settings = producer.settings
        self._checkpoint = checkpoint
        self._parallel = max(1, parallel)
        self._timeout = timeout
        self._max_cost = max_cost
        self._on_done = on_done
        self.stats = RunStats()

    def run(self, items: list[ArchivedJob]) -> RunStats:
        """Redo ``items`` in order; returns when all are done, timed out or over budget."""
        pending = list(reversed(items))
        inflight: dict[str, _InFlight] = {}
        while pending or inflight:
            while pending and len(inflight) < self._parallel and not self.stats.stopped_on_budget:
                if not self._submit(pending[-1], inflight):
                    break
                pending.pop()
            if not inflight:
                break
            self._collect(inflight)
        self.stats.not_submitted = len(pending)
        return self.stats

    def _submit(self, item: ArchivedJob, inflight: dict[str, _InFlight]) -> bool:
        estimate = estimate_job(self._settings, item).usd
        if self._max_cost is not None:
            committed = self.stats.spent_usd + sum(f.estimate_usd for f in inflight.values())
            if committed + estimate > self._max_cost:
                self.stats.stopped_on_budget = True
                log.info("reprocess_budget_reached", spent_usd=self.stats.spent_usd)
                return False
        job = item.job
        try:
            handle = self._producer.submit(
                session_id=job.session_id,
                tool_name=job.tool_name,
                output=job.output,
                command=job.command,
                query=job.query,
                tool_call_id=job.tool_call_id,
                relevant_lines=job.relevant_lines,
                queue=Queue.BATCH,
                options=_ON_ITS_OWN,
            )
        except TersifyError as exc:
            log.warning("reprocess_submit_failed", old_job_id=job.job_id, error=str(exc))
            self._count("error")
            return True
        inflight[handle.job_id] = _InFlight(item, handle, estimate, time.monotonic())
        return True

    def _collect(self, inflight: dict[str, _InFlight]) -> None:
        finished = [(k, f, r) for k, f in inflight.items() if (r := f.handle.result()) is not None]
        if not finished:
            oldest_key, oldest = next(iter(inflight.items()))
            with contextlib.suppress(ResultTimeoutError):
                finished = [(oldest_key, oldest, oldest.handle.wait(_WAIT_SLICE_SECONDS))]
        for key, flight, result in finished:
            del inflight[key]
            self._finish(flight, result)
        now = time.monotonic()
        for key, flight in list(inflight.items()):
            if now - flight.submitted > self._timeout:
                del inflight[key]  # not checkpointed: the next run redoes it
                log.warning("reprocess_job_timed_out", old_job_id=flight.item.job.job_id)
                self._count("timeout")

    def _finish(self, flight: _InFlight, result: SummaryResult) -> None:
        self._checkpoint.record(flight.item, result)
        self.stats.spent_usd += cost(
            self._settings, result.input_tokens or 0, result.output_tokens or 0
        )
        self._count(result.method.value)

    def _count(self, outcome: str) -> None:
        self.stats.outcomes[outcome] += 1
        self._on_done(self.stats)

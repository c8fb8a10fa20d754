"""``tersify savings --model``: the outputs over the threshold through the batch queue.

Each is submitted with ``Producer.submit(..., queue=Queue.BATCH)`` (batch jobs never gate a
session) under one session per run and session read, ``savings-…-N`` (so a command run again is
told as what changed only within its own session), at most ``parallel`` in flight. Before each
submit its cost is estimated at the summary model's price (every request it sends in, each
window's and the merge's for an output read in windows; the longest summary out for each);
once what was spent plus what is in flight plus the next estimate would pass ``max_cost``,
nothing more is sent and the rest count as unchanged. Money spent is counted from
the tokens the results report.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog

from tersify.client import Producer, SummaryHandle
from tersify.contract import Method, Queue, SummaryResult
from tersify.errors import ResultTimeoutError, TersifyError
from tersify.settings import Settings
from tersify.worker.model import pricing
from tersify.worker.savings.shrink import Shrunk, job_of, tool_type_of
from tersify.worker.savings.transcript import ToolOutput
from tersify.worker.summarize.sending import estimate

log = structlog.get_logger(__name__)

_WAIT_SLICE_SECONDS = 0.1  # how long to block on the oldest job before looking at the others


def estimate_usd(settings: Settings, output: ToolOutput, model: str | None) -> float:
    """An upper bound on what summarizing ``output`` costs: every request it sends (each
    window's and the merge's for an output read in windows), each answer at the longest
    summary."""
    job = job_of(output, settings.batch_deadline_seconds)
    sent = estimate(job, tool_type_of(output), settings)
    chosen = model or pricing.summary_model(settings)
    return pricing.cost(settings, chosen, sent.input_tokens, sent.output_tokens)


def model_requests(settings: Settings, output: ToolOutput) -> int:
    """How many model requests summarizing ``output`` takes (its windows and their merge)."""
    job = job_of(output, settings.batch_deadline_seconds)
    return estimate(job, tool_type_of(output), settings).requests


def summary_usd(settings: Settings, result: SummaryResult) -> float:
    """What a result's model call cost (0 for anything but a model answer)."""
    if result.method is not Method.LLM or not result.model:
        return 0.0
    return pricing.cost(settings, result.model, result.input_tokens or 0, result.output_tokens or 0)


@dataclass
class RemoteRun:
    """What came back, by the output's position, and what the run did."""

    shrunk: dict[int, tuple[Shrunk, float]] = field(default_factory=dict)
    spent_usd: float = 0.0
    stopped_on_budget: bool = False
    not_sent: int = 0
    failed: int = 0


@dataclass
class _InFlight:
    index: int
    handle: SummaryHandle
    estimate: float
    submitted: float


class Remote:
    """Sends outputs through the batch queue and collects their summaries."""

    def __init__(
        self,
        producer: Producer,
        *,
        parallel: int,
        timeout: float,
        max_cost: float | None,
        model: str | None,
        on_done: Callable[[RemoteRun], None] = lambda run: None,
    ) -> None:
        self._producer = producer
        self._settings = producer.settings
        self._parallel = max(1, parallel)
        self._timeout = timeout
        self._max_cost = max_cost
        self._model = model
        self._on_done = on_done
        self._session = f"savings-{secrets.token_hex(6)}"
        self._sessions: dict[str, str] = {}  # each read session's own, so re-runs stay in it
        self.run = RemoteRun()

    def _session_of(self, output: ToolOutput) -> str:
        """The session this run submits ``output`` under: one per session it was read from."""
        return self._sessions.setdefault(
            output.session, f"{self._session}-{len(self._sessions) + 1}"
        )

    def send(self, outputs: list[tuple[int, ToolOutput]]) -> RemoteRun:
        """Summarize ``outputs`` (position, output) in order, within the budget."""
        pending = deque(outputs)
        inflight: dict[str, _InFlight] = {}
        while pending or inflight:
            while (
                pending and len(inflight) < self._parallel and self._affords(pending[0], inflight)
            ):
                self._submit(*pending.popleft(), inflight)
            if not inflight:
                break
            self._collect(inflight)
        self.run.not_sent = len(pending)
        return self.run

    def _affords(self, item: tuple[int, ToolOutput], inflight: dict[str, _InFlight]) -> bool:
        if self._max_cost is None:
            return True
        committed = self.run.spent_usd + sum(f.estimate for f in inflight.values())
        if committed + estimate_usd(self._settings, item[1], self._model) > self._max_cost:
            self.run.stopped_on_budget = True
            log.info("savings_budget_reached", spent_usd=self.run.spent_usd)
            return False
        return True

    def _submit(self, index: int, output: ToolOutput, inflight: dict[str, _InFlight]) -> None:
        job = job_of(output, self._settings.batch_deadline_seconds)
        try:
            handle = self._producer.submit(
                session_id=self._session_of(output),
                tool_name=job.tool_name,
                command=job.command,
                output=job.output,
                queue=Queue.BATCH,
                options={"model": self._model} if self._model else None,
            )
        except TersifyError as exc:
            log.warning("savings_submit_failed", error=str(exc))
            self.run.failed += 1
            self._on_done(self.run)
            return
        estimate = estimate_usd(self._settings, output, self._model)
        inflight[handle.job_id] = _InFlight(index, handle, estimate, time.monotonic())

    def _collect(self, inflight: dict[str, _InFlight]) -> None:
        done = [(k, f, r) for k, f in inflight.items() if (r := f.handle.result()) is not None]
        if not done:
            key, oldest = next(iter(inflight.items()))
            with contextlib.suppress(ResultTimeoutError):
                done = [(key, oldest, oldest.handle.wait(_WAIT_SLICE_SECONDS))]
        for key, flight, result in done:
            del inflight[key]
            cost = summary_usd(self._settings, result)
            self.run.spent_usd += cost
            rerun = result.rerun_of is not None
            shrunk = Shrunk(result.text, result.method, result.tool_type, result.model, rerun)
            self.run.shrunk[flight.index] = (shrunk, cost)
            self._on_done(self.run)
        now = time.monotonic()
        for key, flight in list(inflight.items()):
            if now - flight.submitted > self._timeout:
                del inflight[key]
                log.warning("savings_job_timed_out", job_id=key)
                self.run.failed += 1
                self._on_done(self.run)

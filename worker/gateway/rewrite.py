"""A request's large tool results replaced by their summaries: stored, new, or fallen back.

For each text-only tool result over ``TERSIFY_GATEWAY_THRESHOLD_CHARS`` — not an error, not a
skipped tool, not the output of ``tersify output`` — a replacement kept from an earlier turn is
used as it is. Each new one is a job submitted through ``AsyncProducer`` (classified by the
call's tool name and command, the query taken from the latest user turn) and waited for up to
``TERSIFY_GATEWAY_WAIT_SECONDS``; a job not done by then is cancelled, which ends it with its
fallback and opens the session's gate at once. The wait runs in a task of its own, so a client
that goes away does not stop it: the replacement is stored for the client's retry.

Nothing here can stall or lose a request: Redis down, no live worker, a refused job — the
results concerned go upstream whole, and the request carries a warning saying why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import structlog

from tersify.client import AsyncProducer
from tersify.contract import Method, Queue, SummaryResult, new_job_id
from tersify.errors import RedisUnavailableError, ResultTimeoutError, TersifyError
from tersify.settings import Settings
from tersify.worker.gateway.formats import RequestView, ResultSpan
from tersify.worker.gateway.replacement import reads_output, text_for
from tersify.worker.gateway.store import Counts, Rewrite, RewriteStore, content_key, digest_of
from tersify.worker.redact import leaving_with

log = structlog.get_logger("tersify.gateway")

# A used replacement, its link and its output are renewed at most this often by one process.
_RENEW_EVERY: Final = 60.0
_RENEWED_KEPT: Final = 100_000
# Time a cancel, a claim and the stores after the wait may take on top of it.
_MARGIN_SECONDS: Final = 5.0
NO_REDIS: Final = "Redis unavailable: tool results passed whole"
NO_WORKER: Final = "no live worker serves the interactive queue: new tool results passed whole"


@dataclass(slots=True)
class RequestEdits:
    """A request's edits (span and new JSON text) and what was done, for headers and counts."""

    edits: list[tuple[int, int, str]] = field(default_factory=list)
    rewritten: int = 0
    reused: int = 0
    fallbacks: int = 0
    reruns: int = 0  # new replacements that say what changed since an earlier run
    warning: str | None = None


@dataclass(frozen=True, slots=True)
class Made:
    """A replacement made for this request, whether it is a fallback, and whether it says what
    changed since an earlier run of the same command."""

    rewrite: Rewrite
    fallback: bool
    rerun: bool = False


class Rewriter:
    """Rewrites requests for one gateway process (see the module)."""

    def __init__(self, producer: AsyncProducer, store: RewriteStore, settings: Settings) -> None:
        self._producer = producer
        self._store = store
        self._settings = settings
        self._skip = frozenset(settings.gateway_skip_tools)
        self._making: dict[str, asyncio.Task[Made | None]] = {}
        self._chores: set[asyncio.Task[None]] = set()
        self._renewed: dict[str, float] = {}

    def _due(self, stored: dict[str, Rewrite]) -> list[str]:
        """The stored replacements not renewed by this process in the last minute.

        Renewing on every turn would send a few Redis commands per result per request for
        nothing: TTLs are hours and days long.
        """
        now = time.monotonic()
        if len(self._renewed) > _RENEWED_KEPT:
            self._renewed.clear()
        due = [key for key in stored if now - self._renewed.get(key, -_RENEW_EVERY) >= _RENEW_EVERY]
        self._renewed.update(dict.fromkeys(due, now))
        return due

    def eligible(self, result: ResultSpan) -> bool:
        """Whether a tool result is one to replace."""
        if len(result.text) <= self._settings.gateway_threshold_chars:
            return False
        if result.call is None:
            return True
        if result.call.name.lower() in self._skip:
            return False
        return not reads_output(result.call.command)

    def _chosen(self, session_id: str, conversation: RequestView) -> list[tuple[str, ResultSpan]]:
        """The results to replace, by content key (hashing them: CPU work on large texts)."""
        return [
            (content_key(session_id, r.text), r) for r in conversation.results if self.eligible(r)
        ]

    async def rewrite(self, session_id: str, conversation: RequestView) -> RequestEdits:
        """The edits that replace the conversation's large tool results (see the module)."""
        outcome = RequestEdits()
        size = sum(len(r.text) for r in conversation.results)
        chosen = await self._producer.compute(self._chosen, session_id, conversation, size=size)
        wanted = dict(chosen)
        if not wanted:
            return outcome
        try:
            stored = await self._store.lookup(list(wanted))
            missing = [key for key in wanted if key not in stored]
            made = await self._make(session_id, conversation, missing, wanted, outcome)
        except RedisUnavailableError as exc:
            log.warning("gateway_passed_whole", session_id=session_id, why=str(exc))
            outcome.warning = NO_REDIS
            return outcome
        if due := self._due(stored):
            used = {key: (stored[key], wanted[key].text) for key in due}
            self._later(self._store.renew(session_id, used), "renew")
        for key, result in chosen:
            rewrite = stored[key] if key in stored else made[key].rewrite if key in made else None
            if rewrite is not None:
                outcome.edits.append((result.start, result.end, result.render(rewrite.text)))
        outcome.reused = len(stored)
        outcome.rewritten = len(made)
        outcome.fallbacks = sum(1 for m in made.values() if m.fallback)
        outcome.reruns = sum(1 for m in made.values() if m.rerun)
        return outcome

    async def _make(
        self,
        session_id: str,
        conversation: RequestView,
        missing: list[str],
        wanted: dict[str, ResultSpan],
        outcome: RequestEdits,
    ) -> dict[str, Made]:
        """New replacements for the ``missing`` keys, each made once per content key."""
        if not missing:
            return {}
        if await self._producer.live_workers(Queue.INTERACTIVE) == 0:
            log.warning("gateway_passed_whole", session_id=session_id, why="no_worker")
            outcome.warning = NO_WORKER
            return {}
        tasks = []
        for key in missing:
            task = self._making.get(key)
            if task is None:
                job = self._one(session_id, key, wanted[key], conversation.query)
                task = self._making[key] = asyncio.create_task(job)
                task.add_done_callback(self._forget_making(key))
            tasks.append(asyncio.shield(task))
        made = await asyncio.gather(*tasks)
        return {key: m for key, m in zip(missing, made, strict=True) if m is not None}

    def _forget_making(self, key: str) -> Callable[[asyncio.Task[Made | None]], None]:
        def done(_: asyncio.Task[Made | None]) -> None:
            self._making.pop(key, None)

        return done

    async def _one(
        self, session_id: str, key: str, result: ResultSpan, query: str | None
    ) -> Made | None:
        """One replacement: the claimed job's result (or its fallback), stored; None to pass."""
        settings = self._settings
        wait = settings.gateway_wait_seconds
        try:
            job_id = new_job_id()
            owner = await self._store.claim(key, job_id, wait + settings.job_deadline_seconds)
            if owner == job_id:
                handle = await self._producer.submit(
                    session_id=session_id,
                    tool_name=(result.call.name if result.call else "tool")[:200],
                    output=result.text,
                    command=result.call.command if result.call else None,
                    query=query,
                    tool_call_id=(result.call_id or "")[:200] or None,
                    job_id=job_id,
                )
                ready = await handle.result()  # a job that already finished is a summary too
                if ready is not None and ready.method is Method.PASSTHROUGH:  # short: no job
                    return None
            summary = leaving_with(await self._wait(owner, wait), settings.redact)
            digest = await self._producer.compute(digest_of, result.text, size=len(result.text))
            rewrite = Rewrite(
                text_for(summary),
                summary.output_ref,
                digest,
                summary.job_id,
                summary.tool_type.value,
            )
            await self._store.put(key, session_id, rewrite)
        except TersifyError as exc:
            log.warning("gateway_result_passed_whole", session_id=session_id, why=str(exc))
            return None
        log.info(
            "gateway_result_summarized",
            session_id=session_id,
            job_id=summary.job_id,
            method=summary.method.value,
            chars_in=summary.chars_in,
            chars_out=len(rewrite.text),
        )
        return Made(rewrite, summary.method is Method.FALLBACK, summary.rerun_of is not None)

    async def _wait(self, job_id: str, seconds: float) -> SummaryResult:
        """The job's result within ``seconds``; past them the job is cancelled: its fallback."""
        try:
            return await self._producer.wait(job_id, seconds)
        except ResultTimeoutError:
            cancelled = await self._producer.cancel(job_id)
            log.info("gateway_summary_late", job_id=job_id, state=cancelled.state.value)
            return cancelled.result

    def _later(self, chore: Awaitable[None], name: str) -> None:
        """Run a Redis chore behind the request; its failure is logged, never raised."""

        async def run() -> None:
            try:
                await chore
            except TersifyError as exc:
                log.warning("gateway_chore_failed", chore=name, why=str(exc))

        task = asyncio.create_task(run())
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    def count_later(self, session_id: str, counts: Counts) -> None:
        """Add a request's counts behind it (see ``RewriteStore.count``)."""
        self._later(self._store.count(session_id, counts), "count")

    async def drain(self) -> None:
        """Let the chores and the replacements being made finish (at shutdown)."""
        pending = [*self._chores, *self._making.values()]
        if pending:
            await asyncio.wait(
                pending, timeout=self._settings.gateway_wait_seconds + _MARGIN_SECONDS
            )

"""A summary job's life inside a worker, free of Celery: validate, log, summarize, store.

The message carries the job typed and, from version 2 on, the producer's classification of its
output, which the worker trusts; a version 1 message's output is classified here.

Every path ends in a stored result or a dead-letter record; nothing half-done stays behind.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache

import structlog
from opentelemetry import trace
from opentelemetry.trace import SpanKind
from redis import Redis
from redis.commands.core import Script

from tersify.classify import classify
from tersify.client.tracing import job_attributes, recording, span, tracer
from tersify.contract import (
    DeadLetterReason,
    FallbackReason,
    PendingSummary,
    SummaryResult,
    ToolType,
    utcnow,
)
from tersify.errors import InvalidJobError, ProviderError
from tersify.store import keys, payloads
from tersify.store.commands import Command
from tersify.store.wire import MESSAGE_VERSION, parse_message
from tersify.worker.jobs.deadletter import dead_letter
from tersify.worker.jobs.results import callback_url, log_output, make_result, store
from tersify.worker.redact import Redactor
from tersify.worker.rerun import history
from tersify.worker.rerun.commands import run_key
from tersify.worker.rerun.summary import summarize_rerun
from tersify.worker.runtime.runtime import Runtime
from tersify.worker.summarize.cache import KEY_FIELDS, cache_key
from tersify.worker.summarize.summarizer import Outcome, fallback_outcome, summarize

log = structlog.get_logger("tersify.worker")


def process(raw: object, rt: Runtime) -> SummaryResult | None:
    """Run one broker message to its end; None when it was refused or already done."""
    try:
        message = parse_message(raw)
    except InvalidJobError as exc:
        dead_letter(rt.redis, DeadLetterReason.INVALID_JOB, str(exc), raw)
        return None
    header = message.job
    key = None
    if rt.routes and rt.cache.enabled:
        model = (header.options and header.options.model) or rt.routes[0].provider.model
        described = header.model_dump(mode="json", include=set(KEY_FIELDS))
        key = cache_key(message.payload, described, model)
    job_id = header.job_id
    take: tuple[str, ...] = (keys.job_state(job_id), keys.result(job_id))
    take += (keys.payload(message.payload), *((key,) if key is not None else ()))
    # a message from a producer before the job's progress mark: its result may exist without one
    older = message.schema_version < MESSAGE_VERSION
    flags = ("c" if key is not None else "") + ("o" if older else "")
    args: list[str | int] = [rt.settings.result_ttl_seconds, flags]
    runs = run_key(header.tool_name, header.command) if rt.settings.rerun_window else None
    if runs is not None:
        take += (keys.session_runs(header.session_id),)
        args += [runs, rt.settings.rerun_window, keys.payload("")]
    before, blob, cached, entry, earlier_blob = _take(rt.redis)(keys=take, args=args)
    if before == b"D":
        log.info("job_skipped_duplicate", job_id=header.job_id)
        return None
    if blob is None:
        detail = "the job's output expired before a worker took it"
        dead_letter(rt.redis, DeadLetterReason.PAYLOAD_MISSING, detail, raw)
        return None
    job = header.with_output(payloads.decode(blob))
    del blob  # the job holds its output once: the stored bytes go now
    with (
        structlog.contextvars.bound_contextvars(job_id=job.job_id, session_id=job.session_id),
        rt.scheduler.holding(job.session_id, job.job_id, message.gate_token),
    ):
        started = utcnow()
        tool_type = message.tool_type or classified(job)
        trace_queue_wait(job, tool_type, started)
        redactor = Redactor(rt.redaction)  # one job, one set of placeholders
        log_output(rt, job, redactor=redactor)
        hit = rt.cache.parse(cached)
        earlier = history.earlier(entry, earlier_blob)
        outcome = (
            rerun_traced(rt, job, tool_type, earlier, redactor)
            or hit
            or summarize_traced(rt, job, tool_type, key, redactor)
        )
        result = make_result(job, tool_type, outcome, started)
        ran = () if runs is None else _ran(rt, job, runs, message.payload, result, entry, earlier)
        with span("tersify.store"):
            store(rt, result, message.gate_token, redactor, callback_url(job), ran, taken=True)
        return result


# KEYS progress, result, payload[, cached answer][, the session's runs] · ARGV progress TTL,
# flags (c: KEYS[4] is the cached answer; o: an older producer's message, whose result may
# exist with no progress mark)[, the run look-up's: history.LOOKUP] → the job's progress before
# (false: no worker took it; T: one did; D: it has a result), the payload, the cached answer,
# the earlier run and its payload (false when not asked or not there); marks the job taken. A
# worker storing its own result leaves its mark T (``gate.scripts``, ``_COMPLETE``): a message
# taken before, redelivered, looks for the result, and marks the job D once it finds one.
_TAKE = (
    """
local before = redis.call('SET', KEYS[1], 'T', 'NX', 'EX', ARGV[1], 'GET')
local again = before == 'T' or (not before and string.find(ARGV[2], 'o', 1, true))
if again and redis.call('EXISTS', KEYS[2]) == 1 then
  before = 'D'
  redis.call('SET', KEYS[1], before, 'EX', ARGV[1])
end
local found = {before or false, redis.call('GET', KEYS[3]) or false, false, false, false}
local runs = 4
if string.find(ARGV[2], 'c', 1, true) then
  found[3] = redis.call('GET', KEYS[4]) or false
  runs = 5
end
if KEYS[runs] then"""
    + history.LOOKUP
    + """end
return found
"""
)


def _ran(
    rt: Runtime,
    job: PendingSummary,
    run: str,
    digest: str,
    result: SummaryResult,
    entry: object,
    earlier: history.Earlier | None,
) -> tuple[Command, ...]:
    """The commands that name this run the session's latest of its command (``history``)."""
    last = history.Run.parse(entry)
    record = history.Run.after(last, earlier, key=run, digest=digest, done=result)
    ttl = rt.settings.result_ttl_seconds
    return history.writes(job.session_id, record, rt.settings.rerun_window, ttl)


def rerun_traced(
    rt: Runtime,
    job: PendingSummary,
    tool_type: ToolType,
    earlier: history.Earlier | None,
    redactor: Redactor,
) -> Outcome | None:
    """The job as a re-run of ``earlier`` (``summarize_rerun``), in a span; None when it is to
    be summarized on its own. A bug here costs the change summary, never the job."""
    if earlier is None:
        return None
    with span("tersify.rerun") as current:
        try:
            outcome = summarize_rerun(job, tool_type, earlier, rt.routes, rt.settings, redactor)
        except Exception as exc:  # the ordinary summary still follows
            log.exception("rerun_crashed", error=str(exc))
            return None
        current.set_attribute("tersify.rerun_of", earlier.run.ref or "")
        return outcome


@cache
def _take(client: Redis) -> Script:
    """The job's first step, one script: every read it needs, and the mark that it started."""
    return client.register_script(_TAKE)


def classified(job: PendingSummary) -> ToolType:
    """The job's tool type, for a message that does not carry the producer's (version 1)."""
    with span("tersify.classify") as current:
        tool_type = classify(job.tool_name, job.command, job.output)
        current.set_attribute("tersify.tool_type", tool_type.value)
    return tool_type


def trace_queue_wait(job: PendingSummary, tool_type: ToolType, started: datetime) -> None:
    """A span from the job's submission to a worker starting it; the job's attributes."""
    if not recording():
        return
    described = {**job_attributes(job), "tersify.tool_type": tool_type.value}
    trace.get_current_span().set_attributes(described)  # the whole job's span
    wait = tracer.start_span("tersify.queue_wait", start_time=_ns(job.created_at))
    wait.end(end_time=_ns(started))


def _ns(when: datetime) -> int:
    return int(when.timestamp() * 1_000_000_000)


def summarize_traced(
    rt: Runtime,
    job: PendingSummary,
    tool_type: ToolType,
    key: str | None,
    redactor: Redactor | None = None,
) -> Outcome:
    """``summarize_cached`` in a GenAI span: provider, model, tokens, fallback reason."""
    route = rt.routes[0].provider if rt.routes else None
    model = route.model if route is not None else "extractive"
    with span(f"chat {model}", kind=SpanKind.CLIENT) as current:
        outcome = summarize_cached(rt, job, tool_type, key, redactor)
        if not current.is_recording():
            return outcome
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": outcome.provider,
            "gen_ai.request.model": model,
            "gen_ai.response.model": outcome.model,
            "gen_ai.usage.input_tokens": outcome.input_tokens,
            "gen_ai.usage.output_tokens": outcome.output_tokens,
            "tersify.method": outcome.method.value,
            "tersify.fallback_reason": outcome.fallback_reason and outcome.fallback_reason.value,
        }
        current.set_attributes({k: v for k, v in attributes.items() if v is not None})
        return outcome


def summarize_cached(
    rt: Runtime,
    job: PendingSummary,
    tool_type: ToolType,
    key: str | None,
    redactor: Redactor | None = None,
) -> Outcome:
    """A fresh summary, remembered under ``key`` (when caching) if the model wrote it."""
    try:
        outcome = summarize(job, tool_type, rt.routes, rt.settings, redactor)
    except Exception as exc:  # a bug must still end in a result, never a stuck session
        log.exception("summarize_crashed", error=str(exc))
        error = ProviderError(FallbackReason.INTERNAL_ERROR, type(exc).__name__)
        return fallback_outcome(job, tool_type, rt.settings, error)
    if key is not None:
        rt.cache.put(key, outcome)
    return outcome

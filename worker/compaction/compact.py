"""Compaction: a conversation's middle replaced by one summary message, tool pairs kept whole.

The list is cut into a protected head (the first ``protect_first`` messages), a middle, and a
protected tail (the last ``protect_last``). Protected messages are never summarized, so the cuts
only ever grow the protected parts: a head whose last call is answered in the middle takes those
results along, and a tail that starts with tool results pulls their call (and anything between)
into the tail. The middle becomes one summary message with role ``user``: it is information
handed to the model, not something the model said (an assistant-role summary reads as the
model's own words and, placed last, as a prefill to continue), and a user message is valid
anywhere in both APIs, first place included. When there is no middle, nothing is summarized: the
result is the input (pairs repaired) with method ``passthrough``; that is not an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from producer.compaction import CompactionJob, CompactionMethod, CompactionResult
from producer.contract import FallbackReason, utcnow
from producer.errors import ProviderError
from worker.compaction.messages import Role, Turn, parse, text_turn
from worker.compaction.pairs import repair, sanitize_slice
from worker.compaction.prompt import DEFAULT_MAX_INPUT_CHARS, DEFAULT_MAX_TOKENS, build_request
from worker.compaction.redaction import for_model
from worker.compaction.summary import (
    fallback_summary,
    finish,
    is_summary,
    latest_user_request,
    unwrap,
)
from worker.model.providers.base import Completion, ModelRequest, Provider
from worker.model.tokens import estimate_tokens
from worker.redact import Redactor, Scope

DEFAULT_MAX_SUMMARY_CHARS = 16_000

_log = structlog.get_logger(__name__)


def split(turns: Sequence[Turn], protect_first: int, protect_last: int) -> tuple[int, int]:
    """``(head_end, tail_start)``: protected head and tail, grown so no tool pair is cut."""
    count = len(turns)
    head_end = min(protect_first, count)
    tail_start = max(head_end, count - protect_last)
    call_at = {c.id: i for i, t in enumerate(turns) for c in t.calls}
    last_result_at = {r.call_id: i for i, t in enumerate(turns) for r in t.results}
    while head_end < tail_start:
        reach = max(
            (last_result_at.get(c.id, -1) for t in turns[:head_end] for c in t.calls), default=-1
        )
        start = min(
            (call_at.get(r.call_id, count) for t in turns[tail_start:] for r in t.results),
            default=count,
        )
        if reach < head_end and start >= tail_start:
            break
        head_end = max(head_end, reach + 1)
        tail_start = max(min(tail_start, start), head_end)
    return head_end, tail_start


def messages_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A message list's tokens, estimated over its compact JSON."""
    text = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"), default=str)
    return estimate_tokens(text)


def _fold(previous_summary: str | None, earlier: Sequence[Turn]) -> str | None:
    """The job's previous summary plus any summary messages found in the list, deduplicated."""
    bodies = [unwrap(previous_summary), *(unwrap(t.text) for t in earlier)]
    unique = list(dict.fromkeys(b for b in bodies if b))
    return "\n\n".join(unique) or None


def _ask(
    provider: Provider | None, request: ModelRequest, budget: float, max_chars: int
) -> tuple[Completion | None, FallbackReason | None, str | None]:
    """The model's answer, or why there is none (reason, detail)."""
    if provider is None:
        return None, None, "no model provider configured"
    if budget <= 0:
        return None, FallbackReason.DEADLINE, "the job's deadline had passed"
    try:
        completion = provider.complete(request, budget)
    except ProviderError as exc:
        _log.warning("compaction_model_failed", provider=provider.name, reason=exc.reason.value)
        return None, exc.reason, exc.detail or exc.reason.value
    if not unwrap(completion.text).strip():
        return None, FallbackReason.EMPTY, "the model returned no summary text"
    if len(completion.text) > max_chars:
        detail = f"the model returned {len(completion.text)} chars, more than {max_chars}"
        return None, FallbackReason.OVERSIZED, detail
    return completion, None, None


@dataclass(frozen=True, slots=True)
class _Summary:
    """The middle's replacement and how it was made."""

    text: str
    method: CompactionMethod
    completion: Completion | None = None
    reason: FallbackReason | None = None
    detail: str | None = None


def compact(
    job: CompactionJob,
    provider: Provider | None,
    *,
    timeout: float,
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    max_summary_chars: int = DEFAULT_MAX_SUMMARY_CHARS,
    redactor: Redactor | None = None,
) -> CompactionResult:
    """Replace the unprotected middle of ``job.messages`` by one summary message.

    Uses ``provider`` when there is one and it answers in time; otherwise (no provider, a
    ``ProviderError``, an empty or oversized answer, a passed deadline) an extractive fallback.
    Earlier summary messages in the list are folded into the new one, so banners never stack.
    The model sees the middle with its secrets as placeholders (``redactor``, else model-only).
    """
    started = utcnow()
    conversation = parse(job.messages, job.shape)
    earlier = [t for t in conversation.turns if is_summary(t)]
    live = [t for t in conversation.turns if not is_summary(t)]
    head_end, tail_start = split(live, job.protect_first, job.protect_last)
    middle = sanitize_slice(live[head_end:tail_start])
    if not middle:
        final = repair(conversation.turns)
        summary = _Summary("", CompactionMethod.PASSTHROUGH)
    else:
        previous = _fold(job.previous_summary, earlier)
        sent = for_model(middle, previous, redactor or Redactor(frozenset({Scope.MODEL})))
        request = build_request(*sent, max_input_chars=max_input_chars, max_tokens=max_tokens)
        budget = min(timeout, (job.deadline - utcnow()).total_seconds())
        summary = _summarize(provider, request, budget, max_summary_chars, middle, previous, live)
        note = text_turn(Role.USER, summary.text, conversation)
        final = repair([*live[:head_end], note, *live[tail_start:]])
    messages = [dict(t.raw) for t in final]
    completion = summary.completion
    return CompactionResult(
        job_id=job.job_id,
        session_id=job.session_id,
        shape=conversation.shape,
        messages_before=len(job.messages),
        tokens_before=messages_tokens(job.messages),
        messages=messages,
        summary=summary.text,
        method=summary.method,
        provider=provider.name if provider is not None and middle else None,
        model=completion.model if completion is not None else None,
        fallback_reason=summary.reason,
        fallback_detail=summary.detail,
        messages_after=len(messages),
        tokens_after=messages_tokens(messages),
        input_tokens=completion.input_tokens if completion is not None else None,
        output_tokens=completion.output_tokens if completion is not None else None,
        started_at=started,
        finished_at=utcnow(),
    )


def _summarize(
    provider: Provider | None,
    request: ModelRequest,
    budget: float,
    max_chars: int,
    middle: Sequence[Turn],
    previous: str | None,
    live: Sequence[Turn],
) -> _Summary:
    """The model's summary of the middle, else the extractive fallback's, with the reason."""
    completion, reason, detail = _ask(provider, request, budget, max_chars)
    task = latest_user_request(live)
    if completion is not None:
        return _Summary(finish(completion.text, task), CompactionMethod.LLM, completion)
    text = fallback_summary(middle, previous, request=task)
    return _Summary(text, CompactionMethod.FALLBACK, None, reason, detail)

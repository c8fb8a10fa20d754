"""Compaction: a conversation's middle replaced by one summary message, tool pairs kept whole.

The list is cut into a protected head, a middle and a protected tail (``cuts.py``: the cuts only
move outwards, so no tool pair spans one and nothing is dropped). The middle becomes one summary
message with role ``user``: it is information handed to the model, not something the model said
(an assistant-role summary reads as the model's own words and, placed last, as a prefill to
continue), and a user message is valid anywhere in both APIs, first place included.

The size rule: under ``compaction_min_messages`` messages, with no middle, or when the compacted
list would not be smaller (estimated tokens) than the input, the result is the input (pairs
repaired) with method ``passthrough`` and the reason; that is not an error. The model is asked
through the same path as summaries (``worker.model.calls``: guard, retries, failover).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from tersify.chat.compaction import (
    CompactionJob,
    CompactionMethod,
    CompactionResult,
    PassthroughReason,
)
from tersify.chat.messages import Conversation, Role, Turn, parse, text_turn
from tersify.chat.pairs import repair
from tersify.contract import FallbackReason, utcnow
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.compaction.budget import Context, Plan
from tersify.worker.compaction.cuts import cut
from tersify.worker.compaction.facts.sections import render
from tersify.worker.compaction.prompt import DEFAULT_MAX_TOKENS, build_request, transcript_room
from tersify.worker.compaction.redaction import for_model
from tersify.worker.compaction.summary import (
    fallback_summary,
    finish,
    is_summary,
    open_requests,
    problems,
    unwrap,
    with_facts,
)
from tersify.worker.compaction.windows import Notes, transcript_notes
from tersify.worker.model.calls import Route, ask
from tersify.worker.model.providers.base import Completion, ModelRequest
from tersify.worker.model.tokens import estimate_tokens
from tersify.worker.redact import Redactor, Scope

DEFAULT_MAX_SUMMARY_CHARS = 16_000

Ground = Callable[[str, ModelRequest], None]
"""Checks a model's summary against what it was shown; raises ``ProviderError`` to refuse it."""


def messages_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A message list's tokens, estimated over its compact JSON."""
    text = json.dumps(list(messages), ensure_ascii=False, separators=(",", ":"), default=str)
    return estimate_tokens(text)


def _raws(turns: Sequence[Turn]) -> list[dict[str, Any]]:
    return [dict(t.raw) for t in turns]


def _fold(previous_summary: str | None, earlier: Sequence[Turn]) -> str | None:
    """The previous summary plus any summary messages found in the list, deduplicated."""
    bodies = [unwrap(previous_summary), *(unwrap(t.text) for t in earlier)]
    unique = list(dict.fromkeys(b for b in bodies if b))
    return "\n\n".join(unique) or None


@dataclass(frozen=True, slots=True)
class _Summary:
    """The middle's replacement and how it was made."""

    text: str
    method: CompactionMethod
    completion: Completion | None = None
    provider: str | None = None
    reason: FallbackReason | None = None
    detail: str | None = None
    read: tuple[Completion, ...] = ()  # every answer behind it: the windows' notes, the summary


def compact(
    job: CompactionJob,
    routes: Sequence[Route],
    settings: Settings,
    *,
    stored_summary: str | None = None,
    ground: Ground | None = None,
    redactor: Redactor | None = None,
) -> CompactionResult:
    """Replace the unprotected middle of ``job.messages`` by one summary message.

    ``routes`` lead to the model (none: the extractive fallback); any failure along them also
    ends in the fallback. ``stored_summary`` is the session's last summary, folded in when the
    job brings no ``previous_summary``; earlier summary messages in the list are folded in too,
    so banners never stack. ``ground`` may refuse a model summary that claims what it was not
    shown. The model sees the middle with its secrets as placeholders (``redactor``, else
    model-only redaction).
    """
    started = utcnow()
    conversation = parse(job.messages, job.shape)
    kept = repair(conversation.turns)
    earlier = [t for t in conversation.turns if is_summary(t)]
    live = [t for t in conversation.turns if not is_summary(t)]
    head, tail = cut(live, job.protect_first, job.protect_last)
    middle = live[head:tail]
    skip = _skip_reason(job, settings, middle, earlier, live)
    summary: _Summary | None = None
    if skip is None:
        previous = _fold(job.previous_summary or stored_summary, earlier)
        shown = for_model(middle, previous, redactor or Redactor(frozenset({Scope.MODEL})))
        beside = [*live[:head], *live[tail:]]
        summary = _summarize(job, routes, settings, shown, (live, beside), ground)
        note = text_turn(Role.USER, summary.text, conversation)
        compacted = repair([*live[:head], note, *live[tail:]])
        if messages_tokens(_raws(compacted)) < messages_tokens(_raws(kept)):
            kept = compacted
        else:
            skip = PassthroughReason.NOT_SMALLER
    return _result(job, conversation, _raws(kept), summary, skip, started)


def _skip_reason(
    job: CompactionJob,
    settings: Settings,
    middle: Sequence[Turn],
    earlier: Sequence[Turn],
    live: Sequence[Turn],
) -> PassthroughReason | None:
    """Why the input should be handed back as it is, before any model is asked."""
    if len(job.messages) < settings.compaction_min_messages:
        return PassthroughReason.TOO_FEW_MESSAGES
    if not middle:
        return PassthroughReason.NOTHING_TO_COMPACT
    smallest = finish("", open_requests(live))  # no summary can be shorter than this one
    if messages_tokens(_raws([*middle, *earlier])) <= estimate_tokens(smallest):
        return PassthroughReason.NOT_SMALLER
    return None


def _summarize(
    job: CompactionJob,
    routes: Sequence[Route],
    settings: Settings,
    shown: tuple[list[Turn], str | None],
    context: Context,
    ground: Ground | None,
) -> _Summary:
    """The model's summary of the middle, else the extractive fallback's, with the reason.

    ``shown`` is the middle and the previous summary as the model may see them (redacted).
    Either way the structural facts sections are the same, and the result is validated.
    """
    middle, previous = shown
    plan = Plan.of(middle, context, settings.compaction_summary_max_chars)
    facts = render(plan.found, plan.facts_chars)
    deadline = time.monotonic() + (job.deadline - utcnow()).total_seconds()
    reason: FallbackReason | None = None
    detail: str | None = "no model provider configured"
    try:
        notes = _notes(middle, previous, (facts, plan.answer_chars), routes, settings, deadline)
    except ProviderError as exc:  # no window was read: the fallback below, with the reason
        notes, reason, detail = None, exc.reason, (exc.detail or exc.reason.value)[:200]
    request = build_request(
        middle,
        previous,
        max_input_chars=settings.model_window_chars,
        max_tokens=DEFAULT_MAX_TOKENS,
        facts=facts,
        answer_chars=plan.answer_chars,
        notes=notes.text if notes is not None else None,
    )

    if routes and reason is None:
        try:
            answer = ask(
                routes,
                request,
                deadline=deadline,
                settings=settings,
                check=partial(_check_summary, request, ground, plan),
                call_timeout=settings.model_timeout_seconds * 2,
            )
        except ProviderError as exc:
            reason, detail = exc.reason, (exc.detail or exc.reason.value)[:200]
        else:
            text = answer.completion.text
            made = with_facts(text, plan.facts_for(text), plan.requests)
            used = answer.route.provider.name
            read = (*(notes.completions if notes else ()), answer.completion)
            return _Summary(made, CompactionMethod.LLM, answer.completion, used, read=read)
    made = fallback_summary(middle, previous, requests=plan.requests, max_chars=plan.limit)
    first = routes[0].provider.name if routes else None
    read = notes.completions if notes is not None else ()
    return _Summary(made, CompactionMethod.FALLBACK, None, first, reason, detail, read)


def _notes(
    middle: list[Turn],
    previous: str | None,
    sized: tuple[str, int],
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
) -> Notes | None:
    """The notes of the windows a middle too long for one request is read in (None when it
    fits), beside ``sized``: the rendered facts and the answer's room; ``ProviderError`` when
    no window could be read."""
    facts, answer_chars = sized
    room = transcript_room(
        previous,
        max_input_chars=settings.model_window_chars,
        facts=facts,
        answer_chars=answer_chars,
    )
    return transcript_notes(middle, routes, settings, deadline, room)


def _check_summary(
    request: ModelRequest, ground: Ground | None, plan: Plan, completion: Completion
) -> None:
    """``completion`` checked as an answer to ``request`` (``_check``), then as the summary it
    makes with the facts appended: ``ProviderError`` (malformed) naming what is wrong."""
    _check(completion, request, ground)
    facts = plan.facts_for(completion.text)
    made = with_facts(completion.text, facts, plan.requests)
    wrong = problems(made, plan.limit, plan.requests, facts)
    if wrong:
        raise ProviderError(FallbackReason.MALFORMED, "; ".join(wrong)[:200])


def _check(completion: Completion, request: ModelRequest, ground: Ground | None) -> None:
    """Refuse an empty, cut-off or oversized answer, and (with ``ground``) an ungrounded one."""
    if not unwrap(completion.text).strip():
        raise ProviderError(FallbackReason.EMPTY, "the model returned no summary text")
    used = completion.output_tokens
    if used is not None and used >= request.max_tokens:
        detail = f"the answer was cut off at {used} of {request.max_tokens} tokens"
        raise ProviderError(FallbackReason.MALFORMED, detail)
    if len(completion.text) > DEFAULT_MAX_SUMMARY_CHARS:
        detail = f"the model returned {len(completion.text)} chars, more than "
        raise ProviderError(FallbackReason.OVERSIZED, f"{detail}{DEFAULT_MAX_SUMMARY_CHARS}")
    if ground is not None:
        ground(completion.text, request)


def _summed(completions: Sequence[Completion], field: str) -> int | None:
    """A usage count over every answer (None when none reported it)."""
    counts = [getattr(c, field) for c in completions if getattr(c, field) is not None]
    return sum(counts) if counts else None


def _result(
    job: CompactionJob,
    conversation: Conversation,
    messages: list[dict[str, Any]],
    summary: _Summary | None,
    skip: PassthroughReason | None,
    started: datetime,
) -> CompactionResult:
    """The result: the compacted list, or the input when ``skip`` says why not."""
    completion = summary.completion if summary is not None else None
    made = summary if skip is None else None
    return CompactionResult(
        job_id=job.job_id,
        session_id=job.session_id,
        shape=conversation.shape,
        messages_before=len(job.messages),
        tokens_before=messages_tokens(job.messages),
        messages=messages,
        summary=made.text if made is not None else "",
        method=made.method if made is not None else CompactionMethod.PASSTHROUGH,
        passthrough_reason=skip,
        provider=summary.provider if summary is not None else None,
        model=completion.model if completion is not None else None,
        fallback_reason=made.reason if made is not None else None,
        fallback_detail=made.detail if made is not None else None,
        messages_after=len(messages),
        tokens_after=messages_tokens(messages),
        input_tokens=_summed(summary.read, "input_tokens") if summary is not None else None,
        output_tokens=_summed(summary.read, "output_tokens") if summary is not None else None,
        started_at=started,
        finished_at=utcnow(),
    )

"""A summary of an output past one request's window: its windows read side by side, then merged.

The windows' requests run at once on threads of the job's own worker (``worker.model.fanout``),
each through the one call path (``worker.model.calls.ask``: the shared circuit breaker and
rate limit, retries within the deadline) and checked against its own lines; they may take
``WINDOW_SHARE`` of the time the job has left, the merge the rest. A window whose reading fails
is covered by the extractive shrink of its lines, which the merge reads instead. When every
window fails the job falls back as a single request does; when the merge fails the windows'
own answers make the summary. Every request's tokens and cost are counted in the outcome, and
the summary says which parts no model read.

Why threads in the job rather than a Celery group spread over workers: docs/ARCHITECTURE.md
(measured by ``bench/windows.py``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import structlog

from tersify.contract import LineRange, PendingSummary, ToolType, WindowRead
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text.sanitize import sanitize
from tersify.worker.model.calls import Route, RoutedCompletion
from tersify.worker.model.fanout import WINDOW_SHARE, fan_out
from tersify.worker.shrink import (
    NO_QUOTE,
    NumberedLines,
    Quote,
    Reading,
    clip,
    file_view,
    kind_of,
    plain_lines,
    range_quote,
    relevant_range,
    take,
)
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.engine import Plan, choose
from tersify.worker.shrink.reflow import LONG, as_doc, needs_reflow, wrap_long
from tersify.worker.shrink.windows import Window, WindowPlan, plan
from tersify.worker.summarize.asking import AnswerCheck, ask_checked
from tersify.worker.summarize.grounding import Source, check_source
from tersify.worker.summarize.merge import Part, merge_prompt, runs, window_prompt
from tersify.worker.summarize.prompts import SummaryPrompt

log = structlog.get_logger("tersify.summarize")

RUNS_NAMED = 4
"""Unread runs of lines named one by one in the summary; the rest are counted."""
_LABEL_ROOM = 6  # "N#HH|" or "N|": chars a line's label adds, beside its number's digits


@dataclass(frozen=True, slots=True)
class Layout:
    """How a job's output is read in windows: the plan, the reading that found its evidence,
    and a file's relevant range (given verbatim)."""

    plan: WindowPlan
    reading: Reading
    window_chars: int  # one request's window, the merge's too
    fixed: Quote = NO_QUOTE


def layout(job: PendingSummary, tool_type: ToolType, settings: Settings) -> Layout | None:
    """The windows ``job``'s output is read in; None when one request reads it (all of it, or
    as much as the job's ceiling allows, when that is under one window)."""
    if not past_one_window(job, settings):
        return None  # the numbered text surely fits one request: nothing to lay out
    limit, ceiling = settings.model_window_chars, settings.model_read_max_chars
    clean = sanitize(job.output)
    kind = kind_of(tool_type)
    if not kind.numbered_file:
        doc = wrapped(clean)
        source, reading = plain_lines(doc.lines), Reading.of(doc, tool_type, job.query)
        found = plan(source, reading, limit=limit, ceiling=ceiling)
        if found.unread and doc.text != clean:  # the engine picks: from the structured reflow
            doc = as_doc(clean, kind)
            source, reading = plain_lines(doc.lines), Reading.of(doc, tool_type, job.query)
            found = plan(source, reading, limit=limit, ceiling=ceiling)
        return Layout(found, reading, limit) if len(found.windows) > 1 else None
    view = file_view(clean)
    source, reading = view.numbered(), view.reading(job.query)
    found = plan(source, reading, limit=limit, ceiling=ceiling)
    if len(found.windows) < 2:
        return None
    wanted = relevant_range(view, reading, job.relevant_lines)
    fixed = range_quote(view, wanted, settings.max_verbatim_chars)
    return Layout(found, reading, limit, fixed)


def past_one_window(job: PendingSummary, settings: Settings) -> bool:
    """Whether ``job``'s numbered output may pass one window (a bound on its length and its
    line count: no line is read for it)."""
    raw = job.output
    lines = raw.count("\n") + raw.count("\r") + 1  # sanitizing only drops chars; a CR ends a line
    return len(raw) + lines * (len(str(lines)) + _LABEL_ROOM) > settings.model_window_chars


def wrapped(clean: str) -> Doc:
    """The lines windows read every one of: very long lines wrapped at clean breaks, every
    character where it was. (A structural reflow, one JSON member a line, serves the engine's
    picks; read whole, a record keeps its members side by side.)"""
    doc = Doc(clean)
    if not needs_reflow(clean, doc.lines):
        return doc
    return Doc("\n".join(wrap_long(line, LONG) if len(line) > LONG else line for line in doc.lines))


def summarize_windows(
    found: Layout,
    job: PendingSummary,
    tool_type: ToolType,
    routes: Sequence[Route],
    settings: Settings,
    deadline: float,
    first_model: str | None,
) -> tuple[str, RoutedCompletion, list[AnswerCheck], list[WindowRead], list[LineRange]]:
    """The merged summary of every window of ``found``, the last answer, every request's
    check (their usage), the windows as read and the lines no model read.

    Raises ``ProviderError`` (the first window's) when no window was read by the model.
    """
    plan = found.plan
    prompts = [
        window_prompt(
            job,
            tool_type,
            plan,
            number,
            max_summary_chars=settings.max_summary_chars,
            max_quote_chars=settings.max_quote_chars,
        )
        for number in range(len(plan.windows))
    ]
    checks = [_check(prompt, settings) for prompt in prompts]
    now = time.monotonic()
    until = now + (deadline - now) * WINDOW_SHARE
    calls = [
        partial(ask_checked, prompt, check, routes, settings, until, first_model)
        for prompt, check in zip(prompts, checks, strict=True)
    ]
    answers = fan_out(calls)
    parts, read = _parts(found, tool_type, job.query, answers, checks, settings)
    done = [a for a in answers if isinstance(a, RoutedCompletion)]
    failures = [a for a in answers if isinstance(a, ProviderError)]
    log.info("summary_windows_read", windows=len(plan.windows), failed=len(failures))
    if not done:
        raise failures[0]
    merge = merge_prompt(
        job,
        tool_type,
        plan,
        parts,
        limit=found.window_chars,
        max_summary_chars=settings.max_summary_chars,
        max_quote_chars=settings.max_quote_chars,
        fixed=found.fixed,
    )
    merged = _check(merge, settings, size_cap=len(job.output))
    try:
        last = ask_checked(merge, merged, routes, settings, deadline, first_model)
        text = merged.text
    except ProviderError as error:
        log.warning("summary_merge_failed", reason=error.reason.value, detail=error.detail)
        last, text = done[-1], joined(plan, parts, settings, found.fixed)
    unread = [LineRange(start=a, end=b) for a, b in map(plan.numbers, plan.unread)]
    notes = [note for note in (_covered_note(plan, parts), _unread_note(plan, job)) if note]
    return "\n".join([text, *notes]), last, [*checks, merged], read, unread


def _check(prompt: SummaryPrompt, settings: Settings, size_cap: int | None = None) -> AnswerCheck:
    """An answer check grounded in what ``prompt`` shows the model."""
    source = Source.of(prompt.request.system, prompt.request.user)
    return AnswerCheck(
        prompt,
        prose_cap=settings.max_summary_chars,
        quote_budget=settings.max_quote_chars,
        ground=lambda prose: check_source(prose, source, settings),
        size_cap=size_cap,
    )


def _parts(
    found: Layout,
    tool_type: ToolType,
    query: str | None,
    answers: Sequence[RoutedCompletion | ProviderError],
    checks: Sequence[AnswerCheck],
    settings: Settings,
) -> tuple[list[Part], list[WindowRead]]:
    """Each window's part for the merge, and how it was read."""
    plan = found.plan
    parts: list[Part] = []
    read: list[WindowRead] = []
    for number, (window, answer, check) in enumerate(
        zip(plan.windows, answers, checks, strict=True)
    ):
        first, last = plan.numbers(window.lines)
        lines = LineRange(start=first, end=last)
        if isinstance(answer, ProviderError) or check.answer is None:
            why = answer.reason.value if isinstance(answer, ProviderError) else "no answer"
            spans = covered(plan.source, window, tool_type, query, settings)
            parts.append(Part(number, "", spans, "extractive", why))
            read.append(WindowRead(lines=lines, chars=len(window.body), read_by="extractive"))
            continue
        parts.append(Part(number, check.answer.prose_text, check.answer.spans, "model"))
        read.append(WindowRead(lines=lines, chars=len(window.body), read_by="model"))
    return parts, read


def covered(
    source: NumberedLines,
    window: Window,
    tool_type: ToolType,
    query: str | None,
    settings: Settings,
) -> tuple[range, ...]:
    """The lines of ``window`` the extractive shrink keeps, as runs of indices."""
    lines = window.lines
    start = lines.start
    doc = Doc("\n".join(source.lines[start : lines.stop]))
    if len(doc) != len(lines):  # the lines do not survive a round trip: take the head
        return runs(sorted(window.shown)[:20])
    kind = kind_of(tool_type)
    budget = settings.local_budget_chars
    edge = budget // 10
    shown = choose(
        Reading.of(doc, tool_type, query),
        Plan(
            budget,
            head=edge,
            tail=edge,
            head_share=kind.head_ratio,
            numbered=lambda index, text: source.label(start + index, text),
        ),
    )
    return runs(sorted(start + i for i in shown if start + i in window.shown))


def joined(plan: WindowPlan, parts: Sequence[Part], settings: Settings, fixed: Quote) -> str:
    """The summary the windows' answers make without a merge: each part's prose in its share
    of the summary cap, then their lines, the first parts' first, within the quote budget."""
    share = settings.max_summary_chars // max(1, len(parts))
    prose = []
    for part in parts:
        first, last = plan.numbers(plan.windows[part.number].lines)
        if part.prose:
            prose.append(clip(f"Lines {first}-{last}: {part.prose}", share, ellipsis=True))
    spans = [span for part in parts for span in part.spans[:2]]
    spans += [span for part in parts for span in part.spans[2:]]
    quote = take(plan.source, spans, settings.max_quote_chars, fixed)
    return "\n".join([*prose, *([quote.text(plan.source)] if quote.shown else [])])


def _covered_note(plan: WindowPlan, parts: Sequence[Part]) -> str:
    """What the summary says of windows no model read: which, and what covered them."""
    missed = [part for part in parts if part.read_by != "model"]
    if not missed:
        return ""
    named = ", ".join(
        "{}-{} ({})".format(*plan.numbers(plan.windows[part.number].lines), part.why)
        for part in missed
    )
    return (
        f"[tersify: {len(missed)} of {len(parts)} windows were read by the extractive "
        f"summarizer, not the model: lines {named}]"
    )


def _unread_note(plan: WindowPlan, job: PendingSummary) -> str:
    """What the summary says of the lines no model read, and how to read them."""
    if not plan.unread:
        return ""
    spans = [plan.numbers(run) for run in plan.unread]
    named = ", ".join(f"{a}-{b}" for a, b in spans[:RUNS_NAMED])
    more = len(spans) - RUNS_NAMED
    if more > 0:
        named += f" and {more} more run{'s' if more != 1 else ''}"
    chars = sum(len(plan.source.lines[i]) + 1 for run in plan.unread for i in run)
    read = f"tersify output {job.output_ref} --from {spans[0][0]}" if job.output_ref else ""
    how = f"; read them with: {read}" if read else ""
    return (
        f"[tersify: no model read lines {named} ({chars} characters, past the job's "
        f"TERSIFY_MODEL_READ_MAX_CHARS){how}]"
    )

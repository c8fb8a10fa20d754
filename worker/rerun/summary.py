"""A re-run summarized as what changed since the earlier run, or on its own when that is not
shorter or the runs differ too much.

Without a model, the change summary is written here (``change.render``) and used when it is
shorter than the summary the extractive summarizer writes of the run on its own (computed
beside it). With a model, a diff shown whole needs no model (every line that differs is in
the summary already); a longer one is read by the model with the earlier run's summary
(``prompt``), and its answer is completed with every new failure and changed verdict it did
not quote. The model path is used when shorter than the last summary of the command written on
its own; if the model fails, the written change summary stands in for its answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

import structlog

from tersify.contract import Method, PendingSummary, ToolType
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text.binary import describe as describe_binary
from tersify.worker.model.calls import Route
from tersify.worker.redact import Redactor, Scope
from tersify.worker.rerun.change import header, must_show, render, still_failing
from tersify.worker.rerun.commands import run_key
from tersify.worker.rerun.diff import RunDiff, compare, run_lines
from tersify.worker.rerun.history import Earlier, Run, SessionRuns
from tersify.worker.rerun.prompt import SYSTEM, diff_view, rerun_request
from tersify.worker.shrink import extract
from tersify.worker.shrink.textcut import ELLIPSIS
from tersify.worker.summarize.grounding import INSTRUCTIONS, Source
from tersify.worker.summarize.prompts import SummaryPrompt
from tersify.worker.summarize.summarizer import Outcome, ask_model, job_settings, summarize

log = structlog.get_logger("tersify.rerun")

MOST_CHANGED: Final = 0.5
"""Past this share of both runs' lines without a match, the runs differ too much."""
ROOM_SHARE: Final = 0.35
"""Of the run's summary on its own, the room a change summary gives lines it need not show."""
NO_RERUN: Final = frozenset({ToolType.FILE_CONTENT})
"""Kinds always summarized on their own: a file's summary carries its lines to edit by."""


def applies(job: PendingSummary, tool_type: ToolType) -> bool:
    """Whether ``job`` may be summarized as a re-run at all (its options, its kind)."""
    if job.options is not None and not job.options.rerun:
        return False
    return tool_type not in NO_RERUN


def summarize_rerun(
    job: PendingSummary,
    tool_type: ToolType,
    earlier: Earlier,
    routes: Sequence[Route],
    settings: Settings,
    redactor: Redactor | None = None,
) -> Outcome | None:
    """The summary of ``job`` as a re-run of ``earlier`` (see the module); None when the run
    is to be summarized on its own by the ordinary path."""
    if not applies(job, tool_type) or describe_binary(job.output) is not None:
        return None
    settings = job_settings(settings, job)
    diff = compare(earlier.output, job.output, tool_type)
    if diff.share > MOST_CHANGED:
        log.info("rerun_differs_too_much", share=round(diff.share, 3), run=earlier.run.run + 1)
        return None
    if not routes:
        return _extractive(job, tool_type, earlier, diff, settings)
    standalone = earlier.run.standalone_chars
    written = render(diff, earlier.run, int(standalone * ROOM_SHARE))
    if written.complete:
        return _shorter(_local(written.text, earlier), standalone)
    try:
        answer = _ask(job, tool_type, earlier, routes, settings, redactor or Redactor())
    except ProviderError as error:
        log.info("rerun_model_failed", reason=error.reason.value)
        outcome = replace(
            _local(written.text, earlier),
            method=Method.FALLBACK,
            fallback_reason=error.reason,
            fallback_detail=error.detail[:200] or None,
        )
        return _shorter(outcome, standalone)
    text = _completed(answer.text, diff, earlier)
    outcome = replace(answer, text=text, rerun_of=earlier.run.ref)
    return _shorter(outcome, standalone) or _shorter(_local(written.text, earlier), standalone)


def _local(text: str, earlier: Earlier) -> Outcome:
    return Outcome(
        text=text, method=Method.EXTRACTIVE, provider="extractive", rerun_of=earlier.run.ref
    )


def _shorter(outcome: Outcome, standalone: int) -> Outcome | None:
    """``outcome`` when it is shorter than the summary of the run on its own; else None."""
    return outcome if len(outcome.text) < standalone else None


def _extractive(
    job: PendingSummary, tool_type: ToolType, earlier: Earlier, diff: RunDiff, settings: Settings
) -> Outcome:
    """The change summary when shorter than the extractive summary on its own; else that."""
    budget = settings.local_budget_chars
    alone = extract(job.output, tool_type, budget, job.query, job.relevant_lines)
    written = render(diff, earlier.run, int(len(alone) * ROOM_SHARE))
    if len(written.text) < len(alone):
        return _local(written.text, earlier)
    return Outcome(text=alone, method=Method.EXTRACTIVE, provider="extractive")


def _ask(
    job: PendingSummary,
    tool_type: ToolType,
    earlier: Earlier,
    routes: Sequence[Route],
    settings: Settings,
    redactor: Redactor,
) -> Outcome:
    """The model's account of what changed (``model_request``)."""
    remaining = job.deadline.timestamp() - time.time()
    sent, prompt, source = model_request(job, tool_type, earlier, settings, redactor)
    first_model = job.options.model if job.options is not None else None
    deadline = time.monotonic() + remaining
    return ask_model(prompt, sent, routes, settings, deadline, first_model, source)


def model_request(
    job: PendingSummary,
    tool_type: ToolType,
    earlier: Earlier,
    settings: Settings,
    redactor: Redactor,
) -> tuple[PendingSummary, SummaryPrompt, Source]:
    """What the model is asked of a re-run: the job as it is sent, the request (the earlier
    summary and the diff, both as the redactor leaves them: secrets as placeholders) and what
    its answer's prose is grounded in."""
    sent = redactor.job(job, Scope.MODEL)
    before = redactor.redact_for(Scope.MODEL, earlier.output)
    summary = redactor.redact_for(Scope.MODEL, earlier.run.summary)
    diff = compare(before, sent.output, tool_type)
    view = diff_view(run_lines(sent.output), diff, settings.model_window_chars)
    prompt = rerun_request(
        sent,
        tool_type,
        summary,
        view,
        max_summary_chars=settings.max_summary_chars,
        max_quote_chars=settings.max_quote_chars,
    )
    sizes = f"{settings.max_summary_chars} {settings.max_quote_chars}"
    source = Source.of(
        sent.output, before, summary, job.tool_name, job.command, job.query, SYSTEM, INSTRUCTIONS,
        sizes,
    )  # fmt: skip
    return sent, prompt, source


def _completed(answer: str, diff: RunDiff, earlier: Earlier) -> str:
    """The model's answer under the change summary's first line, with every entry no change
    summary may leave out that the answer does not already show, and the failures still
    there."""
    lines = [header(earlier.run, diff), answer]
    lines += [entry for entry in must_show(diff) if _line_text(entry) not in answer]
    lines += still_failing(diff, earlier.run)
    return "\n".join(line for line in lines if line)


def _line_text(entry: str) -> str:
    """The text an entry shows of its line (``+ 12| text`` → ``text``)."""
    first = entry.split("\n", 1)[0]
    text = first.split("| ", 1)[1] if "| " in first else first
    return text.removesuffix(ELLIPSIS)


def summarize_in_session(
    job: PendingSummary, tool_type: ToolType, runs: SessionRuns, settings: Settings
) -> Outcome:
    """``job`` summarized without a model as a worker would in its session: as what changed
    since the session's latest run of its command when that is shorter, else on its own; the
    run is then the session's latest (offline tools replaying sessions use this)."""
    key = run_key(job.tool_name, job.command) if settings.rerun_window else None
    last, earlier = runs.find(key) if key is not None else (None, None)
    outcome = None
    if earlier is not None:
        outcome = summarize_rerun(job, tool_type, earlier, (), settings)
    outcome = outcome or summarize(job, tool_type, (), settings)
    if key is not None:
        done = _Done(job.job_id, job.output_ref, outcome.text, outcome.rerun_of)
        runs.add(Run.after(last, earlier, key=key, digest="", done=done), job.output)
    return outcome


@dataclass(frozen=True, slots=True)
class _Done:
    job_id: str
    output_ref: str | None
    text: str
    rerun_of: str | None

"""The model's request for a re-run: the earlier run's summary and the lines that differ.

The model never reads both outputs. It gets the summary the agent already has of the earlier
run, and the diff: this run's new and changed lines numbered as the output numbers them (the
lines it may quote), each changed line's earlier text, and the earlier run's lines this one no
longer prints. It answers as every summary answers (``worker.summarize.answers``): prose and
the numbers of the lines that are its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from tersify.contract import PendingSummary, ToolType
from tersify.worker.model.fence import Fence
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.model.tokens import answer_token_cap
from tersify.worker.rerun.change import GONE_CHARS, LINE_CHARS
from tersify.worker.rerun.diff import RunDiff
from tersify.worker.shrink import ModelView, clip, kind_of, plain_lines
from tersify.worker.summarize.answers import answer_shape
from tersify.worker.summarize.prompts import (
    INTENT_NOTE,
    QUOTE_RULE,
    QUOTE_TOKENS,
    SummaryPrompt,
    job_blocks,
)

SYSTEM = (
    "You tell an AI agent what changed between two runs of the same command, so it learns "
    "at a glance what it ran the command again to learn: what got fixed, what broke, what "
    "still fails. {focus}\n"
    "The user message gives the tool's name and the command, each in its own block, the "
    "summary the agent already has of the earlier run in <{earlier}>, and in <{tag}> only "
    "the lines that differ: this run's new or changed lines numbered as the output numbers "
    "them (N|line), each changed line followed by its earlier text ('was: …'), and the "
    "earlier run's lines this run no longer prints, each after '-'. Every other line is the "
    "same in both runs. {rule}\n"
    "{intent}"
    'Answer with one JSON object. "summary" is plain prose of at most {limit} characters '
    "saying what changed and what it means; never repeat what did not change. Keep "
    "identifiers, paths, line numbers, numbers and error messages exactly as written; add "
    "nothing that is not in the blocks.\n"
    "{quotes}\n"
)


@dataclass(frozen=True, slots=True)
class DiffView:
    """The diff as the model reads it, and the numbered lines of this run it may quote."""

    body: str
    view: ModelView


def diff_view(lines: list[str], diff: RunDiff, limit: int) -> DiffView:
    """The lines that differ, in about ``limit`` chars: this run's in order of their numbers
    (each changed one with its earlier text), then the earlier run's gone lines."""
    source = plain_lines(lines)
    was = {new.index: old for new, old in diff.changed}
    parts: list[str] = []
    seen: set[int] = set()
    room = limit
    truncated = False
    for line in diff.new_lines():
        entry = source.label(line.index, clip(line.text, LINE_CHARS, ellipsis=True))
        if line.index in was:
            entry += f"\nwas: {clip(was[line.index].text.strip(), GONE_CHARS, ellipsis=True)}"
        if len(entry) + 1 > room:
            truncated = True
            break
        parts.append(entry)
        seen.add(line.index)
        room -= len(entry) + 1
    for old in diff.gone:
        entry = f"-{clip(old.text, GONE_CHARS, ellipsis=True)}"
        if len(entry) + 1 > room:
            truncated = True
            break
        parts.append(entry)
        room -= len(entry) + 1
    return DiffView("\n".join(parts), ModelView("", source, frozenset(seen), truncated))


def rerun_request(
    job: PendingSummary,
    tool_type: ToolType,
    earlier_summary: str,
    diff: DiffView,
    *,
    max_summary_chars: int,
    max_quote_chars: int,
) -> SummaryPrompt:
    """The request that asks the model what changed (see the module)."""
    fence = Fence()
    blocks, names = job_blocks(job, fence)
    blocks.append(fence.wrap("previous_summary", earlier_summary))
    blocks.append(fence.wrap("tool_output", diff.body))
    system = SYSTEM.format(
        focus=kind_of(tool_type).focus,
        earlier=fence.tag("previous_summary"),
        tag=fence.tag("tool_output"),
        rule=fence.rule(*names, "previous_summary", "tool_output"),
        intent=INTENT_NOTE.format(tag=fence.tag("query")) if job.query else "",
        limit=max_summary_chars,
        quotes=QUOTE_RULE.format(limit=max_quote_chars),
    )
    shape = answer_shape(ToolType.COMMAND_OUTPUT)  # prose and quotes, whatever the kind
    request = ModelRequest(
        system=system,
        user="\n".join(blocks),
        max_tokens=answer_token_cap(max_summary_chars, diff.body) + QUOTE_TOKENS,
        input_truncated=diff.view.truncated,
        answer_format=shape.answer_format(),
    )
    return SummaryPrompt(request, replace(diff.view, body=""), shape)

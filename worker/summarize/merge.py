"""The window requests of a long output and the one short request that merges their answers.

Each window is asked as the output itself would be (``prompts.prompt_for``), told which part
of the whole it reads; its answer is prose and the numbers of its evidence lines, checked
against its own lines. The merge request carries no output: each part's line range, its prose
and the lines it quoted (a part the model could not read: the lines the extractive shrink
keeps of it), numbered as in the whole output. The merge answers in the job's own shape and
budget, quoting only lines it was shown, and the worker copies them from the output, so quotes
stay exact across windows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tersify.contract import PendingSummary, ToolType
from tersify.worker.model.providers.base import ModelRequest
from tersify.worker.model.tokens import answer_token_cap
from tersify.worker.shrink import NO_QUOTE, ModelView, Quote, clip, take
from tersify.worker.shrink.windows import WindowPlan
from tersify.worker.summarize.answers import AnswerShape, answer_shape
from tersify.worker.summarize.prompts import (
    PART_NOTE,
    QUOTE_TOKENS,
    SummaryPrompt,
    framing,
    prompt_for,
)

WINDOW_SHAPE = AnswerShape(("summary",), full_output_flag=False)
"""What a window answers, whatever the kind: prose about its part and its evidence lines."""
MERGE_TEMPLATE = (
    "You write the summary of the output of a tool an AI agent ran, so the agent can go on "
    "without reading all of it. {focus}\n"
    "The output was too long for one reading: it was read in {count} parts side by side, each "
    "by a model that answered with prose and the lines that are its evidence. The user message "
    "gives the tool's name, the command it ran and the agent's intent when known, each in its "
    "own block, then in <{tag}> each part's line range, its prose and the lines it quoted, every "
    "line numbered as in the whole output ({label}). {rule}\n"
    "{intent}"
    "Answer with one JSON object. {prose} Join the parts into one account of the whole output, "
    "what matters most first. Keep identifiers, paths, line numbers, versions, numbers and "
    "error messages exactly as written; add nothing that the parts do not say or show.\n"
    "{quotes}{flag}\n"
    "{fixed}{unread}"
)
FIXED_NOTE = (
    "Lines {first}-{last} are the relevant range: the agent gets them verbatim, so do not "
    'repeat them; describe what comes before them in "before" and after them in "after".\n'
)
UNREAD_NOTE = (
    "Some lines were read by no model (the job's reading ceiling): the agent is told which; "
    "say nothing about what they hold.\n"
)
PART_HEAD = "[part {number} of {count}, lines {first}-{last}]"
COVERED_HEAD = (
    "[part {number} of {count}, lines {first}-{last}: no model could read it ({why}); the "
    "lines the extractive summarizer keeps of it]"
)


@dataclass(frozen=True, slots=True)
class Part:
    """One window's reading: its prose and the lines it shows the merge (quoted by the model,
    or kept by the extractive shrink when the model failed)."""

    number: int
    prose: str
    spans: tuple[range, ...]  # most important first
    read_by: Literal["model", "extractive"]
    why: str = ""


def window_prompt(
    job: PendingSummary,
    tool_type: ToolType,
    plan: WindowPlan,
    number: int,
    *,
    max_summary_chars: int,
    max_quote_chars: int,
) -> SummaryPrompt:
    """The request that reads window ``number`` (from 0) of ``plan``."""
    window = plan.windows[number]
    first, last = plan.numbers(window.lines)
    part = PART_NOTE.format(count=len(plan.windows), number=number + 1, first=first, last=last)
    return prompt_for(
        job,
        tool_type,
        plan.view(window),
        WINDOW_SHAPE,
        max_summary_chars=max_summary_chars,
        max_quote_chars=max_quote_chars,
        sample=window.body,
        part=part,
    )


def merge_prompt(
    job: PendingSummary,
    tool_type: ToolType,
    plan: WindowPlan,
    parts: list[Part],
    *,
    limit: int,
    max_summary_chars: int,
    max_quote_chars: int,
    fixed: Quote = NO_QUOTE,
) -> SummaryPrompt:
    """The request that joins ``parts`` into the job's summary, within ``limit`` chars."""
    shape = answer_shape(tool_type)
    fence, blocks, common = framing(
        job,
        tool_type,
        shape,
        "window_answers",
        max_summary_chars=max_summary_chars,
        max_quote_chars=max_quote_chars,
    )
    # Each part gets an equal share of the room: its prose first, then its lines.
    share = max(200, (limit - sum(map(len, blocks)) - 200) // max(1, len(parts)))
    body, shown = _parts_text(plan, parts, share)
    first, last = _fixed_numbers(plan, fixed)
    system = MERGE_TEMPLATE.format(
        **common,
        count=len(plan.windows),
        fixed=FIXED_NOTE.format(first=first, last=last) if fixed.shown else "",
        unread=UNREAD_NOTE if plan.unread else "",
    )
    user = "\n".join([*blocks, fence.wrap("window_answers", body)])
    request = ModelRequest(
        system=system,
        user=user,
        max_tokens=answer_token_cap(max_summary_chars, body[:4000]) + QUOTE_TOKENS,
        answer_format=shape.answer_format(),
    )
    view = ModelView("", plan.source, frozenset(shown), truncated=False, fixed=fixed)
    return SummaryPrompt(request, view, shape)


def _parts_text(plan: WindowPlan, parts: list[Part], share: int) -> tuple[str, set[int]]:
    """The parts as the merge reads them, each within ``share`` chars; the lines shown."""
    count = len(plan.windows)
    out: list[str] = []
    shown: set[int] = set()
    for part in parts:
        window = plan.windows[part.number]
        first, last = plan.numbers(window.lines)
        where = {"number": part.number + 1, "count": count, "first": first, "last": last}
        head = (
            PART_HEAD.format(**where)
            if part.read_by == "model"
            else COVERED_HEAD.format(**where, why=part.why)
        )
        prose = clip(part.prose, max(0, share // 2), ellipsis=True)
        room = share - len(head) - len(prose) - 2
        quote = take(plan.source, part.spans, room)
        lines = [quote.text(plan.source)] if quote.shown else []
        out += [head, *([prose] if prose else []), *lines]
        shown |= quote.shown
    return "\n".join(out), shown


def runs(indices: list[int]) -> tuple[range, ...]:
    """Sorted indices as runs of consecutive ones."""
    found: list[range] = []
    for index in indices:
        if found and found[-1].stop == index:
            found[-1] = range(found[-1].start, index + 1)
        else:
            found.append(range(index, index + 1))
    return tuple(found)


def _fixed_numbers(plan: WindowPlan, fixed: Quote) -> tuple[int, int]:
    if not fixed.shown:
        return 0, 0
    numbers = plan.source.numbers
    return numbers[min(fixed.shown)], numbers[max(fixed.shown)]

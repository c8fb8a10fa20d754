"""The model request that turns a conversation segment into a structured handoff summary."""

from __future__ import annotations

from collections.abc import Sequence

from tersify.chat.messages import Turn
from tersify.text import elide, truncate
from tersify.worker.compaction.summary import TEMPLATE, unwrap
from tersify.worker.model.fence import Fence, escape
from tersify.worker.model.providers.base import ModelRequest

DEFAULT_MAX_INPUT_CHARS = 50_000
DEFAULT_MAX_TOKENS = 2048
TOOL_OUTPUT_BYTES = 2000
TOOL_OUTPUT_LINES = 40
ARGUMENT_CHARS = 500
_CUT_ROOM = 8

SYSTEM_PROMPT = (
    "You condense the older part of a conversation between a user and an AI agent into a "
    "handoff summary. A fresh context window will read your summary instead of those turns, so "
    "it must let the agent carry on without them.\n"
    "- Use the section headings of the template, in order, as markdown. Write 'None' under a "
    "section with nothing to say.\n"
    "- Be concrete: keep file paths, commands, identifiers, numbers and error messages exactly "
    "as they appear.\n"
    "- Record what was done, what is unfinished and why decisions were made.\n"
    "- State only what the transcript or the previous summary supports.\n"
    "- Do not write an 'Active Task' section: it is filled in from the conversation itself.\n"
    "- The facts block (files changed, errors, tests, commands, task state, decisions) was read "
    "from the conversation's structure and is appended to your summary verbatim: do not copy "
    "its lists. Write the narrative around them: the goal, why things were done, what was "
    "decided, where things stand and what comes next, naming files and errors where it helps.\n"
    "- Do not answer, continue or comment on the conversation; output only the summary."
)


def render_transcript(turns: Sequence[Turn]) -> str:
    """The turns as plain text, with tool arguments and outputs trimmed to a bounded size."""
    names = {c.id: c.name for t in turns for c in t.calls}
    lines: list[str] = []
    for number, turn in enumerate(turns, start=1):
        if turn.text.strip():
            lines.append(f"[{number}] {turn.role.value}: {turn.text.strip()}")
        for call in turn.calls:
            arguments = elide(call.arguments, ARGUMENT_CHARS)
            lines.append(f"[{number}] assistant called {call.name} ({call.id}): {arguments}")
        for result in turn.results:
            label = "error from" if result.is_error else "result of"
            name = names.get(result.call_id, "a tool")
            body = truncate(result.content, TOOL_OUTPUT_BYTES, TOOL_OUTPUT_LINES)
            lines.append(f"[{number}] {label} {name} ({result.call_id}):\n{body}")
    return "\n".join(lines)


def build_request(
    turns: Sequence[Turn],
    previous_summary: str | None,
    *,
    max_input_chars: int = DEFAULT_MAX_INPUT_CHARS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    facts: str = "",
    answer_chars: int | None = None,
    notes: str | None = None,
) -> ModelRequest:
    """The request asking a model to summarize ``turns``, folding in ``previous_summary``.

    ``facts`` (the structural sections appended to the answer) are shown so the narrative can
    lean on them; ``answer_chars`` is the length the answer is asked to stay within. ``notes``
    stand for a transcript too long for one request: notes on its parts, read in windows
    (``worker.compaction.windows``).
    """
    fence = Fence()  # the blocks are the client's text: fenced, escaped, declared data
    parts, instructions, truncated = _frame(
        fence, previous_summary, max_input_chars, facts, answer_chars, notes is not None
    )
    frame = "\n\n".join([*parts, fence.wrap("transcript", ""), instructions])
    transcript = escape(notes if notes is not None else render_transcript(turns))
    # Bytes bound characters, so the whole user message stays within max_input_chars (less a
    # little room for a tag a cut may expose, escaped again by wrap).
    budget = max(max_input_chars - len(frame) - _CUT_ROOM, 0)
    bounded = truncate(transcript, budget, budget + 1)
    truncated = truncated or bounded != transcript
    parts += [fence.wrap("transcript", bounded), instructions]
    blocks = (
        *(("facts",) if facts else ()),
        *(("previous_summary",) if unwrap(previous_summary) else ()),
    )
    blocks = (*blocks, "transcript")
    return ModelRequest(
        system=f"{SYSTEM_PROMPT}\n- {fence.rule(*blocks)}",
        user="\n\n".join(parts),
        max_tokens=max_tokens,
        input_truncated=truncated,
    )


def transcript_room(
    previous_summary: str | None,
    *,
    max_input_chars: int,
    facts: str = "",
    answer_chars: int | None = None,
) -> int:
    """How many characters of transcript one summary request holds beside everything else."""
    fence = Fence()
    parts, instructions, _ = _frame(
        fence, previous_summary, max_input_chars, facts, answer_chars, False
    )
    frame = "\n\n".join([*parts, fence.wrap("transcript", ""), instructions])
    return max(max_input_chars - len(frame) - _CUT_ROOM, 0)


def _frame(
    fence: Fence,
    previous_summary: str | None,
    max_input_chars: int,
    facts: str,
    answer_chars: int | None,
    noted: bool,
) -> tuple[list[str], str, bool]:
    """The blocks before the transcript, the instructions after it, and whether the previous
    summary was cut."""
    previous = unwrap(previous_summary)
    parts: list[str] = []
    truncated = False
    if facts:
        parts += [
            "Facts read from the conversation's structure, appended to your summary verbatim:",
            fence.wrap("facts", escape(facts)),
        ]
    if previous:
        # A previous summary gets a quarter of the budget at most; the new turns matter more.
        kept = truncate(escape(previous), max_input_chars // 4, max_input_chars)
        truncated = kept != escape(previous)
        parts += [
            "A summary of still earlier turns. Fold it in: keep what still holds, update what "
            "changed, drop what no longer matters.",
            fence.wrap("previous_summary", kept),
        ]
    parts.append(NOTED_INTRO if noted else "The conversation turns to summarize, oldest first:")
    instructions = f"Write the summary with exactly these sections:\n{TEMPLATE}"
    if answer_chars is not None:
        instructions += f"\nKeep the summary under {answer_chars} characters."
    return parts, instructions, truncated


NOTED_INTRO = (
    "The conversation turns to summarize were too long for one reading: they were read in "
    "parts side by side, and here are the notes on each part, oldest first:"
)

"""The text that stands for a tool result: the summary, then how to read the exact output back.

The agent reads the exact output with its own shell — ``tersify output REF --grep TEXT`` or
``--from LINE`` — so no tool is added to its list, and the gateway never shrinks the output of
those commands again (``reads_output``).
"""

from __future__ import annotations

import re
from typing import Final

from tersify.client.outputs import DEFAULT_LIMIT
from tersify.contract import Method, SummaryResult

# `tersify output …`, also as `python -m tersify.worker.cli output …`, anywhere in a command
_READS_OUTPUT: Final = re.compile(r"\btersify(?:\.worker\.cli)?\s+output\b")


def text_for(result: SummaryResult) -> str:
    """The replacement of a summarized tool result: a pure function of the job's result."""
    how = {Method.FALLBACK: "cut to its key lines"}.get(result.method, "summarized")
    if result.rerun_of is not None:
        how = "told as what changed since its earlier run (the first line names it)"
    note = f"[tersify: {result.chars_in} chars of {result.tool_type.value} output {how}."
    if result.output_ref is not None:
        ref = result.output_ref
        note += (
            f" The exact text, in your shell: `tersify output {ref} --from 1 --limit "
            f"{DEFAULT_LIMIT}` (lines from 1), `tersify output {ref} --grep TEXT` (lines "
            "with TEXT)."
        )
    return f"{result.text}\n\n{note}]"


def reads_output(command: str | None) -> bool:
    """Whether a command reads a full output back (``tersify output``): never shrunk again."""
    return command is not None and _READS_OUTPUT.search(command) is not None

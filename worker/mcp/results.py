"""What the proxy hands the agent: a downstream result as it is, or tersify's summary of it."""

from __future__ import annotations

from typing import Any, Final

import mcp.types as types

from tersify.client.outputs import DEFAULT_LIMIT, MAX_GREP_CHARS, MAX_LIMIT, OutputRange
from tersify.contract import SummaryResult

READ_TOOL: Final = "tersify_read"
"""The reader's name, unless the downstream server has a tool of that name (``reader_name``)."""

_MAX_READER_SUFFIX: Final = 1000


def reader_name(taken: set[str]) -> str:
    """A name for the reader that no downstream tool has: ``tersify_read``, else
    ``tersify_read_2``, ``tersify_read_3``, …"""
    if READ_TOOL not in taken:
        return READ_TOOL
    for suffix in range(2, _MAX_READER_SUFFIX):
        if (name := f"{READ_TOOL}_{suffix}") not in taken:
            return name
    raise ValueError("the downstream server has every tersify_read_N name")


def read_tool(name: str = READ_TOOL) -> types.Tool:
    """The reader's spec under ``name``."""
    return READ_TOOL_SPEC.model_copy(update={"name": name})


READ_TOOL_SPEC: Final = types.Tool(
    name=READ_TOOL,
    description=(
        "Read the full output behind a summarized tool result: exact lines from `offset` "
        "(0-based), or with `pattern` only the lines containing that text (any case). The "
        "`ref` is the one the summary names."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "ref": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
            "offset": {"type": "integer", "minimum": 0, "default": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 200},
            "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_GREP_CHARS},
        },
        "required": ["ref"],
        "additionalProperties": False,
    },
)

# Argument names that carry what the agent is after, in the order they are tried.
_INTENT_ARGUMENTS: Final = ("intent", "query", "pattern", "question", "search", "q")


def result_text(result: types.CallToolResult) -> str | None:
    """The result's text when it is text only (no structured content, no other blocks)."""
    if result.is_error or result.structured_content is not None or not result.content:
        return None
    if not all(isinstance(block, types.TextContent) for block in result.content):
        return None
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))


def intent_of(arguments: dict[str, Any] | None, configured: str | None) -> str | None:
    """What the agent is looking for: the configured intent, else a query-like argument."""
    if configured:
        return configured
    for name in _INTENT_ARGUMENTS:
        value = (arguments or {}).get(name)
        if isinstance(value, str) and value.strip():
            return value[:10_000]
    return None


def summarized(result: SummaryResult, reader: str = READ_TOOL) -> types.CallToolResult:
    """The summary the agent sees, with how to read the exact output back (with ``reader``)."""
    return types.CallToolResult(content=[types.TextContent(text=summary_text(result, reader))])


def summary_text(result: SummaryResult, reader: str = READ_TOOL) -> str:
    """A summary's text, then a note saying what it summarized and how to read the exact
    output back (with ``reader``)."""
    note = (
        f"[tersify: {result.chars_in} chars of {result.tool_type.value} summarized "
        f"({result.method.value})."
    )
    if result.output_ref is not None:
        note += (
            f' Exact lines: {reader}(ref="{result.output_ref}", offset=0, limit='
            f'{DEFAULT_LIMIT}); matching lines: {reader}(ref="{result.output_ref}", '
            'pattern="...").'
        )
    return f"{result.text}\n\n{note}]"


def read_answer(found: OutputRange) -> types.CallToolResult:
    """A ``tersify_read`` answer: the lines (numbered when grepping), then where they sit."""
    if found.grep is None:
        body = found.text
    else:
        body = "\n".join(f"{line.number}: {line.text}" for line in found.lines)
    first = found.lines[0].number if found.lines else 0
    last = found.lines[-1].number if found.lines else 0
    where = f"[lines {first}-{last} of {found.total_lines}"
    where += f"; more from offset={found.next_offset}]" if found.next_offset is not None else "]"
    return types.CallToolResult(
        content=[types.TextContent(text=body), types.TextContent(text=where)],
    )


def tool_error(message: str) -> types.CallToolResult:
    """A tool-level error the agent can read and correct."""
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)

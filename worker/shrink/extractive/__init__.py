"""The built-in extractive provider: deterministic, structure-aware summaries without a model.

One module per tool type plus the helpers they share; imports only ``worker.shrink``.
"""

from __future__ import annotations

from collections.abc import Callable

from producer.classify.sanitize import sanitize
from producer.contract import ToolType
from worker.shrink.extractive.command import summarize_command
from worker.shrink.extractive.filecontent import summarize_file
from worker.shrink.extractive.listing import summarize_listing
from worker.shrink.extractive.narrow import NARROW_ABOVE, narrow
from worker.shrink.extractive.nearfit import NEAR_FIT, trim_lines
from worker.shrink.extractive.search import summarize_search
from worker.shrink.extractive.structured import summarize_structured
from worker.shrink.extractive.web import summarize_web
from worker.shrink.fallback import fallback_truncate
from worker.shrink.textcut import clip

_SUMMARIZERS: dict[ToolType, Callable[[str, int, str | None], str]] = {
    ToolType.COMMAND_OUTPUT: summarize_command,
    ToolType.SEARCH_RESULTS: summarize_search,
    ToolType.DIRECTORY_LISTING: summarize_listing,
    ToolType.STRUCTURED_DATA: summarize_structured,
    ToolType.FILE_CONTENT: summarize_file,
    ToolType.WEB_CONTENT: summarize_web,
}
# Outputs whose summarizers work line by line; JSON is parsed whole, files need true numbers.
_NARROWED = frozenset(
    {
        ToolType.COMMAND_OUTPUT,
        ToolType.SEARCH_RESULTS,
        ToolType.DIRECTORY_LISTING,
        ToolType.WEB_CONTENT,
    }
)
# Below this budget structure costs more than it shows: plain truncation does better.
_MIN_STRUCTURED_BUDGET = 200


def extract(text: str, tool_type: ToolType, budget: int, query: str | None = None) -> str:
    """A summary of ``text`` in at most ``budget`` chars, shaped by its tool type; never raises."""
    try:
        if budget <= 0:
            return ""
        clean = sanitize(text)
        if len(clean) <= budget:
            return clean
        if budget < _MIN_STRUCTURED_BUDGET:
            return fallback_truncate(clean, tool_type, budget, query)
        if tool_type is not ToolType.STRUCTURED_DATA and len(clean) <= budget * NEAR_FIT:
            trimmed = trim_lines(clean, tool_type, budget, query)
            if trimmed is not None:
                return clip(trimmed, budget)
        note = ""
        if len(clean) > NARROW_ABOVE and tool_type in _NARROWED:
            note = f"[{len(clean)} chars; read as its head, its tail and its salient middle]\n"
            clean = narrow(clean, tool_type, query)
        summary = _SUMMARIZERS[tool_type](clean, budget - len(note), query).strip("\n")
        if not summary.strip():
            return fallback_truncate(clean, tool_type, budget, query)
        return clip(note + summary, budget)
    except Exception:  # the extractive provider stands in for a model: it must always answer
        return fallback_truncate(text, tool_type, budget, query)

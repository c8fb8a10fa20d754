"""Properties every local shrink keeps, on any input, for every tool type and method:
it fits its budget, and it never drops lines silently (every omitted run is counted)."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.worker.shrink import extract, fallback_truncate

Shrink = Callable[[str, ToolType, int, str | None], str]
METHODS: dict[str, Shrink] = {"extractive": extract, "fallback": fallback_truncate}
_MARKER = re.compile(r"^… (\d+) lines? …$")
_HASHLINE = re.compile(r"^\d+#[0-9a-f]{2}\|")
_NOTE = re.compile(r" \(×\d+ similar\)$")

PIECES = (
    "error: cannot find value `x`", "  --> src/main.rs:3:5", "   |", "warning: unused",
    "FAILED tests/test_a.py::test_b - AssertionError", "Traceback (most recent call last):",
    '  File "a.py", line 3, in f', "ValueError: bad", "def handler(request):", "    return 1",
    "class Pool:", "## Install", "commit 0123456789abcdef0123", "./src:", "drwxr-xr-x 2 u g 4096 x",
    '  "name": "requests",', "src/app.py:12:    timeout = 5", "5 failed, 120 passed in 3.2s",
    "- item", "key: value", "    nested: 1", "plain words about the timeout retry",
)  # fmt: skip
# Printable text only: sanitizing (control characters, ANSI) is tested on its own.
PRINTABLE = st.characters(
    min_codepoint=32, max_codepoint=0x2FF, blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn")
)
BODIES = st.one_of(st.sampled_from(PIECES), st.text(PRINTABLE, max_size=60))


QUERIES = ["why does the timeout fail", "which is biggest", "requests"]


def numbered_text(bodies: list[str]) -> list[str]:
    """Lines made unique by a prefix, so each shown line maps back to one source line."""
    return [f"{index:04d}|{body}".rstrip() for index, body in enumerate(bodies)]


def source_index(line: str, lines: list[str]) -> int | None:
    text = _NOTE.sub("", _HASHLINE.sub("", line))
    if text.endswith("…"):
        head = text[:-1]
        matches = [i for i, source in enumerate(lines) if source.startswith(head)]
        return matches[0] if len(matches) == 1 else None
    match = re.match(r"^(\d{4})\|", text)
    if match and int(match.group(1)) < len(lines) and lines[int(match.group(1))] == text:
        return int(match.group(1))
    return None


def assert_every_gap_marked(lines: list[str], out: str) -> None:
    shown, pending = -1, 0
    for line in out.split("\n"):
        marker = _MARKER.match(line)
        if marker:
            pending += int(marker.group(1))
            continue
        index = source_index(line, lines)
        if index is None:
            continue  # a fact line (counts, an outline) stands for no source line
        assert index > shown, f"line {index} shown out of order after {shown}"
        assert pending == index - shown - 1, (
            f"{index - shown - 1} lines before {index}, {pending} marked"
        )
        shown, pending = index, 0
    assert pending == len(lines) - shown - 1 or shown == -1, "the omitted end is not counted"


@settings(max_examples=150, deadline=None)
@given(
    bodies=st.lists(BODIES, min_size=20, max_size=400),
    tool_type=st.sampled_from(list(ToolType)),
    share=st.floats(min_value=0.05, max_value=0.9),
    query=st.none() | st.sampled_from(QUERIES),
)
def test_every_local_shrink_fits_its_budget_and_marks_every_gap(
    bodies: list[str], tool_type: ToolType, share: float, query: str | None
) -> None:
    lines = numbered_text(bodies)
    text = "\n".join(lines) + "\n"
    budget = max(200, int(len(text) * share))
    assume(len(text) > budget)
    for name, shrink in METHODS.items():
        out = shrink(text, tool_type, budget, query)
        assert len(out) <= budget, name
        assert_every_gap_marked(lines, out)

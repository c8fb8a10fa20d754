"""The fallback truncation: type-aware head/tail carrying the salient middle, never over budget."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.text.sanitize import sanitize
from tersify.worker.shrink import KINDS, fallback_truncate, head_tail, model_view

MARKER = re.compile(r"\[\.\.\.(\d+) chars omitted\.\.\.\]")
# A cut says so: the engine counts omitted lines, a line cut short ends in an ellipsis.
ANY_CUT = re.compile(r"\[\.\.\.\d+ chars omitted\.\.\.\]|^… \d+ lines? …$|…$", re.MULTILINE)
# Head and tail sit on their own lines around the marker.
FRAMED = re.compile(r"\n\[\.\.\.\d+ chars omitted\.\.\.\]\n")
COMMAND = ToolType.COMMAND_OUTPUT


def _log(lines: int, special: dict[int, str] | None = None) -> str:
    special = special or {}
    return "\n".join(special.get(i, f"step {i} ok") for i in range(1, lines + 1)) + "\n"


def test_every_type_has_its_head_ratio() -> None:
    assert {t: kind.head_ratio for t, kind in KINDS.items()} == {
        ToolType.FILE_CONTENT: 0.7, ToolType.SEARCH_RESULTS: 0.5,
        ToolType.DIRECTORY_LISTING: 0.3, ToolType.COMMAND_OUTPUT: 0.6,
        ToolType.STRUCTURED_DATA: 0.5, ToolType.WEB_CONTENT: 0.5,
    }  # fmt: skip


def test_head_tail_cuts_on_line_boundaries_around_a_marker() -> None:
    text = _log(500)
    out = head_tail(text, 0.5, 400)
    assert len(out) <= 400
    head, tail = FRAMED.split(out)
    assert text.startswith(head) and text.endswith(tail)
    assert head.endswith("ok") and tail.startswith("step ")
    omitted = int(MARKER.search(out).group(1))  # type: ignore[union-attr]
    assert omitted == len(text) - len(head) - len(tail)


def test_head_tail_follows_the_ratio() -> None:
    out = head_tail(_log(2000), 0.3, 1000)
    head, tail = FRAMED.split(out)
    assert len(head) < len(tail)


def test_short_output_comes_back_sanitized_but_whole() -> None:
    assert fallback_truncate("a\x1b[31mred\x1b[0m\r\nb\x00c\n", COMMAND, 100) == "ared\nbc\n"


def test_a_salient_middle_line_is_carried_with_the_gaps_around_it_counted() -> None:
    text = _log(3000, {1500: "src/app.py:12:5: error: name 'x' is not defined"})
    out = fallback_truncate(text, COMMAND, 1200)
    assert len(out) <= 1200
    lines = out.split("\n")
    at = lines.index("src/app.py:12:5: error: name 'x' is not defined")
    assert re.fullmatch(r"… \d+ lines …", lines[at - 1])
    assert re.fullmatch(r"… \d+ lines …", lines[at + 1])
    assert out.startswith("step 1 ok\nstep 2 ok")


def test_ninety_identical_failures_fold_into_one_line_with_a_count() -> None:
    failing = "FAILED tests/test_io.py::test_read - OSError: disk full"
    text = _log(4000, dict.fromkeys(range(2000, 2090), failing))
    out = fallback_truncate(text, COMMAND, 1500)
    assert out.count(failing) == 1
    assert f"{failing} (×90 similar)" in out


def test_verdicts_exit_codes_and_traceback_ends_are_salient() -> None:
    special = {
        1000: "Traceback (most recent call last):",
        1001: '  File "/app/main.py", line 8, in <module>',
        1002: "    run()",
        1003: '  File "/app/jobs.py", line 41, in run',
        1004: "    raise KeyError(name)",
        1005: "KeyError: 'missing'",
        2500: "Process finished with exit code 3",
        2600: "warning: deprecated flag --old",
    }
    out = fallback_truncate(_log(4000, special), COMMAND, 1400)
    for line in (1003, 1005, 2500, 2600):
        assert special[line] in out


def test_lines_matching_the_query_are_carried() -> None:
    text = _log(3000, {1777: "configured max_retries = 7 for the uploader"})
    out = fallback_truncate(text, ToolType.FILE_CONTENT, 1000, "What is max_retries set to?")
    assert "configured max_retries = 7 for the uploader" in out


def test_crlf_is_normalized_and_ansi_colour_stripped() -> None:
    text = "".join(f"\x1b[32mline {i}\x1b[0m\r\n" for i in range(400))
    out = fallback_truncate(text, COMMAND, 500)
    assert "\r" not in out and "\x1b" not in out
    assert out.startswith("line 0\nline 1\n")


def test_a_huge_single_line_of_json_is_read_member_by_member() -> None:
    text = "[" + ", ".join(f'{{"name": "pkg{i}", "version": "1.{i}"}}' for i in range(5000)) + "]"
    out = fallback_truncate(text, ToolType.STRUCTURED_DATA, 2000, "version of pkg4321")
    assert len(out) <= 2000
    assert out.startswith('[\n {"name": "pkg0", "version": "1.0"},')
    assert '{"name": "pkg4321", "version": "1.4321"},' in out


@pytest.mark.parametrize("budget", [-5, 0, 1, 10, 40])
def test_tiny_and_negative_budgets_are_respected(budget: int) -> None:
    out = fallback_truncate(_log(100), COMMAND, budget)
    assert len(out) <= max(budget, 0)


def test_empty_input_gives_empty_output() -> None:
    assert fallback_truncate("", COMMAND, 100) == ""
    assert head_tail("", 0.5, 100) == ""


def test_a_surrogate_pair_is_never_split() -> None:
    text = "\ud83d\ude00" * 3000
    for out in (fallback_truncate(text, COMMAND, 999), head_tail(text, 0.5, 999)):
        assert len(out) <= 999
        body = ANY_CUT.sub("", out)
        highs = sum(1 for c in body if "\ud800" <= c <= "\udbff")
        lows = sum(1 for c in body if "\udc00" <= c <= "\udfff")
        assert highs == lows


CHUNKS = st.sampled_from(
    ["\r\n", "\n", "\r", "\x00", "\x1b[31m", "\x1b]0;t\x07", "\ud800", "\udfff", "\ud83d\ude00",
     "error: x\n", "FAILED t::x\n", "Traceback (most recent call last):\n", "é", "\t", ", ",
     "x" * 3000, "a.py:1:2: warning: w\n"]
)  # fmt: skip
TEXTS = st.lists(
    st.one_of(st.text(st.characters(exclude_categories=()), max_size=60), CHUNKS), max_size=60
).map("".join)


@settings(max_examples=120, deadline=None)
@given(
    text=TEXTS,
    tool_type=st.sampled_from(list(ToolType)),
    budget=st.integers(min_value=-10, max_value=3000),
    query=st.none() | st.text(max_size=30),
)
def test_fallback_never_exceeds_the_budget_nor_raises(
    text: str, tool_type: ToolType, budget: int, query: str | None
) -> None:
    out = fallback_truncate(text, tool_type, budget, query)
    assert len(out) <= max(budget, 0)
    assert "\r" not in out and "\x00" not in out and "\x1b" not in out
    # A cut (not just control characters or CRs sanitized away) always says so.
    if len(sanitize(text)) > budget >= 80:
        assert ANY_CUT.search(out)


@settings(max_examples=120, deadline=None)
@given(text=TEXTS, ratio=st.floats(0, 1), limit=st.integers(min_value=0, max_value=3000))
def test_head_tail_never_splits_a_crlf_pair_nor_exceeds_the_limit(
    text: str, ratio: float, limit: int
) -> None:
    out = head_tail(text, ratio, limit)
    assert len(out) <= limit
    pieces = FRAMED.split(out)
    if len(pieces) == 2:
        head, tail = pieces
        assert text.startswith(head) and text.endswith(tail)
        assert not head.endswith("\r") or text[len(head)] != "\n"
        assert not tail.startswith("\n") or text[-len(tail) - 1] != "\r"
    elif len(text) > limit >= 80:
        pytest.fail("cut without a marker")


def _manual_with_an_entry_in_the_middle() -> str:
    filler = [
        f"       option{i}.name  Sets the {i}th knob of the frobnicator." for i in range(1500)
    ]
    entry = ["       safe.directory"] + [
        f"           Paragraph line {i} about ownership checks." for i in range(30)
    ]
    entry[26] = "           This config setting is only respected in protected configuration."
    return "\n".join(filler[:750] + entry + filler[750:])


def test_the_models_view_reads_a_whole_entry_where_a_local_shrink_reads_its_start() -> None:
    text = _manual_with_an_entry_in_the_middle()
    fact = "only respected in protected configuration"
    assert len(text) > 60_000
    assert fact in model_view(text, ToolType.WEB_CONTENT, 50_000, "what is safe.directory?").body
    assert fact not in fallback_truncate(text, ToolType.WEB_CONTENT, 2_000, "safe.directory?")

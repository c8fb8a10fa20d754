"""Reading a full output back by ranges and matching lines: the pure window over its text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.client.outputs import MAX_LIMIT, check_request, window
from tersify.errors import InvalidJobError
from tersify.text.cut import split_lines

LINES = st.lists(st.text(alphabet="abcXYZ \t:é", max_size=12), max_size=60)


@given(LINES, st.integers(0, 80), st.integers(1, 80), st.booleans())
def test_a_range_is_exactly_the_lines_asked_for_numbered_from_one(
    lines: list[str], offset: int, limit: int, final_newline: bool
) -> None:
    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    got = window("r", text, offset, limit, None)
    expected = split_lines(text)[offset : offset + limit]
    assert [line.text for line in got.lines] == expected
    numbers = list(range(offset + 1, offset + 1 + len(expected)))
    assert [line.number for line in got.lines] == numbers
    assert got.total_lines == len(split_lines(text))
    more = offset + len(expected) < got.total_lines
    assert got.next_offset == (offset + len(expected) if more else None)


@given(LINES, st.sampled_from(["a", "XY", "c:", "é", "zz"]), st.integers(1, 7))
def test_paging_through_grep_yields_every_matching_line_once_in_order(
    lines: list[str], needle: str, limit: int
) -> None:
    text = "\n".join(lines)
    every = [
        (n, line)
        for n, line in enumerate(split_lines(text), start=1)
        if needle.casefold() in line.casefold()
    ]
    seen: list[tuple[int, str]] = []
    offset: int | None = 0
    for _ in range(len(lines) + 2):  # bounded: each page moves past at least one line
        assert offset is not None
        page = window("r", text, offset, limit, needle)
        assert len(page.lines) <= limit
        seen += [(line.number, line.text) for line in page.lines]
        offset = page.next_offset
        if offset is None:
            break
    assert offset is None
    assert seen == every


def test_grep_is_a_fixed_string_never_a_pattern() -> None:
    text = "a.c\nabc\n(x+)+$\n"
    assert [line.number for line in window("r", text, 0, 10, "a.c").lines] == [1]
    assert [line.number for line in window("r", text, 0, 10, "(x+)+$").lines] == [3]


@pytest.mark.parametrize(
    ("offset", "limit", "grep"),
    [(-1, 10, None), (0, 0, None), (0, MAX_LIMIT + 1, None), (0, 10, ""), (0, 10, "x" * 1001)],
)
def test_a_read_out_of_bounds_is_refused_with_a_typed_error(
    offset: int, limit: int, grep: str | None
) -> None:
    with pytest.raises(InvalidJobError):
        check_request(offset, limit, grep)


def reference_window(text: str, offset: int, limit: int, grep: str) -> tuple[list[int], int | None]:
    """The grep window line by line, as its definition says: the numbers, the next offset."""
    lines, needle = split_lines(text), grep.casefold()
    holding = [n for n in range(offset, len(lines)) if needle in lines[n].casefold()]
    more = len(holding) > limit
    return [n + 1 for n in holding[:limit]], (holding[limit - 1] + 1 if more else None)


FOLDS = "aAßẞﬁİıΣσς\u0130\u0345ǰ \t\r\n:x"  # letters whose case folds grow, shrink or merge


@given(
    st.text(alphabet=FOLDS, max_size=200),
    st.text(alphabet=FOLDS, min_size=1, max_size=4),
    st.integers(0, 40),
    st.integers(1, 10),
)
def test_grep_over_the_whole_folded_text_matches_a_line_by_line_reading(
    text: str, grep: str, offset: int, limit: int
) -> None:
    got = window("r", text, offset, limit, grep)
    assert ([line.number for line in got.lines], got.next_offset) == reference_window(
        text, offset, limit, grep
    )

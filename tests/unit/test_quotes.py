"""Quotes: lines copied exactly by index, with their numbers, gaps counted, within a budget."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.worker.shrink.files import file_view, range_quote, range_text
from tersify.worker.shrink.hashlines import hashline
from tersify.worker.shrink.quotes import NO_QUOTE, Quote, joined, plain_lines, take

LINES = [f"line {n} of the log" for n in range(1, 41)]
SOURCE = plain_lines(LINES)
_LABEL = re.compile(r"^(\d+)\|(.*)$", re.DOTALL)
_MARKER = re.compile(r"^… (\d+) lines? …$")


def test_a_quote_shows_its_lines_numbered_and_counts_the_gap_between_them() -> None:
    quote = take(SOURCE, [range(2, 4), range(9, 10)], budget=1000)
    assert quote.text(SOURCE) == (
        "3|line 3 of the log\n4|line 4 of the log\n… 5 lines …\n10|line 10 of the log"
    )


def test_spans_are_taken_in_the_order_given_until_the_budget_is_spent() -> None:
    one = len("31|line 31 of the log")
    quote = take(SOURCE, [range(30, 31), range(0, 1), range(5, 6)], budget=one)
    assert quote.shown == {30}


def test_a_span_too_long_for_the_budget_keeps_its_head_and_counts_the_rest() -> None:
    quote = take(SOURCE, [range(0, 20)], budget=60)
    text = quote.text(SOURCE)
    assert text.startswith("1|line 1 of the log\n2|line 2 of the log")
    assert _MARKER.match(text.split("\n")[-1])
    assert len(text) <= 60


def test_a_line_longer_than_the_budget_is_left_out_never_cut() -> None:
    lines = ["short", "x" * 500, "also short"]
    source = plain_lines(lines)
    quote = take(source, [range(1, 2), range(2, 3)], budget=100)
    assert quote.text(source) == "3|also short"


def test_a_zero_budget_quotes_nothing() -> None:
    assert take(SOURCE, [range(0, 3)], budget=0) == NO_QUOTE
    assert NO_QUOTE.text(SOURCE) == ""


def test_joined_quotes_share_one_stretch() -> None:
    quote = joined(Quote(frozenset({1}), range(1, 2)), Quote(frozenset({5}), range(5, 6)))
    assert quote.text(SOURCE) == "2|line 2 of the log\n… 3 lines …\n6|line 6 of the log"


def test_a_files_relevant_range_is_a_quote_of_hashlines() -> None:
    text = "\n".join(LINES)
    view = file_view(text)
    quote = range_quote(view, range(10, 13), 1000)
    assert quote.text(view.numbered()) == "\n".join(hashline(n, LINES[n - 1]) for n in (11, 12, 13))
    assert range_text(view, range(10, 13), 1000) == quote.text(view.numbered())


def test_a_relevant_range_over_its_budget_is_cut_around_its_centre_within_it() -> None:
    view = file_view("\n".join(LINES))
    text = range_text(view, range(0, 40), 200)
    assert len(text) <= 200
    first, last = text.split("\n")[0], text.split("\n")[-1]
    assert _MARKER.match(first) and _MARKER.match(last)
    assert hashline(20, LINES[19]) in text


def test_a_relevant_range_whose_centre_line_is_over_its_budget_is_left_out() -> None:
    view = file_view("a\n" + "y" * 900 + "\nb")
    assert range_text(view, range(1, 2), 200) == ""


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40).map(
            lambda s: s.replace("\n", " ").replace("\r", " ")
        ),
        min_size=1,
        max_size=60,
    ),
    st.lists(st.tuples(st.integers(0, 59), st.integers(0, 20)), max_size=8),
    st.integers(0, 600),
)
def test_a_quote_is_exact_within_its_budget_and_silent_about_nothing(
    lines: list[str], picks: list[tuple[int, int]], budget: int
) -> None:
    source = plain_lines(lines)
    spans = [range(min(a, len(lines)), min(a + n, len(lines))) for a, n in picks]
    quote = take(source, spans, budget)
    text = quote.text(source)
    assert len(text) <= budget
    shown: list[int] = []
    for line in text.split("\n") if text else []:
        labelled = _LABEL.match(line)
        if labelled:
            number = int(labelled.group(1))
            assert labelled.group(2) == lines[number - 1]  # byte for byte the output's line
            shown.append(number)
        else:
            assert _MARKER.match(line) or line == ""
    assert shown == sorted(shown) and len(shown) == len(set(shown)) == len(quote.shown)

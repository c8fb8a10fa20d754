"""Windows of a long output: line-aligned, within their size with the numbers counted, a few
lines shared, every line read up to the ceiling, and past it the evidence read first."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.worker.shrink import Reading, plain_lines
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.windows import OVERLAP_LINES, plan, split, unread_runs

LINE = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"),
    max_size=120,
)


def body_lines(body: str) -> list[str]:
    return body.split("\n")


def reading_of(lines: list[str], query: str | None = None) -> Reading:
    doc = Doc("\n".join(lines))
    assert doc.lines == lines
    return Reading.of(doc, ToolType.COMMAND_OUTPUT, query)


def test_windows_hold_whole_numbered_lines_and_share_a_few() -> None:
    lines = [f"line {n} " + "x" * 40 for n in range(1, 1001)]
    source = plain_lines(lines)
    windows = split(source, 5000)
    assert len(windows) > 5
    for window in windows:
        assert len(window.body) <= 5000
        shown = body_lines(window.body)
        assert shown == [f"{i + 1}|{lines[i]}" for i in window.lines]
    for before, after in itertools.pairwise(windows):
        assert before.lines.stop - after.lines.start == OVERLAP_LINES
    assert windows[0].lines.start == 0 and windows[-1].lines.stop == len(lines)


def test_a_line_longer_than_a_window_is_read_clipped_in_a_window_of_its_own() -> None:
    lines = ["short", "y" * 9000, "short again"]
    windows = split(plain_lines(lines), 2000)
    assert [w.lines for w in windows] == [range(0, 1), range(1, 2), range(2, 3)]
    assert len(windows[1].body) <= 2000 and windows[1].body.startswith("2|yyy")


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(LINE, min_size=1, max_size=300),
    limit=st.integers(min_value=60, max_value=3000),
    windows_read=st.integers(min_value=1, max_value=12),
)
def test_the_windows_read_every_line_up_to_the_ceiling(
    lines: list[str], limit: int, windows_read: int
) -> None:
    doc = Doc("\n".join(lines))
    source = plain_lines(doc.lines)
    ceiling = limit * windows_read
    found = plan(
        source, Reading.of(doc, ToolType.COMMAND_OUTPUT, None), limit=limit, ceiling=ceiling
    )
    read = {i for window in found.windows for i in window.shown}
    unread = {i for run in found.unread for i in run}
    assert read | unread == set(range(len(doc.lines)))
    assert not read & unread
    assert all(len(window.body) <= limit for window in found.windows)
    every = split(source, limit)
    if sum(len(w.body) for w in every) <= ceiling:
        assert not unread and found.windows == tuple(every)
    else:
        assert found.chars_sent <= ceiling
    for window in found.windows:  # each window shows its lines, numbered, in order
        shown = [text for text in body_lines(window.body) if not text.startswith("… ")]
        numbers = [int(text.split("|", 1)[0]) for text in shown]
        assert numbers == [i + 1 for i in sorted(window.shown)]


def test_past_the_ceiling_the_engine_picks_the_evidence_the_head_and_the_tail() -> None:
    lines = [f"INFO step {n} done" for n in range(6000)]
    lines[3100] = "ERROR: disk quota exceeded on /var/lib/data"
    source = plain_lines(lines)
    found = plan(source, reading_of(lines, "why did the write fail"), limit=9000, ceiling=27_000)
    sizes = [len(w.body) for w in found.windows]  # the picks shared out evenly
    assert len(sizes) <= 4 and min(sizes) > max(sizes) // 2
    assert found.chars_sent <= 27_000
    read = {i for window in found.windows for i in window.shown}
    assert {0, 3100, 5999} <= read
    assert found.unread and all(3100 not in run for run in found.unread)
    for window in found.windows:  # a run left out inside a window is marked, and counted
        body = body_lines(window.body)
        assert len(body) - sum(1 for t in body if t.startswith("… ")) == len(window.shown)


def test_the_unread_runs_are_what_no_window_shows() -> None:
    windows = split(plain_lines(["a" * 30] * 100), 200)
    kept = [windows[0], windows[3], windows[-1]]
    runs = unread_runs(100, kept)
    held = {i for w in kept for i in w.shown}
    assert {i for r in runs for i in r} == set(range(100)) - held

"""The map of what a summary left out: the largest omitted regions, named, within the room."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import ToolType
from tersify.worker.shrink import extract, fallback_truncate, mapped_lines
from tersify.worker.shrink.leftout import (
    LABEL_CHARS,
    map_room,
    omitted,
    region_map,
    sections,
)


def _lines(count: int) -> list[str]:
    return [f"entry {i} of the report" for i in range(count)]


def test_omitted_runs_are_every_stretch_of_lines_not_shown() -> None:
    shown = {0: "a", 1: "b", 5: "c", 9: "d"}
    assert omitted(_lines(12), shown) == [(2, 5), (6, 9), (10, 12)]
    assert omitted(_lines(3), {}) == [(0, 3)]
    assert omitted(_lines(2), {0: "a", 1: "b"}) == []


def test_a_run_holding_headers_is_split_where_each_header_starts() -> None:
    assert sections([(10, 50)], [3, 20, 35, 60]) == [(10, 20), (20, 35), (35, 50)]
    assert sections([(10, 50)], [10]) == [(10, 50)]


def test_the_map_names_the_largest_regions_in_order_by_their_header_or_first_line() -> None:
    lines = _lines(300)
    lines[120] = "== Section two =="
    shown = {i: lines[i] for i in [*range(5), *range(100, 104), 299]}
    text = region_map(lines, shown, headers=[120], room=200)
    assert text == (
        '[left out: lines 6-100 "entry 5 of the report" · 105-120 "entry 104 of the report"'
        ' · 121-299 "== Section two =="]'
    )


def test_the_map_leaves_out_regions_that_do_not_fit_its_room_largest_first() -> None:
    lines = _lines(400)
    shown = {i: lines[i] for i in (0, 10, 399)}
    full = region_map(lines, shown, [], room=500)
    short = region_map(lines, shown, [], room=60)
    assert len(short) <= 60 < len(full)
    assert mapped_lines(short) == [(12, 399)]  # the largest region alone
    assert region_map(lines, shown, [], room=10) == ""


def test_small_runs_are_not_named_and_long_labels_are_cut() -> None:
    lines = ["x" * 200 for _ in range(20)]
    shown = {i: lines[i] for i in range(20) if i not in (3, 4, *range(10, 19))}
    text = region_map(lines, shown, [], room=300)
    assert mapped_lines(text) == [(11, 19)]
    label = text.split('"')[1]
    assert len(label) <= LABEL_CHARS and label.endswith("…")


def test_the_map_takes_a_small_share_of_a_small_budget() -> None:
    assert map_room(2_000) == 160
    assert map_room(500) == 40


def test_a_summary_without_a_map_reads_as_naming_no_region() -> None:
    assert mapped_lines("line one\n… 3 lines …\nline five") == []


_REPORT = st.lists(
    st.sampled_from(
        [
            "ok step finished",
            "error: the value is out of range",
            "== Results ==",
            "  detail under the step",
            "",
            "warning: slow step",
            "name = value",
        ]
    ),
    min_size=40,
    max_size=300,
)


@settings(max_examples=80, deadline=None)
@given(
    bodies=_REPORT,
    tool_type=st.sampled_from([t for t in ToolType if t is not ToolType.FILE_CONTENT]),
    budget=st.integers(min_value=300, max_value=3_000),
    query=st.none() | st.sampled_from(["why did the step fail", "value"]),
)
def test_every_region_a_summary_maps_is_left_out_of_it_and_lies_in_the_output(
    bodies: list[str], tool_type: ToolType, budget: int, query: str | None
) -> None:
    lines = [f"{i:04d} {body}" for i, body in enumerate(bodies)]
    text = "\n".join(lines) + "\n"
    for shrink in (extract, fallback_truncate):
        out = shrink(text, tool_type, budget, query)
        assert len(out) <= budget
        shown = {line[:4] for line in out.split("\n")}
        for first, last in mapped_lines(out):
            assert 1 <= first <= last <= len(lines)
            assert not any(f"{i - 1:04d}" in shown for i in range(first, last + 1))

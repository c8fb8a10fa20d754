"""Extremes: "biggest", "newest", "slowest", "most" are answered by the numbers, not by position."""

from __future__ import annotations

import pytest

from tersify.contract import ToolType
from tersify.worker.shrink import extract
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.extremes import extreme_lines, value
from tersify.worker.shrink.query import Intent, Measure, intent


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("which file is the biggest?", Intent(Measure.SIZE, True)),
        ("what was modified most recently", Intent(Measure.TIME, True)),
        ("the oldest log", Intent(Measure.TIME, False)),
        ("which test is slowest", Intent(Measure.DURATION, True)),
        ("which module has the most errors", Intent(Measure.COUNT, True)),
        ("why does it fail", None),
    ],
)
def test_the_query_names_the_extreme_it_wants(query: str, expected: Intent | None) -> None:
    assert intent(query) == expected


@pytest.mark.parametrize(
    ("line", "measure", "number"),
    [
        ("-rw-r--r-- 1 dev dev 123456 Nov 22 01:54 a.bin", Measure.SIZE, 123456),
        ("4.0K\t./docs", Measure.SIZE, 4096),
        ("  12 MB  cache", Measure.SIZE, 12 * 1024 * 1024),
        ("2024-05-01 12:30 deploy", Measure.TIME, 20240501123000),
        ("12.50s call     tests/test_db.py::test_migrate", Measure.DURATION, 12.5),
        ("finished in 0:13:32", Measure.DURATION, 13 * 60 + 32),
        ("src/app.py:42", Measure.COUNT, 42),
    ],
)
def test_numbers_are_read_off_lines_by_measure(line: str, measure: Measure, number: float) -> None:
    assert value(line, measure) == pytest.approx(number)


def test_the_top_lines_are_ranked_by_the_measure() -> None:
    doc = Doc("".join(f"{size}K\tdir{i}\n" for i, size in enumerate([5, 900, 12, 40, 7])))
    assert extreme_lines(doc, Intent(Measure.SIZE, True), top=2) == [1, 3]


def test_the_biggest_file_of_a_long_listing_is_kept_wherever_it_sits() -> None:
    rows = [f"-rw-r--r-- 1 dev dev {1000 + i:>9} Nov  2 10:00 file_{i}.dat" for i in range(600)]
    rows[317] = "-rw-r--r-- 1 dev dev 987654321 Nov  2 10:00 huge_blob.dat"
    out = extract("\n".join(rows), ToolType.DIRECTORY_LISTING, 2000, "Which file is the biggest?")
    assert "987654321 Nov  2 10:00 huge_blob.dat" in out


def test_a_table_padded_by_a_space_is_ranked_by_the_column_the_query_names() -> None:
    header = " id  |   name   | orders | revenue_cents\n-----+----------+--------+--------------\n"
    rows = "".join(
        f" {i:3d} | user{i:<4} | {i % 9:6d} | {(i * 7919) % 100000:12d}\n" for i in range(1, 300)
    )
    doc = Doc(header + rows)
    best = extreme_lines(doc, Intent(Measure.COUNT, True), top=1, terms=("paid", "revenue"))[0]
    assert doc.lines[best].endswith(f"{max((i * 7919) % 100000 for i in range(1, 300)):12d}")

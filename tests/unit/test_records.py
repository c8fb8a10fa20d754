"""Records, not lines: a kept line brings what continues it, and prose its paragraph."""

from __future__ import annotations

from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.records import record


def test_a_compiler_error_brings_its_code_frame_and_notes() -> None:
    doc = Doc(
        "error[E0308]: mismatched types\n --> src/main.rs:4:5\n  |\n4 |     x\n  |     ^ expected\n"
        "warning: unused\n"
    )
    assert record(doc, 0) == (0, 5)


def test_a_json_object_member_brings_its_children_and_closing_bracket() -> None:
    doc = Doc('{\n  "a": {\n    "b": 1,\n    "c": 2\n  },\n  "d": 3\n}\n')
    assert record(doc, 1) == (1, 5)


def test_a_commit_header_brings_its_message_across_one_blank_line() -> None:
    doc = Doc("Date: d\n\n    Fix the bug\n    in parsing\ncommit abc\n")
    assert record(doc, 0) == (0, 4)


def test_a_log_line_is_a_record_of_its_own() -> None:
    doc = Doc("INFO a\nERROR b\nINFO c\n")
    assert record(doc, 1) == (1, 2)


def test_records_are_bounded_in_lines_and_chars() -> None:
    doc = Doc("head:\n" + "".join(f"    child {i}\n" for i in range(100)))
    start, end = record(doc, 0)
    assert start == 0 and end - start <= 8


def test_prose_takes_the_paragraph_around_the_line() -> None:
    doc = Doc("Title\n\nFirst line of a paragraph\nsecond line\nthird line\n\nNext paragraph\n")
    assert record(doc, 3, prose=True) == (2, 5)


PYTEST_FAILURE = (
    "    def decode(raw: bytes) -> dict:\n"
    "        data = json.loads(raw)\n"
    '>       data.pop("_saved_at")\n'
    "E       KeyError: '_saved_at'\n"
    "\n"
    "sessionstore/store.py:18: KeyError\n"
    "_____ test_touch _____\n"
)


def test_a_test_failure_brings_the_code_it_points_at_and_its_location() -> None:
    doc = Doc(PYTEST_FAILURE)
    assert record(doc, 3) == (2, 6)


def test_a_location_further_than_one_blank_line_belongs_to_something_else() -> None:
    doc = Doc(PYTEST_FAILURE.replace("\n\nsessionstore", "\n\nnext\nsessionstore"))
    assert record(doc, 3) == (2, 4)


def test_a_line_ending_in_a_colon_brings_the_line_it_introduces() -> None:
    doc = Doc(
        "thread 'tests::get' panicked at src/lib.rs:58:19:\n"
        "index out of bounds: the len is 3 but the index is 4\n"
        "note: run with `RUST_BACKTRACE=1`\n"
    )
    assert record(doc, 0) == (0, 2)

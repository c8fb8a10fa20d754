"""Long lines become lines a shrink can choose from, every character kept as it was."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.shrink.reflow import reflow_json, wrap, wrap_long


def test_minified_json_gets_one_member_per_line_with_its_spacing_kept() -> None:
    text = json.dumps({"shapes": {"Send": {"members": {"Id": {"shape": "S" * 200}}}}, "v": 1})
    out = reflow_json(text)
    assert out is not None
    assert any(line.strip() == '"shape": "' + "S" * 200 + '"' for line in out.split("\n"))
    assert json.loads(out) == json.loads(text)


def test_a_short_object_stays_on_one_line() -> None:
    text = json.dumps([{"name": "pandas", "version": "3.1.1"}] * 40, separators=(",", ":"))
    out = reflow_json(text)
    assert out is not None
    assert '{"name":"pandas","version":"3.1.1"},' in [line.strip() for line in out.split("\n")]


def test_unbalanced_brackets_are_not_reflowed() -> None:
    assert reflow_json('{"a": [1, 2}') is None


@given(
    st.recursive(
        st.none() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c)
    )
)
def test_reflowed_json_is_the_same_json(value: object) -> None:
    text = json.dumps(value)
    out = reflow_json(text)
    assert out is not None and json.loads(out) == value


@given(st.text(max_size=3000))
def test_wrapping_keeps_every_character_in_order(line: str) -> None:
    pieces = wrap(line.replace("\n", " "), 200).split("\n")
    assert "".join(pieces) == line.replace("\n", " ")
    assert all(len(piece) <= 200 for piece in pieces)


def test_long_markup_gets_one_element_per_line() -> None:
    cases = "".join(f'<testcase name="t{i}" time="0.0" />' for i in range(60))
    line = f'<testsuite>{cases}<testcase name="bad"><failure message="boom">x</failure></testsuite>'
    out = wrap_long(line)
    assert out.replace("\n", "") == line
    assert '<testcase name="bad">' in out.split("\n")
    assert all(len(piece) <= 200 for piece in out.split("\n"))


@given(st.text(alphabet='<>ab ="/', min_size=1000, max_size=3000))
def test_reflowing_markup_keeps_every_character_in_order(line: str) -> None:
    assert wrap_long(line).replace("\n", "") == line.replace("\n", "")

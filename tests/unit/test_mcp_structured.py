"""Long string leaves of structured content: found, replaced, and the schema kept."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.mcp.structured import (
    MAX_LEAVES,
    long_leaves,
    mirrored,
    replaced,
    schema_errors,
    schema_kept,
)

THRESHOLD = 20
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


def leaves(value: Any) -> list[str]:
    """Every string in ``value``, in a stable order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in leaves(value[key])]
    if isinstance(value, list):
        return [leaf for child in value for leaf in leaves(child)]
    return []


@given(json_values)
def test_only_the_long_leaves_are_replaced_and_the_original_is_untouched(value: Any) -> None:
    before = json.dumps(value, sort_keys=True)
    found = long_leaves(value, THRESHOLD)
    assert len(found) <= MAX_LEAVES and all(len(text) > THRESHOLD for text in found.values())
    after = replaced(value, dict.fromkeys(found, "S"))
    assert json.dumps(value, sort_keys=True) == before
    expected = [("S" if len(leaf) > THRESHOLD else leaf) for leaf in leaves(value)]
    if len([leaf for leaf in leaves(value) if len(leaf) > THRESHOLD]) <= MAX_LEAVES:
        assert leaves(after) == expected


def test_a_replacement_that_breaks_the_schema_is_dropped_and_the_rest_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "log": {"type": "string"},
            "digest": {"type": "string", "pattern": "^[0-9a-f]+$"},
        },
    }
    value = {"log": "x" * 50, "digest": "ab" * 30}
    kept = schema_kept(schema, value, {("log",): "short", ("digest",): "a summary"})
    assert kept == {("log",): "short"}
    assert schema_errors(schema, replaced(value, kept)) == set()
    assert schema_kept(None, value, {("digest",): "a summary"}) == {("digest",): "a summary"}


def test_text_blocks_that_repeat_the_structure_are_rewritten_others_kept() -> None:
    before = {"result": "long " * 10}
    after = {"result": "short"}
    content: list[types.ContentBlock] = [
        types.TextContent(text=before["result"]),
        types.TextContent(text=json.dumps(before)),
        types.TextContent(text="something else"),
    ]
    originals = {("result",): before["result"]}
    texts = [b.text for b in mirrored(content, before, after, {("result",): "short"}, originals)]
    assert texts == ["short", json.dumps(after, indent=2), "something else"]

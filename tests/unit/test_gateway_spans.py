"""Locating values in raw JSON and splicing them: what is not replaced keeps every byte."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.gateway.spans import ANY_ITEM, Node, UnusualJSONError, dumps, locate, splice

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
documents = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=30,
)
styles = st.sampled_from(
    [
        {"separators": (",", ":")},
        {"separators": (", ", ": ")},
        {"indent": 2},
        {"indent": "\t", "ensure_ascii": False},
        {"ensure_ascii": False},
    ]
)


def nodes(node: Node) -> list[Node]:
    """Every node of a located tree."""
    found = [node]
    for child in [*(node.members or {}).values(), *(node.items or [])]:
        found += nodes(child)
    return found


def walk_everything(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths that walk every container of ``value``."""
    paths = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            paths += walk_everything(item, (*path, key))
    elif isinstance(value, list):
        for item in value:
            paths += walk_everything(item, (*path, ANY_ITEM))
    return paths


@given(documents, styles)
def test_every_located_value_is_the_json_value_of_its_own_span(
    doc: Any, style: dict[str, Any]
) -> None:
    text = json.dumps(doc, **style)
    root = locate(text, walk_everything(doc))
    assert root.python() == json.loads(text)
    for node in nodes(root):
        assert json.loads(text[node.start : node.end]) == node.python()


@given(documents, styles, st.text())
def test_a_splice_changes_the_one_value_and_no_other_byte(
    doc: Any, style: dict[str, Any], new: str
) -> None:
    text = json.dumps({"keep": doc, "messages": [doc, "old", doc]}, **style)
    root = locate(text, [("messages", ANY_ITEM)])
    target = root.get("messages").items[1]  # type: ignore[union-attr]
    spliced = splice(text, [(target.start, target.end, dumps(new))])
    assert spliced[: target.start] == text[: target.start]
    assert spliced[target.start + len(dumps(new)) :] == text[target.end :]
    assert json.loads(spliced)["messages"] == [doc, new, doc]


def test_values_off_the_walked_paths_are_read_whole_not_walked() -> None:
    text = '{"tools": [{"a": 1}], "messages": [{"content": [1, 2]}]}'
    root = locate(text, [("messages", ANY_ITEM)])
    assert root.get("tools").value == [{"a": 1}]  # type: ignore[union-attr]
    message = root.get("messages").items[0]  # type: ignore[union-attr]
    assert message.members is not None and message.leaf("content") == [1, 2]


@pytest.mark.parametrize(
    "text",
    [
        '{"messages": [{"role": "user", "role": "tool"}]}',  # duplicate key on a walked path
        '{"messages": []} trailing',
        '{"messages": [1, 2,]}',
        "",
        '{"messages": [{"role": }]}',
    ],
)
def test_unusual_json_is_refused_so_the_request_goes_on_untouched(text: str) -> None:
    with pytest.raises(UnusualJSONError):
        locate(text, [("messages", ANY_ITEM)])


def test_splices_are_applied_in_order_and_must_not_overlap() -> None:
    assert splice("abcdef", [(4, 5, "E"), (0, 1, "A")]) == "AbcdEf"
    with pytest.raises(ValueError, match="overlapping"):
        splice("abcdef", [(0, 3, "x"), (2, 4, "y")])

"""What the MCP proxy summarizes, and how it reads a call's intent and its --listen address."""

from __future__ import annotations

import mcp.types as types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.worker.cli.failures import Failure
from tersify.worker.cli.listen import listen_address
from tersify.worker.mcp.results import intent_of, result_text


@given(st.lists(st.text(max_size=50), min_size=1, max_size=5))
def test_a_text_only_result_is_its_blocks_joined(texts: list[str]) -> None:
    result = types.CallToolResult(content=[types.TextContent(text=t) for t in texts])
    assert result_text(result) == "\n".join(texts)


@pytest.mark.parametrize(
    "result",
    [
        types.CallToolResult(content=[types.TextContent(text="boom")], is_error=True),
        types.CallToolResult(content=[types.TextContent(text="x")], structured_content={"a": 1}),
        types.CallToolResult(
            content=[
                types.TextContent(text="x"),
                types.ImageContent(data="aGk=", mime_type="image/png"),
            ]
        ),
        types.CallToolResult(content=[]),
    ],
)
def test_errors_structured_content_and_other_blocks_are_never_summarized(
    result: types.CallToolResult,
) -> None:
    assert result_text(result) is None


def test_the_configured_intent_wins_then_a_query_like_argument() -> None:
    assert intent_of({"query": "why"}, "find the failing test") == "find the failing test"
    assert intent_of({"repo_path": "/r", "pattern": "TODO"}, None) == "TODO"
    assert intent_of({"repo_path": "/r", "max_count": 5}, None) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [("127.0.0.1:8765", ("127.0.0.1", 8765)), ("[::1]:80", ("::1", 80))],
)
def test_listen_takes_host_and_port(value: str, expected: tuple[str, int]) -> None:
    assert listen_address(value) == expected


@pytest.mark.parametrize("value", ["8765", "host:", ":80", "host:0", "host:70000", "host:http"])
def test_listen_refuses_anything_else_with_one_line_naming_the_flag(value: str) -> None:
    with pytest.raises(Failure, match=f"^--listen wants HOST:PORT, not {value!r}$"):
        listen_address(value)

"""Properties over generated conversations: the facts sections and the summary stay in budget."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.chat.messages import parse
from tersify.worker.compaction.facts.sections import Section, render, sections
from tersify.worker.compaction.summary import BANNER, END_MARKER, fallback_summary, problems

Msg = dict[str, Any]

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=300)
_PATH = st.from_regex(r"[a-z]{1,8}(/[a-z_]{1,10}){0,3}\.(py|go|ts|md)", fullmatch=True)
_COMMANDS = st.one_of(
    _PATH.map(lambda p: f"sed -i 's/a/b/' {p}"),
    _PATH.map(lambda p: f"cat <<'EOF' > {p}\nx\nEOF"),
    _PATH.map(lambda p: f"pytest {p} -q"),
    _TEXT,
)
_OUTPUTS = st.one_of(
    _TEXT,
    st.builds(lambda p, e: f"FAILED {p}::test_x - ValueError: {e}\n1 failed", _PATH, _TEXT),
    st.builds(lambda e: f"Traceback (most recent call last):\nTypeError: {e}", _TEXT),
    st.builds(lambda p: f"{p}:12:3: error: expected ';'", _PATH),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[Msg]:
    """An OpenAI-shaped agent conversation: requests, shell and edit calls, prose."""
    messages: list[Msg] = [{"role": "user", "content": draw(_TEXT) or "go"}]
    for i in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["bash", "edit", "prose", "user"]))
        if kind == "prose":
            messages.append({"role": "assistant", "content": draw(_TEXT) or "ok"})
        elif kind == "user":
            messages.append({"role": "user", "content": draw(_TEXT) or "next"})
        else:
            args = (
                {"command": draw(_COMMANDS)}
                if kind == "bash"
                else {
                    "file_path": draw(_PATH),
                    "old_string": draw(_TEXT),
                    "new_string": draw(_TEXT),
                }
            )
            fn = {"name": "bash" if kind == "bash" else "Edit", "arguments": json.dumps(args)}
            call = {"id": f"c{i}", "type": "function", "function": fn}
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{i}", "content": draw(_OUTPUTS)},
            ]
    return messages


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["Files Changed", "Errors", "Tests", "Decisions"]),
                  st.lists(_TEXT.map(lambda t: f"- {t}"), max_size=30)),
        max_size=4,
    ),
    st.integers(0, 5000),
)  # fmt: skip
def test_rendered_sections_never_exceed_their_budget(
    drawn: list[tuple[str, list[str]]], budget: int
) -> None:
    found = [Section(h, tuple(lines)) for h, lines in dict(drawn).items() if lines]
    assert len(render(found, budget)) <= max(budget, 0) or not found


@settings(max_examples=100, deadline=None)
@given(conversations(), st.integers(2000, 9000))
def test_the_extractive_summary_stays_within_its_limit_and_validates(
    messages: list[Msg], limit: int
) -> None:
    turns = parse(messages).turns
    summary = fallback_summary(turns, None, requests=["the latest request"], max_chars=limit)
    assert summary.startswith(BANNER) and summary.endswith(END_MARKER)
    assert problems(summary, limit, ["the latest request"]) == []
    assert len(summary) <= limit


@settings(max_examples=100, deadline=None)
@given(conversations())
def test_reading_the_facts_of_any_conversation_never_fails(messages: list[Msg]) -> None:
    for section in sections(parse(messages).turns):
        assert section.lines and all(line.startswith("- ") for line in section.lines)

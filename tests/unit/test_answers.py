"""A model's answer read and checked: its schema, its line ranges, the summary built from it."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tersify.contract import FallbackReason, LineRange, PendingSummary, ToolType
from tersify.errors import ProviderError
from tersify.worker.model.providers import Completion
from tersify.worker.summarize.answers import (
    FULL_OUTPUT_NOTE,
    MAX_QUOTES,
    answer_shape,
    compose,
    read_answer,
)
from tersify.worker.summarize.prompts import SummaryPrompt, build_request
from tersify.worker.summarize.view import ModelView
from tests.fakemodel.formats import openai_format_problem

LINES = [f"step {n} ok" for n in range(1, 3001)]
LINES[1499] = "error: could not read /etc/app.yml (permission denied)"
_LABEL = re.compile(r"^(\d+)(?:#[0-9a-f]{2})?\|(.*)$", re.DOTALL)


def prompt_for(
    output: str, tool_type: ToolType = ToolType.COMMAND_OUTPUT, **fields: Any
) -> SummaryPrompt:
    fields.setdefault("tool_name", "bash")
    job = PendingSummary.build(deadline_seconds=30, session_id="s", output=output, **fields)
    return build_request(job, tool_type, max_input_chars=4000, max_summary_chars=800)


SMALL = prompt_for("\n".join(LINES[:40]))
CUT = prompt_for("\n".join(LINES), query="why did it stop")


def said(data: Any) -> Completion:
    return Completion(text="", model="m", data=data)


def refusal(prompt: SummaryPrompt, data: Any) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        read_answer(said(data), prompt.shape, prompt.view)
    return caught.value


def test_each_types_schema_is_one_strict_structured_output_schema() -> None:
    for tool_type in ToolType:
        form = answer_shape(tool_type).answer_format()
        body = {
            "messages": [],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": form.name, "schema": dict(form.schema), "strict": True},
            },
        }
        assert openai_format_problem(body) is None, tool_type
        flag = "needs_full_output" in form.schema["properties"]
        assert flag is (
            tool_type in {ToolType.FILE_CONTENT, ToolType.STRUCTURED_DATA, ToolType.WEB_CONTENT}
        )


def test_a_valid_answer_reads_as_prose_and_index_ranges() -> None:
    answer = read_answer(
        said({"summary": "All steps ok.", "quotes": ["3-4"]}),
        SMALL.shape,
        SMALL.view,
    )
    assert answer.prose == ("All steps ok.",) and answer.spans == (range(2, 4),)


@pytest.mark.parametrize(
    ("quotes", "says"),
    [
        (["0-2"], "quote 1 (0-2): the output has no such line (its lines are 1-40)"),
        (["39-41"], "no such line"),
        (["5-3"], "the start is after the end"),
        (["1-5", "5-6"], "quotes 1 and 2 overlap"),
        (["3", " 3 "], "quotes 1 and 2 overlap"),
        ([3], 'quote 1 must be a line number "N" or a range "FIRST-LAST"'),
        (["L3-L4"], 'quote 1 must be a line number "N"'),
        (["3:4"], 'quote 1 must be a line number "N"'),
        (["٣"], 'quote 1 must be a line number "N"'),
        ({"3": "4"}, '"quotes" must be a list'),
        ([str(n) for n in range(1, MAX_QUOTES + 2)], f"give at most {MAX_QUOTES}"),
    ],
)
def test_ranges_outside_the_output_reversed_overlapping_or_mistyped_are_refused(
    quotes: Any, says: str
) -> None:
    error = refusal(SMALL, {"summary": "x", "quotes": quotes})
    assert error.reason is FallbackReason.MALFORMED and says in error.detail


def test_a_range_over_lines_the_cut_left_out_is_refused() -> None:
    assert CUT.view.truncated and 1499 in CUT.view.seen and 700 not in CUT.view.seen
    ok = read_answer(said({"summary": "x", "quotes": ["1500"]}), CUT.shape, CUT.view)
    assert ok.spans == (range(1499, 1500),)
    error = refusal(CUT, {"summary": "x", "quotes": ["690-710"]})
    assert "line 690 was not shown to you" in error.detail


def test_fields_of_the_wrong_type_or_missing_are_refused() -> None:
    assert '"summary" must be a string' in refusal(SMALL, {"quotes": []}).detail
    assert '"summary" must be a string' in refusal(SMALL, {"summary": 3, "quotes": []}).detail
    assert '"quotes" must be a list' in refusal(SMALL, {"summary": "x"}).detail
    web = prompt_for("\n".join(LINES[:40]), ToolType.WEB_CONTENT)
    flag = {"summary": "x", "quotes": [], "needs_full_output": "yes"}
    assert "true or false" in refusal(web, flag).detail


def test_an_answer_with_neither_prose_nor_quotes_is_empty() -> None:
    assert refusal(SMALL, {"summary": "  ", "quotes": []}).reason is FallbackReason.EMPTY
    with pytest.raises(ProviderError) as caught:
        read_answer(Completion(text="", model="m"), SMALL.shape, SMALL.view)
    assert caught.value.reason is FallbackReason.EMPTY


@pytest.mark.parametrize(
    "text",
    [
        '{"summary": "fine", "quotes": []}',
        'Here it is:\n```json\n{"summary": "fine", "quotes": []}\n```',
        'Sure. {"summary": "fine", "quotes": []} Done.',
    ],
)
def test_a_plain_text_answer_is_read_for_its_json_object(text: str) -> None:
    answer = read_answer(Completion(text=text, model="m"), SMALL.shape, SMALL.view)
    assert answer.prose == ("fine",)


def test_text_that_holds_no_json_object_is_malformed() -> None:
    for text in ("All steps passed.", '["summary"]', '{"summary": "cut off'):
        with pytest.raises(ProviderError) as caught:
            read_answer(Completion(text=text, model="m"), SMALL.shape, SMALL.view)
        assert caught.value.reason is FallbackReason.MALFORMED


def test_the_summary_is_the_prose_then_the_quoted_lines_exactly() -> None:
    answer = read_answer(
        said({"summary": "Stopped at step 1500.", "quotes": ["1500"]}),
        CUT.shape,
        CUT.view,
    )
    assert compose(answer, CUT.view, 1200) == (
        "Stopped at step 1500.\n1500|error: could not read /etc/app.yml (permission denied)"
    )


def test_a_files_quotes_join_its_relevant_range_between_before_and_after() -> None:
    source = [f"def f{n}(): return {n}" for n in range(1, 61)]
    prompt = prompt_for(
        "\n".join(source),
        ToolType.FILE_CONTENT,
        tool_name="read",
        relevant_lines=LineRange(start=30, end=31),
    )
    data = {
        "before": "f1 to f29.",
        "after": "none",
        "quotes": ["2"],
        "needs_full_output": True,
    }
    text = compose(read_answer(said(data), prompt.shape, prompt.view), prompt.view, 1200)
    lines = text.split("\n")
    assert lines[0] == "f1 to f29."
    assert lines[1].startswith("2#") and lines[1].endswith("|def f2(): return 2")
    assert lines[2] == "… 27 lines …"
    assert [line.split("|", 1)[1] for line in lines[3:5]] == [source[29], source[30]]
    assert lines[5:] == [FULL_OUTPUT_NOTE]


def test_a_zero_quote_budget_keeps_the_prose_and_a_files_range_only() -> None:
    answer = read_answer(said({"summary": "x", "quotes": ["1-2"]}), SMALL.shape, SMALL.view)
    assert compose(answer, SMALL.view, 0) == "x"


QUOTE_BUDGET = 300
ONE_LINE = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"))


@st.composite
def ranges(draw: st.DrawFn, view: ModelView) -> list[str]:
    """Line ranges as a model may give them: mostly lines it was shown, in order and apart;
    some out of bounds, reversed, overlapping or over lines it was not shown."""
    numbers = view.source.numbers
    if draw(st.booleans()) and view.seen:
        seen = sorted(numbers[i] for i in view.seen)
        picked = sorted(set(draw(st.lists(st.sampled_from(seen), max_size=2 * MAX_QUOTES))))
    else:
        top = numbers[-1] if numbers else 0
        picked = draw(st.lists(st.integers(-1, top + 2), max_size=2 * MAX_QUOTES + 4))
    pairs = zip(picked[::2], picked[1::2], strict=False)
    return [f"{a}-{b}" if a != b else str(a) for a, b in pairs]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(ONE_LINE, max_size=50), min_size=2, max_size=120),
    st.data(),
    st.text(
        st.characters(
            codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="|"
        ),
        max_size=120,
    ),
    st.sampled_from([ToolType.COMMAND_OUTPUT, ToolType.FILE_CONTENT]),
)
def test_whatever_ranges_are_accepted_the_quotes_are_the_outputs_lines_within_the_limits(
    lines: list[str], data: st.DataObject, prose: str, tool_type: ToolType
) -> None:
    output = "\n".join(lines)
    job = PendingSummary.build(deadline_seconds=30, session_id="s", tool_name="read", output=output)
    prompt = build_request(
        job,
        tool_type,
        max_input_chars=2000,
        max_summary_chars=800,
        max_verbatim_chars=400,
        max_quote_chars=QUOTE_BUDGET,
    )
    source, view = prompt.view.source, prompt.view
    fields: dict[str, Any] = dict.fromkeys(prompt.shape.prose, prose)
    fields["quotes"] = data.draw(ranges(view))
    try:
        answer = read_answer(said(json.loads(json.dumps(fields))), prompt.shape, view)
    except ProviderError:
        return  # refused: nothing is quoted
    text = compose(answer, view, QUOTE_BUDGET)
    prose_lines = [part for part in answer.prose if part and part.lower().rstrip(".") != "none"]
    block = [line for line in text.split("\n") if line not in prose_lines]
    for line in block:
        labelled = _LABEL.match(line)
        if labelled is None:
            assert re.fullmatch(r"… \d+ lines? …|", line), line
            continue
        number, body = int(labelled.group(1)), labelled.group(2)
        index = source.index(number)
        assert index is not None and body == source.lines[index]  # byte for byte
        if tool_type is ToolType.COMMAND_OUTPUT:
            assert body == output.split("\n")[number - 1]  # the output's own line
        assert index in view.seen
    fixed = len(view.fixed.text(source))
    assert len("\n".join(block)) <= fixed + QUOTE_BUDGET
    assert len(text) <= 800 + fixed + QUOTE_BUDGET + 2

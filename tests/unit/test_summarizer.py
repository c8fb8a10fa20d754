"""The summarizer's model path through the loopback fake, in both wire formats: answers that
quote by line number, refusals sent back once with the reason, the fallback after that."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from tersify.contract import FallbackReason, LineRange, Method, ToolType
from tersify.settings import Settings
from tersify.worker.model.providers import AnthropicProvider, OpenAIProvider, make_provider
from tersify.worker.shrink.hashlines import hashline
from tersify.worker.summarize.answers import FULL_OUTPUT_NOTE
from tersify.worker.summarize.summarizer import Outcome
from tests.fakemodel import (
    Behaviour,
    FakeModelServer,
    RecordedRequest,
    answer,
    empty,
    ok,
    verbatim,
)
from tests.summaries import provider_on, summarize_once

Kind = Literal["anthropic", "openai"]
KINDS: list[Kind] = ["anthropic", "openai"]
LOG = [f"tests/test_app.py::test_case_{n} PASSED" for n in range(1, 301)]
LOG[199] = "tests/test_app.py::test_login FAILED"
LOG[200] = "E   AssertionError: expected 200, got 401 from /api/login"
LOG.append("=========== 1 failed, 299 passed in 4.21s ===========")
OUTPUT = "\n".join(LOG)
SETTINGS = Settings(
    model_window_chars=4000, model_read_max_chars=4000, model_retry_base_seconds=0.0
)
Summarize = Callable[..., Outcome]


def line(number: int) -> str:
    return f"{number}|{LOG[number - 1]}"


def quotes(*spans: tuple[int, int]) -> list[str]:
    return [f"{a}-{b}" for a, b in spans]


@pytest.fixture(params=KINDS)
def run(request: pytest.FixtureRequest, fake_model: FakeModelServer) -> Iterator[Summarize]:
    """Summarize a job through a provider of the parametrized kind on the fake."""
    kind: Kind = request.param
    made: list[AnthropicProvider | OpenAIProvider] = []

    def go(
        output: str = OUTPUT,
        tool_type: ToolType = ToolType.COMMAND_OUTPUT,
        *,
        settings: Settings = SETTINGS,
        response_format: str = "json_schema",
        **fields: Any,
    ) -> Outcome:
        openai = {"response_format": response_format} if kind == "openai" else {}
        provider = provider_on(fake_model, kind, pool_size=1, **openai)
        made.append(provider)
        return summarize_once(
            provider, output, settings, deadline_seconds=20, tool_type=tool_type, **fields
        )

    go.kind = kind  # type: ignore[attr-defined]
    yield go
    for provider in made:
        provider.close()


def correction_of(request: RecordedRequest) -> tuple[Any, str]:
    """The refused answer and the refusal a retried request carries, in either wire format."""
    said, told = request.body["messages"][-2:]
    assert (said["role"], told["role"]) == ("assistant", "user")
    if isinstance(told["content"], list):  # Anthropic: the forced tool call and its error result
        (call,), (result,) = said["content"], told["content"]
        assert result == {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "is_error": True,
            "content": result["content"],
        }
        return call["input"], result["content"]
    return json.loads(said["content"]), told["content"]


def test_a_valid_answer_yields_the_prose_then_the_exact_lines(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(
        answer(
            {
                "summary": "1 of 300 tests fails: test_login.",
                "quotes": quotes((200, 201), (301, 301)),
            }
        )
    )
    outcome = run()
    assert outcome.method is Method.LLM, outcome.fallback_detail
    assert outcome.text == "\n".join(
        ["1 of 300 tests fails: test_login.", line(200), line(201), "… 99 lines …", line(301)]
    )
    (sent,) = fake_model.requests
    assert "200|tests/test_app.py::test_login FAILED" in json.dumps(sent.body)
    assert outcome.output_tokens is not None and outcome.output_tokens < 40


def test_the_request_asks_for_the_answer_in_each_apis_structured_form(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    run()
    (sent,) = fake_model.requests
    if run.kind == "anthropic":  # type: ignore[attr-defined]
        (tool,) = sent.body["tools"]
        assert sent.body["tool_choice"] == {"type": "tool", "name": tool["name"]}
        schema = tool["input_schema"]
    else:
        fmt = sent.body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        schema = fmt["json_schema"]["schema"]
    assert schema["required"] == ["summary", "quotes"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (quotes((300, 305)), "quote 1 (300-305): the output has no such line (its lines are 1-"),
        (quotes((200, 201), (201, 201)), "quotes 1 and 2 overlap"),
        (quotes((150, 150)), "line 150 was not shown to you"),
    ],
    ids=["out-of-bounds", "overlapping", "unseen"],
)
def test_bad_ranges_are_refused_and_sent_back_once_with_the_reason(
    run: Summarize, fake_model: FakeModelServer, bad: list[dict[str, int]], says: str
) -> None:
    refused = {"summary": "test_login fails.", "quotes": bad}
    fixed = {"summary": "test_login fails.", "quotes": quotes((200, 200))}
    fake_model.script([answer(refused), answer(fixed)])
    with capture_logs() as logs:
        outcome = run()
    assert outcome.method is Method.LLM
    assert outcome.text == "test_login fails.\n" + line(200)
    first, second = fake_model.requests
    replayed, told = correction_of(second)
    assert replayed == refused and says in told
    assert second.body["messages"][0] == first.body["messages"][0]
    assert [e["detail"] for e in logs if e["event"] == "summary_answer_refused"] == [
        next(e["detail"] for e in logs if e["event"] == "summary_answer_refused")
    ]
    assert outcome.input_tokens is not None and outcome.input_tokens > 2 * 1000


def test_a_malformed_answer_is_retried_once_then_falls_back(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(verbatim('{"summary": "cut off mid-answer'))
    outcome = run()
    assert (outcome.method, outcome.fallback_reason) == (Method.FALLBACK, FallbackReason.MALFORMED)
    assert outcome.fallback_detail == "the answer is not the JSON object asked for"
    assert fake_model.request_count == 2
    assert "tests/test_app.py::test_login FAILED" in outcome.text


def test_an_answer_refused_twice_falls_back_with_the_second_reason(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.script([answer({"summary": "x", "quotes": quotes((0, 1))}), empty()])
    outcome = run()
    assert (outcome.method, outcome.fallback_reason) == (Method.FALLBACK, FallbackReason.EMPTY)
    assert fake_model.request_count == 2


def test_an_ungrounded_answer_is_sent_back_with_the_claims_not_found(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    invented = {"summary": "Fails in src/nowhere.py:123 since v9.9.9.", "quotes": []}
    fake_model.script([answer(invented), answer({"summary": "1 test fails.", "quotes": []})])
    outcome = run()
    assert outcome.text == "1 test fails."
    _, told = correction_of(fake_model.requests[1])
    assert "src/nowhere.py:123" in told and "v9.9.9" in told


def test_prose_over_the_cap_is_refused_but_quotes_do_not_count_against_it(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    settings = SETTINGS.model_copy(update={"max_summary_chars": 60})
    fake_model.script(
        [
            answer({"summary": "x" * 61, "quotes": []}),
            answer({"summary": "1 fails.", "quotes": quotes((200, 201), (301, 301))}),
        ]
    )
    outcome = run(settings=settings)
    assert outcome.method is Method.LLM and len(outcome.text) > 60
    assert "the prose is 61 chars; the cap is 60" in correction_of(fake_model.requests[1])[1]


def test_quotes_past_the_quote_budget_are_cut_and_counted(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    settings = SETTINGS.model_copy(update={"max_quote_chars": 100})
    fake_model.set_default(answer({"summary": "Head.", "quotes": quotes((1, 5))}))
    outcome = run(settings=settings)
    assert outcome.text == "\n".join(["Head.", line(1), line(2), "… 3 lines …"])


def test_a_file_answer_splices_the_relevant_range_and_its_quotes_between_its_parts(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    source = [f"def helper_{n}(value):\n    return value + {n}" for n in range(150)]
    lines = "\n".join(source).split("\n")
    fake_model.set_default(
        answer(
            {
                "before": "helper_0 to helper_48.",
                "after": "More helpers.",
                "quotes": quotes((1, 1)),
                "needs_full_output": False,
            }
        )
    )
    outcome = run(
        "\n".join(lines),
        ToolType.FILE_CONTENT,
        tool_name="read",
        relevant_lines=LineRange(start=99, end=104),
    )
    verbatim_range = [hashline(n, lines[n - 1]) for n in range(99, 105)]
    assert outcome.text == "\n".join(
        [
            "helper_0 to helper_48.",
            hashline(1, lines[0]),
            "… 97 lines …",
            *verbatim_range,
            "More helpers.",
        ]
    )


def test_an_answer_that_asks_for_the_whole_output_says_so_in_the_summary(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    records = [{"id": n, "owner": f"user{n}", "quota": n * 10} for n in range(200)]
    rows = "\n".join(json.dumps(record) for record in records)
    fake_model.set_default(
        answer({"summary": "200 quota records.", "quotes": [], "needs_full_output": True})
    )
    with capture_logs() as logs:
        outcome = run(rows, ToolType.STRUCTURED_DATA)
    assert outcome.text == "200 quota records.\n" + FULL_OUTPUT_NOTE
    assert any(e["event"] == "summary_needs_full_output" for e in logs)


def test_the_default_answer_of_the_fake_is_a_valid_structured_answer(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    outcome = run()
    assert outcome.method is Method.LLM, outcome.fallback_detail
    assert outcome.text.startswith("Summary: tests/test_app.py::test_case_1 PASSED")
    assert fake_model.request_count == 1


@pytest.mark.parametrize(
    ("response_format", "behaviour"),
    [
        ("json_object", answer({"summary": "test_login fails.", "quotes": quotes((200, 200))})),
        (
            "text",
            ok('Here:\n```json\n{"summary": "test_login fails.", "quotes": ["200"]}\n```'),
        ),
    ],
)
def test_an_openai_compatible_server_without_json_schema_is_asked_in_the_prompt(
    fake_model: FakeModelServer, response_format: str, behaviour: Behaviour
) -> None:
    fake_model.set_default(behaviour)
    settings = SETTINGS.model_copy(
        update={
            "openai_response_format": response_format,
            "openai_base_url": fake_model.openai_base_url,
            "openai_api_key": SecretStr("k"),
        }
    )
    provider = make_provider(settings, "openai", pool_size=1)
    assert provider is not None
    try:
        outcome = summarize_once(provider, OUTPUT, settings, deadline_seconds=20)
    finally:
        provider.close()
    assert outcome.text == "test_login fails.\n" + line(200)
    (sent,) = fake_model.requests
    asked = sent.body.get("response_format")
    wanted = "json_object" if response_format == "json_object" else None
    assert (asked or {}).get("type") == wanted
    system = sent.body["messages"][0]["content"]
    assert "JSON object" in system and "The JSON object's schema: " in system

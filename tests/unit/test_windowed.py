"""An output past one request's window, read in windows through the loopback fake in both wire
formats: line-aligned windows, each answer checked against its own lines, a merge whose quotes
are the output's lines exactly, a failed window covered, the ceiling kept and the rest named."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, Literal

import pytest

from tersify.contract import (
    FallbackReason,
    JobOptions,
    LineRange,
    Method,
    ToolType,
)
from tersify.settings import Settings
from tersify.worker.model.providers import AnthropicProvider, OpenAIProvider
from tersify.worker.shrink.hashlines import hashline
from tersify.worker.summarize.summarizer import Outcome
from tests.fakemodel import FakeModelServer, RecordedRequest, answer, quoting, status
from tests.summaries import provider_on, summarize_once, summarize_then_close

Kind = Literal["anthropic", "openai"]
LOG = [f"tests/test_mod_{n // 50}.py::test_case_{n} PASSED [{n % 100:3d}%]" for n in range(1, 1201)]
for n in (130, 610, 1050):
    LOG[n - 1] = f"tests/test_mod_{n // 50}.py::test_case_{n} FAILED (assert {n} == 0)"
LOG.append("=========== 3 failed, 1197 passed in 42.10s ===========")
OUTPUT = "\n".join(LOG)
SETTINGS = Settings(model_window_chars=12_000, model_max_attempts=1, model_retry_base_seconds=0)
Summarize = Callable[..., Outcome]
_BLOCK = re.compile(r"<(tool_output|window_answers)_[0-9a-f]+>\n(.*?)\n</\1_[0-9a-f]+>", re.DOTALL)


@pytest.fixture(params=["anthropic", "openai"])
def run(request: pytest.FixtureRequest, fake_model: FakeModelServer) -> Iterator[Summarize]:
    """Summarize a job through a provider of the parametrized wire format on the fake."""
    kind: Kind = request.param
    made: list[AnthropicProvider | OpenAIProvider] = []

    def go(
        output: str = OUTPUT,
        *,
        settings: Settings = SETTINGS,
        tool_type: ToolType = ToolType.COMMAND_OUTPUT,
        **fields: Any,
    ) -> Outcome:
        provider = provider_on(fake_model, kind, pool_size=8)
        made.append(provider)
        return summarize_once(
            provider, output, settings, deadline_seconds=60, tool_type=tool_type, **fields
        )

    yield go
    for provider in made:
        provider.close()


def user_text(request: RecordedRequest) -> str:
    """The user message of a request in either wire format."""
    messages = request.body["messages"]
    first = next(m for m in messages if m["role"] == "user")
    content = first["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def block(request: RecordedRequest) -> tuple[str, str]:
    """The fenced block a request reads: its name and its text."""
    found = _BLOCK.search(user_text(request))
    assert found is not None
    return found.group(1), found.group(2)


def numbered(text: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(r"^(\d+)\|", text, re.MULTILINE)]


def windows_and_merge(fake: FakeModelServer) -> tuple[list[str], list[str]]:
    parts = [block(r) for r in fake.requests]
    return [t for n, t in parts if n == "tool_output"], [t for n, t in parts if n != "tool_output"]


def test_each_window_holds_whole_lines_and_together_they_read_every_line(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    outcome = run()
    assert outcome.method is Method.LLM, outcome.fallback_detail
    windows, merges = windows_and_merge(fake_model)
    assert len(windows) >= 4 and len(merges) == 1
    read: set[int] = set()
    for text in windows:
        assert len(text) <= SETTINGS.model_window_chars
        numbers = numbered(text)
        assert numbers == list(range(numbers[0], numbers[-1] + 1))
        for line in text.split("\n"):  # every line whole, as the output has it
            number, shown = line.split("|", 1)
            assert shown == LOG[int(number) - 1]
        read |= set(numbers)
    assert read == set(range(1, len(LOG) + 1))
    assert [w.read_by for w in outcome.windows] == ["model"] * len(windows)
    assert outcome.unread_lines == ()


def test_the_merge_reads_the_answers_not_the_output_and_its_quotes_are_the_lines_exactly(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED", prose="Three tests failed."))
    outcome = run()
    _, (merge,) = windows_and_merge(fake_model)
    assert len(merge) < len(OUTPUT) // 10
    assert "PASSED" not in merge  # only the lines the windows quoted
    failed = [f"{n}|{LOG[n - 1]}" for n in (130, 610, 1050)]
    assert all(line in merge for line in failed)
    assert outcome.text.startswith("Three tests failed.")
    for line in failed:
        assert line in outcome.text.split("\n")


def test_a_window_quoting_a_line_it_was_not_shown_is_told_so_and_asked_again(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    # the window holding line 700 answers with line 5, which only the first one shows
    fake_model.add_rule("test_case_700 PASSED", answer({"summary": "one fails", "quotes": ["5"]}))
    outcome = run()
    refused = [r for r in fake_model.requests if "That answer was refused" in json.dumps(r.body)]
    assert len(refused) == 1, "the refused window is sent back once"
    assert "line 5 is not in the part you were shown" in json.dumps(refused[0].body)
    covered = [w for w in outcome.windows if w.read_by == "extractive"]
    assert len(covered) == 1 and covered[0].lines.start <= 700 <= covered[0].lines.end


def test_a_window_that_fails_is_covered_by_the_extractive_shrink_of_its_lines(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    fake_model.add_rule("are shown part 2,", status(500))
    outcome = run()
    assert outcome.method is Method.LLM
    second = outcome.windows[1]
    assert second.read_by == "extractive"
    assert all(w.read_by == "model" for i, w in enumerate(outcome.windows) if i != 1)
    _, (merge,) = windows_and_merge(fake_model)
    assert "no model could read it (server_error)" in merge
    inside = [n for n in numbered(merge) if second.lines.start <= n <= second.lines.end]
    assert inside, "the merge reads the lines the extractive shrink kept of the window"
    assert f"lines {second.lines.start}-{second.lines.end} (server_error)" in outcome.text


def test_when_every_window_fails_the_job_falls_back(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(status(500))
    outcome = run()
    assert outcome.method is Method.FALLBACK
    assert outcome.fallback_reason is FallbackReason.SERVER_ERROR
    windows, merges = windows_and_merge(fake_model)
    assert len(windows) >= 4 and not merges


def test_when_the_merge_fails_the_windows_answers_make_the_summary(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED", prose="A test failed here."))
    fake_model.add_rule("Join the parts", status(500))  # the merge prompt alone
    outcome = run()
    assert outcome.method is Method.LLM
    assert "A test failed here." in outcome.text
    assert f"610|{LOG[609]}" in outcome.text.split("\n")


def test_past_the_ceiling_the_job_sends_no_more_and_names_the_lines_no_model_read(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    ceiling = 3 * SETTINGS.model_window_chars
    outcome = run(query="which tests failed", options=JobOptions(model_read_max_chars=ceiling))
    windows, _ = windows_and_merge(fake_model)
    assert sum(len(text) for text in windows) <= ceiling
    sizes = [len(text) for text in windows]  # the picked lines, shared out evenly
    assert len(sizes) <= 4 and min(sizes) > max(sizes) // 2
    assert outcome.unread_lines
    read = {n for text in windows for n in numbered(text)}
    for unread in outcome.unread_lines:
        assert not read & set(range(unread.start, unread.end + 1))
        assert f"{unread.start}-{unread.end}" in outcome.text
    assert "no model read lines" in outcome.text


def test_every_requests_tokens_and_cost_are_counted(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    priced = SETTINGS.model_copy(update={"model_prices": "m=1.0/5.0"})
    outcome = run(settings=priced)
    requests = fake_model.requests
    assert outcome.requests == len(requests) == len(outcome.windows) + 1
    sent = sum(len(json.dumps(r.body)) for r in requests)
    assert outcome.input_tokens is not None and outcome.input_tokens > sent // 8
    assert outcome.output_tokens is not None and outcome.output_tokens > 0
    usd = (outcome.input_tokens * 1.0 + outcome.output_tokens * 5.0) / 1e6
    assert outcome.cost_usd == pytest.approx(usd)


def test_an_output_that_fits_one_window_is_one_request_as_before(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    outcome = run("\n".join(LOG[:100]))
    assert outcome.method is Method.LLM
    assert len(fake_model.requests) == 1 and outcome.windows == ()


def test_an_output_under_the_window_that_its_numbers_push_over_is_read_whole_not_cut(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    lines = [f"entry {i:05d} " + "x" * 80 for i in range(530)]
    lines[300] = "entry 00300 FAILED: the write was refused"
    output = "\n".join(lines)
    settings = SETTINGS.model_copy(update={"model_window_chars": 50_000})
    assert len(output) < 50_000
    outcome = run(output, settings=settings)
    windows, merges = windows_and_merge(fake_model)
    assert len(windows) == 2 and len(merges) == 1
    assert {n for text in windows for n in numbered(text)} == set(range(1, 531))
    assert not any("output cut" in json.dumps(r.body) for r in fake_model.requests)
    assert f"301|{lines[300]}" in outcome.text.split("\n")


@pytest.mark.parametrize("chars", [30_000, 70_000])
def test_a_context_window_smaller_than_one_window_makes_more_windows_not_cut_ones(
    chars: int, fake_model: FakeModelServer
) -> None:
    fake_model.set_default(quoting("FAILED"))
    output = "\n".join(LOG)[:chars]
    settings = SETTINGS.model_copy(update={"model_window_chars": 50_000})
    # about 15,000 chars of user message beside the rest
    provider = provider_on(fake_model, "openai", pool_size=8, context_tokens=6000)
    outcome = summarize_then_close(provider, output, settings, deadline_seconds=60)
    assert outcome.method is Method.LLM, outcome.fallback_detail
    windows, merges = windows_and_merge(fake_model)
    assert len(windows) >= chars // 16_000 and len(merges) == 1
    assert all(len(text) < 16_000 for text in windows)
    lines = len(output.split("\n"))
    assert {n for text in windows for n in numbered(text)} == set(range(1, lines + 1))
    assert not any("output cut" in json.dumps(r.body) for r in fake_model.requests)


def test_windows_a_server_refuses_for_its_context_are_asked_again_in_smaller_ones(
    fake_model: FakeModelServer,
) -> None:
    refusal = (
        "This model's maximum context length is 6,000 tokens. However, you requested 19000 "
        "tokens (18500 in the messages, 500 in the completion)."
    )
    output = "\n".join(LOG)[:70_000]
    settings = SETTINGS.model_copy(update={"model_window_chars": 50_000})
    fake_model.set_default(quoting("FAILED"))
    fake_model.script([status(400, message=refusal), status(400, message=refusal)])
    provider = provider_on(fake_model, "openai", pool_size=8, key="sk-test-window")
    outcome = summarize_then_close(provider, output, settings, deadline_seconds=60)
    assert outcome.method is Method.LLM, outcome.fallback_detail
    first, *again = [block(r)[1] for r in fake_model.requests if "tool_output" in user_text(r)]
    assert len(first) > 30_000  # refused: a window the size of the setting
    windows = again[1:]  # the second refused window, then the windows that fit
    assert len(windows) > 2 and all(len(text) < 16_000 for text in windows)
    assert all(w.read_by == "model" for w in outcome.windows)


def test_a_long_file_is_read_in_windows_and_merged_around_its_relevant_range(
    run: Summarize, fake_model: FakeModelServer
) -> None:
    source = [f"def handler_{n}(request):\n    return respond(request, {n})\n" for n in range(900)]
    text = "".join(source)
    fake_model.set_default(quoting(r"def handler_(7|450)\("))
    fake_model.add_rule(
        "Join the parts",
        quoting(
            r"def handler_(7|450)\(", prose="Handlers, one a line.", fields=("before", "after")
        ),
    )
    job_lines = LineRange(start=1200, end=1210)
    outcome = run(text, tool_name="read", relevant_lines=job_lines, tool_type=ToolType.FILE_CONTENT)
    assert outcome.method is Method.LLM, outcome.fallback_detail
    assert len(outcome.windows) >= 2
    lines = outcome.text.split("\n")
    assert lines[0] == "Handlers, one a line." and lines[-1] == "Handlers, one a line."
    file_lines = text.split("\n")
    for number in (15, 901, *range(1200, 1211)):  # quoted or relevant: exact hashlines
        assert hashline(number, file_lines[number - 1]) in lines, number

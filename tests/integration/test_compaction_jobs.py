"""Compaction jobs through a real worker and Redis, against the fake model in both wire formats,
with the model failing and recovering under the same policy as summary jobs."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from tersify.chat.compaction import CompactionMethod
from tersify.client import Producer
from tersify.contract import FallbackReason
from tersify.settings import Settings
from tersify.store import keys
from tersify.worker.compaction.summary import BANNER, END_MARKER
from tersify.worker.processes.worker_process import WorkerProcess
from tersify.worker.store.sessionlog import read_entries, session_file
from tests.fakemodel import FakeModelServer, status
from tests.helpers import free_port, wait_for
from tests.integration.conftest import provider_env
from tests.integration.test_metrics import scrape, total

StartWorker = Callable[..., WorkerProcess]
LATEST_REQUEST = "Now update CHANGELOG.md with the fix, please."


PYTEST_LOG = "\n".join(f"tests/test_totals.py::test_case_{i} PASSED" for i in range(80))


def openai_history() -> list[dict[str, Any]]:
    """Twelve OpenAI-style messages with two tool round trips, the last request still open."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -x"})},
    }
    call2 = {
        "id": "call_2",
        "type": "function",
        "function": {"name": "read", "arguments": json.dumps({"path": "totals.py"})},
    }
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "The invoice tests fail. Find out why and fix them."},
        {"role": "assistant", "content": "Running the tests.", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": f"{PYTEST_LOG}\nFAILED tests/test_totals.py::test_parse_amount\n1 failed",
        },
        {"role": "assistant", "content": "Reading the parser.", "tool_calls": [call2]},
        {"role": "tool", "tool_call_id": "call_2", "content": "def parse_amount(text): ..."},
        {"role": "assistant", "content": "parse_amount ignores the European decimal comma."},
        {"role": "user", "content": "Fix it without changing the public API."},
        {"role": "assistant", "content": "Fixed invoicing/totals.py; all 73 tests pass."},
        {"role": "user", "content": "Thanks. Anything else failing?"},
        {"role": "assistant", "content": "No, the suite is green."},
        {"role": "user", "content": LATEST_REQUEST},
    ]


def anthropic_history() -> list[dict[str, Any]]:
    """The same conversation in the Anthropic Messages shape."""
    return [
        {"role": "user", "content": "The invoice tests fail. Find out why and fix them."},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running the tests."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "bash",
                    "input": {"command": "pytest"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": f"{PYTEST_LOG}\nFAILED tests/test_totals.py::test_parse_amount",
                }
            ],
        },
        {"role": "assistant", "content": "parse_amount ignores the European decimal comma."},
        {"role": "user", "content": "Fix it without changing the public API."},
        {"role": "assistant", "content": "Fixed invoicing/totals.py; all 73 tests pass."},
        {"role": "user", "content": "Thanks. Anything else failing?"},
        {"role": "assistant", "content": "No, the suite is green."},
        {"role": "user", "content": "Check the linter too."},
        {"role": "assistant", "content": "ruff reports no findings."},
        {"role": "user", "content": LATEST_REQUEST},
    ]


def orphans(messages: list[dict[str, Any]]) -> tuple[set[str], set[str]]:
    """(calls without a result, results without a call), in either shape."""
    calls: set[str] = set()
    results: set[str] = set()
    for m in messages:
        calls |= {c["id"] for c in m.get("tool_calls") or []}
        if m.get("role") == "tool":
            results.add(m["tool_call_id"])
        if isinstance(m.get("content"), list):
            for block in m["content"]:
                if block.get("type") == "tool_use":
                    calls.add(block["id"])
                if block.get("type") == "tool_result":
                    results.add(block["tool_use_id"])
    return calls - results, results - calls


@pytest.mark.parametrize(
    ("provider", "history", "path"),
    [
        ("openai", openai_history, "/v1/chat/completions"),
        ("anthropic", anthropic_history, "/v1/messages"),
    ],
)
def test_a_compaction_job_is_summarized_by_the_model_in_both_wire_formats(
    provider: str,
    history: Callable[[], list[dict[str, Any]]],
    path: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider))
    messages = history()
    handle = producer.compact(session_id="c1", messages=messages, protect_first=1, protect_last=2)
    result = handle.wait(30)
    assert result.method is CompactionMethod.LLM
    assert result.provider == provider
    assert [r.path for r in fake_model.requests] == [path]
    assert result.messages[0] == messages[0]
    assert result.messages[-2:] == messages[-2:]
    assert len(result.messages) == result.messages_after < result.messages_before == len(messages)
    assert result.summary.count(BANNER) == 1
    assert LATEST_REQUEST in result.summary  # the Active Task quotes the real latest request
    assert result.summary.rstrip().endswith(END_MARKER)
    assert orphans(result.messages) == (set(), set())


def test_a_failing_model_gives_the_extractive_fallback_summary_not_an_error(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    fake_model.set_default(status(500))
    start_worker(**provider_env(fake_model, "anthropic"))
    result = producer.compact(session_id="c2", messages=openai_history(), protect_last=2).wait(30)
    assert result.method is CompactionMethod.FALLBACK
    assert result.fallback_reason is FallbackReason.SERVER_ERROR
    assert result.summary.startswith(BANNER)
    assert "tests/test_totals.py" in result.summary  # files seen survive in the fallback
    assert LATEST_REQUEST in result.summary
    assert orphans(result.messages) == (set(), set())


ANTHROPIC, OPENAI = "/v1/messages", "/v1/chat/completions"


def test_compaction_retries_trips_the_shared_breaker_and_fails_over_as_a_summary_does(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer, redis_client: Any
) -> None:
    port = free_port()
    start_worker(
        **provider_env(fake_model, "anthropic"),
        failover_provider="openai",
        model_max_attempts="2",
        model_retry_base_seconds="0",
        circuit_failure_threshold="2",
        circuit_cooldown_seconds="1",
        metrics_port=str(port),
    )
    runs: Counter[str] = Counter()

    def settled() -> None:
        # A success resets the failure count behind the job; wait for it before the next phase.
        circuit = keys.circuit("anthropic")
        wait_for(lambda: not redis_client.hget(circuit, "failures"), "the failure count reset")

    def run(kind: str) -> tuple[str, str | None, list[str]]:
        """One job of ``kind``: (method, provider, the model API paths it called)."""
        seen = fake_model.request_count
        number = sum(runs.values())
        runs[kind] += 1
        if kind == "summary":
            output = f"{PYTEST_LOG}\nrun {number}"  # a new output each time: no cache hit
            done: Any = producer.submit(session_id=f"s{number}", tool_name="bash", output=output)
        else:
            done = producer.compact(session_id=f"c{number}", messages=openai_history())
        result = done.wait(30)
        paths = [r.path for r in fake_model.requests[seen:]]
        return str(result.method), result.provider, paths

    # A 503 then an answer: one retry, the same provider, for either kind of job.
    for kind in ("summary", "compaction"):
        settled()
        fake_model.script([status(503)])
        assert run(kind) == ("llm", "anthropic", [ANTHROPIC, ANTHROPIC])
    # Anthropic down: two failures open its circuit and the failover answers; the circuit is
    # shared, so the other kind of job goes straight to the failover.
    for first, second in (("compaction", "summary"), ("summary", "compaction")):
        settled()
        fake_model.add_rule("claude-haiku", status(503))
        assert run(first) == ("llm", "openai", [ANTHROPIC, ANTHROPIC, OPENAI])
        assert run(second) == ("llm", "openai", [OPENAI])
        fake_model.reset()  # Anthropic recovers; after the cool-down a probe closes the circuit
        wait_for(lambda k=second: run(k)[1] == "anthropic", "the circuit to close", timeout=20)
    m = scrape(port)
    assert total(m, "tersify_compactions_total", method="llm", reason="none") == runs["compaction"]
    assert total(m, "tersify_compactions_total", method="fallback") == 0
    assert total(m, "tersify_jobs_total", method="llm") == runs["summary"]


def test_a_compaction_logs_its_messages_and_keeps_its_summary_for_the_next(
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
    settings: Settings,
    redis_client: Any,
) -> None:
    worker = start_worker(**provider_env(fake_model, "openai"))
    messages = openai_history()
    first = producer.compact(session_id="kept", messages=messages).wait(30)
    assert first.method is CompactionMethod.LLM
    entries = list(read_entries(session_file(settings.session_log_dir, "kept")))
    assert [(e["kind"], e["messages"]) for e in entries] == [("compaction", messages)]
    assert redis_client.ttl("tersify:compaction-summary:kept") > 0
    second = producer.compact(session_id="kept", messages=messages).wait(30)
    assert second.method is CompactionMethod.LLM
    prompt = str(fake_model.requests[-1].body)
    assert "previous_summary" in prompt  # the fenced block of the previous summary
    assert "Summary: " in prompt  # the first compaction's model text, folded in
    for job_id in (first.job_id, second.job_id):

        def events(j: str = job_id) -> list[str]:
            lines = worker.log().splitlines()
            found = [json.loads(x)["event"] for x in lines if x.startswith("{") and j in x]
            return [e for e in found if e.startswith("compaction")]

        wait_for(events, "the job's completion line")
        assert events() == ["compaction_completed"]  # one line per job


def test_a_conversation_under_the_minimum_comes_back_as_it_is_without_a_model_call(
    fake_model: FakeModelServer, start_worker: StartWorker, producer: Producer
) -> None:
    start_worker(**provider_env(fake_model, "openai"))
    messages = openai_history()[:9]
    result = producer.compact(session_id="short", messages=messages).wait(30)
    assert (result.method, result.passthrough_reason) == ("passthrough", "too_few_messages")
    assert result.messages == messages
    assert fake_model.request_count == 0


FACTS_ERROR = "TypeError: parse_amount() got an unexpected keyword argument 'locale'"


def agent_session(provider: str) -> list[dict[str, Any]]:
    """A coding session in ``provider``'s shape: an edit, a failing run, a fix, a passing run."""
    rounds = [
        ("Edit", {"file_path": "invoicing/totals.py", "old_string": "x",
                  "new_string": "def parse_amount(text, locale=None):"}, "edited"),
        ("Bash", {"command": "pytest -q tests/test_totals.py"},
         f"{PYTEST_LOG}\nE   {FACTS_ERROR}\n"
         f"FAILED tests/test_totals.py::test_comma - {FACTS_ERROR}\n1 failed"),
        ("Bash", {"command": "sed -i 's/locale=None/locale=\"de\"/' invoicing/api.py"}, ""),
        ("Bash", {"command": "pytest -q tests/test_totals.py"}, "73 passed in 0.4s"),
    ]  # fmt: skip
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "The invoice tests fail. Find out why and fix them."}
    ]
    for i, (name, arguments, output) in enumerate(rounds):
        if provider == "anthropic":
            use = {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": arguments}
            answer = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": output}
            messages += [
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [answer]},
            ]
        else:
            fn = {"name": name, "arguments": json.dumps(arguments)}
            call = {"id": f"call_{i}", "type": "function", "function": fn}
            messages += [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"call_{i}", "content": output},
            ]
    return [
        *messages,
        {"role": "assistant", "content": "Fixed: parse_amount takes a locale now."},
        {"role": "user", "content": "Thanks. Anything else failing?"},
        {"role": "assistant", "content": "No, the suite is green."},
        {"role": "user", "content": LATEST_REQUEST},
    ]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_model_compaction_carries_the_structural_sections_verbatim_in_both_wire_formats(
    provider: str,
    fake_model: FakeModelServer,
    start_worker: StartWorker,
    producer: Producer,
) -> None:
    start_worker(**provider_env(fake_model, provider))
    messages = agent_session(provider)
    handle = producer.compact(session_id="f1", messages=messages, protect_first=1, protect_last=2)
    result = handle.wait(30)
    assert result.method is CompactionMethod.LLM and result.provider == provider
    summary = result.summary
    assert "Summary: " in summary  # the model's own text (the fake's answer) is there
    for section in (
        '## Files Changed\n- invoicing/api.py: sed -i +`locale="de"`\n'
        "- invoicing/totals.py: edited (parse_amount) +`def parse_amount(text, locale=None):`",
        f"## Errors\n- [resolved] {FACTS_ERROR} ← `pytest -q tests/test_totals.py`",
        "## Tests\n- last run: 73 passed in 0.4s ← pytest -q tests/test_totals.py",
        "- passed (81): tests/test_totals.py::test_comma, tests/test_totals.py::test_case_0, ",
        "## Task State\n- request 1/1: Thanks. Anything else failing?",
    ):
        assert section in summary
    assert summary.index("Summary: ") < summary.index("## Files Changed")
    assert summary.rstrip().endswith(END_MARKER) and summary.count(BANNER) == 1
    sent = json.dumps(fake_model.requests[-1].body)
    assert "## Files Changed" in sent  # the model was shown the facts it writes around
    assert orphans(result.messages) == (set(), set())

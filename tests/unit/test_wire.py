"""The summary message: typed from producer to worker, and still read in its first version."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tersify.client.jobs import build_job
from tersify.contract import PendingSummary, ToolType
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store.wire import MESSAGE_VERSION, SummaryMessage, parse_message

SETTINGS = Settings()
DIGEST = "ab" * 32
WORDS = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40)


def job_of(**fields: Any) -> PendingSummary:
    return build_job(SETTINGS, **{"session_id": "s1", "tool_name": "grep", **fields})


def version_one(job: PendingSummary, token: int | None) -> dict[str, Any]:
    """A message as producers before version 2 published it: the job as a plain object."""
    header = job.model_dump(mode="json", exclude={"output"})
    return {"schema_version": 1, "job": header, "payload": DIGEST, "gate_token": token}


@given(
    output=st.text(st.characters(codec="utf-8"), min_size=1, max_size=300),
    command=st.none() | WORDS,
    query=st.none() | WORDS,
    tool_type=st.sampled_from(ToolType),
    token=st.none() | st.integers(1, 2**53),
)
def test_a_job_published_as_a_message_is_the_same_job_when_a_worker_joins_its_output(
    output: str, command: str | None, query: str | None, tool_type: ToolType, token: int | None
) -> None:
    job = job_of(output=output, command=command, query=query, relevant_lines=(2, 5))
    sent = SummaryMessage.for_job(job, DIGEST, token, tool_type).model_dump(mode="json")
    message = parse_message(sent)
    assert message.schema_version == MESSAGE_VERSION
    assert (message.tool_type, message.gate_token, message.payload) == (tool_type, token, DIGEST)
    assert message.job.with_output(job.output) == job
    assert "output" not in sent["job"]


def test_a_version_one_message_is_read_into_the_same_typed_job_without_a_tool_type() -> None:
    job = job_of(output="x" * 2000, options={"budget_chars": 500}, command="rg x")
    message = parse_message(version_one(job, 7))
    assert message.schema_version == 1
    assert message.tool_type is None  # the worker classifies the output itself
    assert message.gate_token == 7
    assert message.job.with_output(job.output) == job


def test_a_message_whose_job_breaks_the_contract_is_refused_with_the_field_named() -> None:
    broken = version_one(job_of(output="x" * 2000), None)
    broken["job"]["session_id"] = ""
    with pytest.raises(InvalidJobError, match=r"job\.session_id"):
        parse_message(broken)
    with pytest.raises(InvalidJobError, match="tool_type"):
        parse_message({**version_one(job_of(output="x" * 2000), None), "tool_type": "Nope"})


@given(version=st.integers().filter(lambda v: v not in (1, 2)) | st.booleans() | st.none())
def test_a_version_this_worker_does_not_know_is_refused(version: object) -> None:
    sent = version_one(job_of(output="x" * 2000), None)
    with pytest.raises(InvalidJobError, match="schema_version"):
        parse_message({**sent, "schema_version": version})

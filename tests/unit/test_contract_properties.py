"""Any input to the producer or the worker's message parser gives a valid job or a typed error."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tersify.client.jobs import build_job
from tersify.contract import PendingSummary
from tersify.errors import InvalidJobError
from tersify.settings import Settings
from tersify.store.wire import SummaryMessage, parse_message

SETTINGS = Settings()
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ANY_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ANY_TEXT, inner, max_size=4),
    max_leaves=12,
)
WRONG = st.integers() | st.floats() | st.booleans() | st.lists(st.integers(), max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    session_id=ANY_TEXT | WRONG,
    tool_name=ANY_TEXT | WRONG,
    output=ANY_TEXT | st.binary(max_size=300) | WRONG | st.none(),
    command=st.none() | ANY_TEXT | WRONG,
    query=st.none() | ANY_TEXT,
    relevant_lines=st.none() | st.tuples(st.integers(-5, 50), st.integers(-5, 50)),
    queue=st.sampled_from(["interactive", "batch", "urgent", 3]),
)
def test_any_submit_arguments_give_a_job_or_an_invalid_job_error(**fields: Any) -> None:
    try:
        job = build_job(SETTINGS, **fields)
    except InvalidJobError:
        return
    assert isinstance(job, PendingSummary)
    job.output.encode("utf-8")  # always valid text: no lone surrogates survive
    assert PendingSummary.model_validate_json(job.model_dump_json()) == job


@settings(max_examples=300, deadline=None)
@given(raw=JSONISH)
def test_any_message_off_the_queue_parses_or_raises_a_typed_error(raw: object) -> None:
    try:
        message = parse_message(raw)
    except InvalidJobError:
        return
    assert isinstance(message, SummaryMessage)


@settings(max_examples=100, deadline=None)
@given(extra=st.dictionaries(st.text(min_size=1, max_size=10), JSONISH, min_size=1, max_size=3))
def test_unknown_fields_are_refused(extra: dict[str, object]) -> None:
    base = {"schema_version": 1, "job": {}, "payload": "0" * 64}
    if set(extra) & set(base):
        return
    with pytest.raises(InvalidJobError):
        parse_message({**base, **extra})


@given(version=st.integers().filter(lambda v: v not in (1, 2)) | ANY_TEXT | st.none())
def test_every_other_schema_version_is_refused(version: object) -> None:
    with pytest.raises(InvalidJobError):
        parse_message({"schema_version": version, "job": {}, "payload": "0" * 64})


def test_an_output_at_the_cap_is_carried_whole_and_one_past_it_is_cut() -> None:
    cap = SETTINGS.max_output_bytes
    whole = build_job(SETTINGS, session_id="s", tool_name="t", output=b"x\n" * (cap // 2))
    assert len(whole.output) == cap and whole.cut is None
    for output in (b"x\n" * (cap // 2) + b"y", "é\n" * (cap // 3 + 1)):
        job = build_job(SETTINGS, session_id="s", tool_name="t", output=output)
        assert job.cut is not None and job.cut.bytes_in == len(
            output if isinstance(output, bytes) else output.encode()
        )
        assert len(job.output.encode()) <= cap


def test_a_huge_single_line_is_a_valid_job() -> None:
    job = build_job(SETTINGS, session_id="s", tool_name="cat", output="{" + "a" * 5_000_000 + "}")
    assert len(job.output) == 5_000_002

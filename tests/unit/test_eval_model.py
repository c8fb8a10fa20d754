"""The kept answers of ``tersify eval --method model`` and its totals per model."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tersify.contract import ToolType
from tersify.settings import Settings
from tersify.worker.quality.answers import AnswerStore, StoredAnswer, answer_key
from tersify.worker.quality.corpus import Case
from tersify.worker.quality.modeleval import Status, scored
from tersify.worker.quality.modelreport import tallies

CASE = Case(
    name="c1",
    output="FAILED x-fact\n" + "line\n" * 300,
    tool_name="bash",
    command="pytest",
    expected_type=ToolType.COMMAND_OUTPUT,
    must_keep=("x-fact", "y-fact"),
    should_keep=(),
    query=None,
    notes="",
)
ANSWER = StoredAnswer("Summary: x-fact", "llm", "m1", "openai", 120, 8, 0.0002, 0.4)


def test_an_answer_is_kept_whole_and_read_back_and_a_damaged_one_reads_as_absent(
    tmp_path: Path,
) -> None:
    store = AnswerStore(tmp_path)
    key = answer_key(CASE, "m1", "3", Settings())
    assert store.get(key) is None
    store.put(key, ANSWER)
    assert store.get(key) == ANSWER
    assert [p.suffix for p in tmp_path.rglob("*") if p.is_file()] == [".json"]
    next(tmp_path.rglob("*.json")).write_text('{"text": "half')
    assert store.get(key) is None
    assert AnswerStore(None).get(key) is None


def test_the_key_changes_with_the_model_the_prompt_version_the_case_and_the_request_caps() -> None:
    base = answer_key(CASE, "m1", "3", Settings())
    assert base == answer_key(CASE, "m1", "3", Settings())
    assert base != answer_key(CASE, "m2", "3", Settings())
    assert base != answer_key(CASE, "m1", "4", Settings())
    assert base != answer_key(replace(CASE, query="why"), "m1", "3", Settings())
    assert base != answer_key(CASE, "m1", "3", Settings(max_summary_chars=400))
    # the facts to keep are scored, not asked: changing them reuses the answer
    assert base == answer_key(replace(CASE, must_keep=("z",)), "m1", "3", Settings())


def test_facts_count_over_answered_cases_and_failures_and_skips_are_counted_apart() -> None:
    failed = replace(ANSWER, method="fallback", fallback_reason="server_error", usd=0.0)
    runs = [
        scored(CASE, "m1", "3", Status.ANSWERED, ANSWER, cached=False),
        scored(CASE, "m1", "3", Status.FAILED, failed, cached=False),
        scored(CASE, "m1", "3", Status.CEILING, None, cached=False),
        scored(
            CASE, "m2", "3", Status.ANSWERED, replace(ANSWER, text="x-fact y-fact"), cached=True
        ),
    ]
    first, second = tallies(runs)
    assert (first.model, first.cases, first.answered, first.failed, first.not_run) == (
        "m1",
        3,
        1,
        1,
        1,
    )
    assert (first.kept, first.total, first.percent) == (1, 2, 50.0)
    assert first.chars_out == len(ANSWER.text) and first.usd == ANSWER.usd
    assert len(first.seconds) == 2  # the failed call took time too
    assert (second.kept, second.total, second.cached) == (2, 2, 1)
    assert runs[1].kept == 0 and runs[1].missing == CASE.must_keep

"""Grounding: the claims a model answer makes, and which of them its source backs."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from tersify.classify import classify
from tersify.contract import FallbackReason, PendingSummary
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.worker.summarize.grounding import (
    ClaimKind,
    Source,
    check_grounding,
    claims,
    job_source,
    unsupported,
)
from tersify.worker.summarize.prompts import build_request
from tersify.worker.summarize.summarizer import check_answer
from tests.corpus import load_cases
from tests.fakemodel import default_summary

SOURCE = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0\n"
    "collected 1204 items\n"
    "worker/summarize.py:88: in check_answer\n"
    "E   AssertionError: expected 1500 chars\n"
    "FAILED tests/unit/test_text.py::test_clip_keeps_words[cjk] - AssertionError\n"
    "Downloading https://files.example.org/simple/httpx/ (httpx-0.28.1)\n"
    "========================= 1 failed, 1203 passed in 12.31s =========================\n"
) + "".join(f"padding line {i}\n" for i in range(40))


def _job(output: str = SOURCE, **fields: str) -> PendingSummary:
    return PendingSummary.build(
        deadline_seconds=60, session_id="s", tool_name="bash", command="pytest -q", output=output,
        **fields,
    )  # fmt: skip


def _kinds(answer: str) -> list[tuple[ClaimKind, str]]:
    return [(c.kind, c.text) for c in claims(answer)]


def test_claims_finds_each_kind_with_the_sentence_punctuation_removed() -> None:
    answer = (
        "FAILED tests/unit/test_text.py::test_clip[cjk]. See worker/summarize.py:88, lines 3-9 "
        "and L42; 12#a1|x in setup.py; httpx v0.28.1 and 2.31.0 at https://example.org/x/y. "
        "1,204 tests, 12 passed."
    )
    assert _kinds(answer) == [
        (ClaimKind.TEST_ID, "tests/unit/test_text.py::test_clip[cjk]"),
        (ClaimKind.PATH_LINE, "worker/summarize.py:88"),
        (ClaimKind.LINE, "lines 3-9"),
        (ClaimKind.LINE, "L42"),
        (ClaimKind.LINE, "12#a1|"),
        (ClaimKind.PATH, "setup.py"),
        (ClaimKind.VERSION, "v0.28.1"),
        (ClaimKind.VERSION, "2.31.0"),
        (ClaimKind.URL, "https://example.org/x/y"),
        (ClaimKind.NUMBER, "1,204"),
    ]


def test_claims_skips_short_numbers_dates_as_paths_and_plain_words() -> None:
    assert _kinds("3/4 of 12 tests and/or 2024/01/31 failed") == [(ClaimKind.NUMBER, "2024")]


def test_an_answer_quoting_its_source_is_fully_supported() -> None:
    answer = (
        "1 failed, 1203 passed: tests/unit/test_text.py::test_clip_keeps_words[cjk] "
        "(AssertionError: expected 1500 chars) at worker/summarize.py:88; httpx 0.28.1, v0.28.1, "
        "collected 1,204 items, see https://files.example.org/simple/httpx/."
    )
    assert unsupported(answer, Source.of(SOURCE)) == []


def test_line_numbers_within_the_source_are_supported_and_beyond_it_are_not() -> None:
    source = Source.of(SOURCE)
    assert unsupported("see L40, lines 2-45 and worker/summarize.py:30", source) == []
    invented = unsupported("see L400 and worker/summarize.py:999", source)
    assert [c.text for c in invented] == ["L400", "worker/summarize.py:999"]


def test_sizes_of_the_output_stated_in_chars_are_supported() -> None:
    assert unsupported("output cut from 1,000 to 900 characters", Source.of(SOURCE)) == []
    assert [c.text for c in unsupported("99999999 chars", Source.of(SOURCE))] == ["99999999"]


def test_windows_spellings_of_a_path_are_supported() -> None:
    source = Source.of(r"C:\Users\dev\venv\Scripts\Activate.ps1 line 1")
    assert unsupported("edit venv/Scripts/Activate.ps1", source) == []


def test_claims_copied_from_the_prompt_instructions_are_not_inventions() -> None:
    job = _job(output="short output without numbers\n" * 80)
    assert (
        unsupported("gaps read like … 1234 lines … as the note says", job_source(job, Settings()))
        == []
    )


def test_an_answer_inventing_a_path_line_and_a_version_is_rejected_as_ungrounded() -> None:
    answer = "The crash is in src/nowhere.py:123 since v9.9.9; 1 failed."
    with capture_logs() as logs, pytest.raises(ProviderError) as caught:
        check_answer(answer, _job(), Settings())
    assert caught.value.reason is FallbackReason.UNGROUNDED
    assert "src/nowhere.py:123" in caught.value.detail and "v9.9.9" in caught.value.detail
    assert [e["count"] for e in logs if e["event"] == "summary_ungrounded_claims"] == [2]


def test_one_invented_claim_is_logged_but_the_answer_is_kept() -> None:
    with capture_logs() as logs:
        check_answer("1 failed in src/nowhere.py; 1203 passed.", _job(), Settings())
    assert [e["count"] for e in logs if e["event"] == "summary_ungrounded_claims"] == [1]


def test_a_limit_of_zero_logs_invented_claims_and_never_rejects() -> None:
    settings = Settings(grounding_max_unsupported=0)
    with capture_logs() as logs:
        check_grounding("src/a.py:1 src/b.py:2 src/c.py:3 v9.9.9", _job(), settings)
    assert [e["count"] for e in logs if e["event"] == "summary_ungrounded_claims"] == [4]


def test_a_limit_of_one_rejects_a_single_invention() -> None:
    with pytest.raises(ProviderError):
        check_grounding("fixed in v9.9.9", _job(), Settings(grounding_max_unsupported=1))


def test_a_grounded_answer_logs_nothing() -> None:
    with capture_logs() as logs:
        check_grounding("1 failed: worker/summarize.py:88", _job(), Settings())
    assert logs == []


def test_the_fake_models_default_answer_is_grounded_on_every_sample_case() -> None:
    settings = Settings()
    cases = load_cases()
    assert cases
    for case in cases:
        job = _job(output=case.output, query=case.query or "")
        job = job.model_copy(update={"tool_name": case.tool_name, "command": case.command})
        tool_type = classify(case.tool_name, case.command, case.output)
        request = build_request(
            job, tool_type, max_input_chars=50_000, max_summary_chars=800
        ).request
        answer = default_summary(request.user)
        assert unsupported(answer, job_source(job, settings)) == [], case.name

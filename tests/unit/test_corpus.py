"""The corpus sample: classification, and how much each shrink keeps of what matters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tersify.classify import classify
from tersify.contract import ToolType
from tersify.worker.quality import evaluation
from tersify.worker.shrink import extract, fallback_truncate, head_tail, kind_of
from tests.corpus import Case, kept, load_case, load_cases

BUDGET = 2_000

Shrink = Callable[[Case], str]


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_cases()


def _model_input(case: Case) -> str:
    return evaluation.shrink(case, case.expected_type, evaluation.EvalMethod.MODEL_INPUT, 50_000)


SHRINKS: dict[str, Shrink] = {
    "head": lambda c: c.output[:BUDGET],
    "head/tail": lambda c: head_tail(c.output, kind_of(c.expected_type).head_ratio, BUDGET),
    "fallback": lambda c: fallback_truncate(c.output, c.expected_type, BUDGET, c.query),
    "extractive": lambda c: extract(c.output, c.expected_type, BUDGET, c.query),
}


def _rate(cases: list[Case], shrink: Shrink) -> tuple[int, int]:
    return sum(kept(shrink(c), c.must_keep) for c in cases), sum(len(c.must_keep) for c in cases)


def test_the_loader_keeps_crlf_and_reads_every_field(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_bytes(b"a\r\nb\xff\r\n")
    (tmp_path / "x.json").write_text(
        '{"tool_name": "read", "command": "cat x", "expected_type": "FileContent",'
        ' "must_keep": ["a"], "should_keep": [], "query": null, "notes": "n"}'
    )
    case = load_case(tmp_path / "x.json")
    assert case.output.startswith("a\r\nb")
    assert case.expected_type is ToolType.FILE_CONTENT
    assert case.must_keep == ("a",) and case.query is None and case.command == "cat x"
    assert [c.name for c in load_cases(tmp_path)] == ["x"]


def test_kept_counts_verbatim_items_only() -> None:
    assert kept("error: boom\nFound 3 errors.", ["error: boom", "Found 3 errors.", "nope"]) == 2


def test_every_sample_case_classifies_as_its_expected_type(cases: list[Case]) -> None:
    wrong = {
        c.name: classify(c.tool_name, c.command, c.output)
        for c in cases
        if classify(c.tool_name, c.command, c.output) is not c.expected_type
    }
    assert not wrong


def test_every_local_shrink_fits_the_budget(cases: list[Case]) -> None:
    for case in cases:
        for name, shrink in SHRINKS.items():
            assert len(shrink(case)) <= BUDGET, (case.name, name)


def test_fallback_keeps_more_than_head_tail_and_extractive_most(cases: list[Case]) -> None:
    rates = {name: _rate(cases, shrink) for name, shrink in SHRINKS.items()}
    model = (sum(kept(_model_input(c), c.must_keep) for c in cases), rates["head"][1])
    for name, (got, total) in [*rates.items(), ("model input", model)]:
        print(f"{name:>12}: {got}/{total} must_keep items = {got / total:.0%}")
    assert rates["fallback"][0] > rates["head/tail"][0]
    assert rates["fallback"][0] >= 0.70 * rates["fallback"][1]
    assert rates["extractive"][0] >= 0.75 * rates["extractive"][1]
    assert model[0] >= 0.95 * model[1]

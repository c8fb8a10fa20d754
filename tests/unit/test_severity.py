"""Severity: the lines of the severity a query asks for, when they are the few among many."""

from __future__ import annotations

from tersify.contract import ToolType
from tersify.worker.shrink import extract
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.query import asked_severity
from tersify.worker.shrink.severity import severity_lines


def _report(warnings_at: tuple[int, ...], count: int = 400) -> str:
    lines = []
    for i in range(count):
        level = "warning" if i in warnings_at else "error"
        lines.append(f"src/unit{i}.c:{i}:7 - {level}: value of kind {i % 5} is not assignable")
    return "\n".join(lines)


def test_the_query_names_the_severity_it_wants() -> None:
    assert asked_severity("Which findings are warnings rather than errors?") == "warning"
    assert asked_severity("show only the errors") == "error"
    assert asked_severity("why did the build stop") is None


def test_the_few_lines_of_the_asked_severity_are_found_among_many_of_another() -> None:
    doc = Doc(_report((120, 333)))
    assert severity_lines(doc, "warning") == [120, 333]


def test_a_severity_most_lines_report_singles_nothing_out() -> None:
    assert severity_lines(Doc(_report((120, 333))), "error") == []


def test_a_sentence_mentioning_a_severity_is_not_a_report_of_it() -> None:
    prose = "\n".join(f"line {i}: this error text is only prose about an error" for i in range(50))
    infos = "\n".join(f"[info] step {i} done" for i in range(10))
    report = f"{prose}\n{infos}\n[error] disk quota exceeded\n{prose}"
    lines = severity_lines(Doc(report), "error")
    assert [Doc(report).lines[i] for i in lines] == ["[error] disk quota exceeded"]


def test_the_lines_of_the_asked_severity_survive_the_shrink() -> None:
    text = _report((120, 333), count=3000)
    shown = extract(text, ToolType.COMMAND_OUTPUT, 2000, "which findings are only warnings?")
    assert "src/unit120.c:120:7 - warning:" in shown and "src/unit333.c:333:7 - warning:" in shown

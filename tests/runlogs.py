"""A test runner's log as it reads after each of an agent's edits: made for the tests of
re-runs (the failures, skips and timing vary; everything else stays)."""

from __future__ import annotations


def runner_log(
    failing: list[int], seconds: float = 1.23, modules: int = 60, skipped: range = range(0)
) -> str:
    """A test runner's log: one line per module, a traceback and a summary line per failure."""
    lines = [
        "=" * 29 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
        f"rootdir: /tmp/tmpq{int(seconds * 100)}x1",
        f"collected {modules * 8} items",
        "",
    ]
    for n in range(modules):
        mark = "F" if n in failing else "s" if n in skipped else "."
        lines.append(f"tests/test_part{n:02d}.py .......{mark}   [{(n + 1) * 100 // modules:3d}%]")
    lines += ["", "=" * 35 + " FAILURES " + "=" * 35]
    for n in failing:
        lines += [
            f"{'_' * 30} test_case_{n} {'_' * 30}",
            f"    def test_case_{n}():",
            f">       assert compute({n}) == {n + 1}",
            f"E       assert {n * 2} == {n + 1}",
            f"tests/test_part{n:02d}.py:{40 + n}: AssertionError",
        ]
    lines.append("=" * 27 + " short test summary info " + "=" * 28)
    lines += [f"FAILED tests/test_part{n:02d}.py::test_case_{n} - assert {n * 2} == {n + 1}"
              for n in failing]  # fmt: skip
    passed = modules * 8 - len(failing)
    lines.append(f"{'=' * 20} {len(failing)} failed, {passed} passed in {seconds:.2f}s {'=' * 20}")
    return "\n".join(lines)


def at(output: str, line: str) -> int:
    """The number of ``line`` in ``output`` (from 1)."""
    return output.split("\n").index(line) + 1

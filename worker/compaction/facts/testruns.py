"""The last known state of each test the runners reported, and the last summary line of a run.

A test is a test id with a verdict on one line of a tool result, in the shapes runners print:
``path::test PASSED`` and ``FAILED path::test - …``; ``FAIL: test (module.Class)`` and ``test
(module.Class) ... ok``; ``--- FAIL: TestX``; ``test a::b ... FAILED``; TAP's ``ok 3 - name`` and
``not ok 4 name``; a verdict word then a test file or package (``PASS src/a.test.ts``, ``FAIL
pkg/x 0.1s``, ``ok  pkg/x 0.1s``); a bracketed verdict before a name (``[PASS] name``); a
verdict word before a name and a duration (``Passed Name [12 ms]``); and the check and cross
marks of JavaScript runners (``✓ name``, ``✕ name``). A test that failed is taken as passing
when a later run of the same command reports no failure at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.compaction.facts.actions import Action, Status
from tersify.worker.compaction.facts.commands import normalized

_PASS, _FAIL, _SKIP = "passed", "failed", "skipped"
_STATES = {
    "PASSED": _PASS, "PASS": _PASS, "ok": _PASS, "XPASS": _PASS, "✓": _PASS, "√": _PASS,
    "✔": _PASS, "Passed": _PASS,
    "FAILED": _FAIL, "FAIL": _FAIL, "ERROR": _FAIL, "✕": _FAIL, "×": _FAIL, "✗": _FAIL,
    "✖": _FAIL, "not ok": _FAIL, "Failed": _FAIL,
    "SKIPPED": _SKIP, "SKIP": _SKIP, "XFAIL": _SKIP, "ignored": _SKIP, "Skipped": _SKIP,
}  # fmt: skip
_LINES = (
    (re.compile(r"^([\w./-]+\.\w+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b"), 1, 2),
    (re.compile(r"^(FAILED|ERROR)\s+([\w./-]+\.\w+::[^\s]+)"), 2, 1),
    (re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)"), (3, 2), 1),
    (re.compile(r"^(\w+) \(([\w.]+)\)(?: \.\.\.|\n)\s*(ok|FAIL|ERROR)\b"), (2, 1), 3),
    (re.compile(r"^\s*--- (FAIL|PASS|SKIP): (\S+)"), 2, 1),
    (re.compile(r"^test (\S+) \.\.\. (ok|FAILED|ignored)\b"), 1, 2),
    (re.compile(r"^\s*(✓|✕|×|√|✔|✗|✖)\s+(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$"), 2, 1),
    (re.compile(r"^\s*ok \d+(?: -)? (.+?)\s+#\s*(SKIP)\b"), 1, 2),
    (re.compile(r"^\s*(not ok|ok) \d+(?: -)? (.+?)(?:\s+#\s*(?:SKIP|TODO)\b.*)?$"), 2, 1),
    (re.compile(r"^\s*(PASS|FAIL)\s+([\w./@-]+\.\w+)(?:\s+\(?[\d.]+\s*m?s\)?)?\s*$"), 2, 1),
    (re.compile(r"^(ok|FAIL)\s+([\w.-]+(?:/[\w.-]+)+)\s+(?:\(cached\)|[\d.]+s)"), 2, 1),
    (re.compile(r"^\s*\[(PASS|FAIL|SKIP)(?:ED)?\]\s+(\S.*?)\s*$"), 2, 1),
    (re.compile(r"^\s*(Passed|Failed|Skipped)\s+(\S+)\s+\[[\d.,<>\s]*m?s\]"), 2, 1),
)
_SUMMARY = re.compile(
    r"^(?:=+ )?((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
    r"(?:, )?)+)(?: in [\d.]+s)?(?: =+)?$|^(FAILED \((?:failures|errors)=\d+.*\)|OK(?: \(.*\))?)$"
)
FAILING = re.compile(
    r"\b[1-9]\d* (?:failed|errors?)\b|^FAILED \(|^--- FAIL|^FAIL\b|^not ok \d", re.M
)


@dataclass(frozen=True, slots=True)
class TestState:
    """A test id's last known state and where it was reported."""

    test: str
    state: str
    index: int
    command: str | None


def _test_id(match: re.Match[str], where: int | tuple[int, int]) -> str:
    if isinstance(where, tuple):
        return f"{match.group(where[0])}.{match.group(where[1])}"
    return match.group(where)


def reported(output: str) -> list[tuple[str, str]]:
    """(test id, state) for every test line of one runner output, in order."""
    found: list[tuple[str, str]] = []
    for line in output.splitlines():
        for pattern, test_at, state_at in _LINES:
            match = pattern.match(line)
            if match:
                found.append((_test_id(match, test_at), _STATES[match.group(state_at)]))
                break
    return found


def last_summary(output: str) -> str | None:
    """A runner's closing count line (``3 failed, 70 passed``, ``FAILED (errors=1)``, ``OK``)."""
    found = None
    for line in output.splitlines():
        match = _SUMMARY.match(line.strip())
        if match:
            found = line.strip().strip("= ")
    return found


def states_of_tests(actions: Sequence[Action]) -> tuple[list[TestState], str | None]:
    """Each test's last known state (failing first, latest first) and the last run's summary."""
    states: dict[str, TestState] = {}
    summary: str | None = None
    for action in actions:
        tests = reported(action.output)
        line = last_summary(action.output)
        if line:
            summary = f"{line} ← {action.command or action.tool}"
        for test, state in tests:
            states[test] = TestState(test, state, action.index, action.command)
        if action.command and line and not FAILING.search(action.output):
            _passed_again(states, action)
    ordered = sorted(states.values(), key=lambda s: (s.state != _FAIL, -s.index))
    return ordered, summary


def _passed_again(states: dict[str, TestState], run: Action) -> None:
    """Failures reported by earlier runs of ``run``'s command, now passing with it."""
    key = normalized(run.command or "")
    for test, state in list(states.items()):
        same = state.command is not None and normalized(state.command) == key
        if (
            same
            and state.state == _FAIL
            and state.index < run.index
            and run.status is not Status.FAILED
        ):
            states[test] = TestState(test, _PASS, run.index, run.command)

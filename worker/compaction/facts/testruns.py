"""The last known state of each test the runners reported, and the last summary line of a run.

A test is a test id with a verdict on one line of a tool result, in the shapes runners print:
``path::test PASSED`` and ``FAILED path::test - …``; ``FAIL: test (module.Class)`` and ``test
(module.Class) ... ok``; any ``name ... ok|FAILED|ignored``; ``--- FAIL: TestX``; TAP's ``ok 3
- name`` and ``not ok 4 name``; a verdict word then a test file or package (``PASS
src/a.test.ts``, ``FAIL pkg/x 0.1s``, ``ok  pkg/x 0.1s``), or a file and a path of names
(``FAIL src/a.test.ts > suite > name``); a bracketed verdict before a name (``[PASS] name``); a
verdict word before a name and a duration (``Passed Name [12 ms]``); check and cross marks
(``✓ name``, ``✕ name``); a name then a verdict word (``Class > test FAILED``, ``Test Case
'-[A b]' failed``, ``#1: name ....  Passed``); and the failure lists that name a test without
a verdict word (``● Suite › name``, ``1) Class::test``, ``rspec ./spec/a_spec.rb:12 # …``).

A run's summary is its closing count line, in any runner's words: counts beside verdicts
(``3 failed, 70 passed``, ``Tests: 1 failed, 5 total``, ``5 passing``, ``10 examples, 2
failures``, ``test result: FAILED. 3 passed; 1 failed``, ``Failures: 1``, ``276/276 passed``),
or a bare verdict (``OK``, ``FAILED (errors=1)``, ``FAILURES!``). A test that failed is taken as
passing when a later run of the same command reports no failure at all.
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
    "✔": _PASS, "Passed": _PASS, "passed": _PASS, ".": _PASS,
    "FAILED": _FAIL, "FAIL": _FAIL, "ERROR": _FAIL, "✕": _FAIL, "×": _FAIL, "✗": _FAIL,
    "✖": _FAIL, "✘": _FAIL, "not ok": _FAIL, "Failed": _FAIL, "failed": _FAIL, "F": _FAIL,
    "E": _FAIL, "FAILURE": _FAIL,
    "SKIPPED": _SKIP, "SKIP": _SKIP, "XFAIL": _SKIP, "ignored": _SKIP, "Skipped": _SKIP,
    "S": _SKIP,
}  # fmt: skip
_MS = r"(?:\s+\(?[\d.]+\s*m?s\)?)?"
_LINES: tuple[tuple[re.Pattern[str], int | tuple[int, int], int | str], ...] = (
    (re.compile(r"^([\w./-]+\.\w+::\S+)\s+(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b"), 1, 2),
    (re.compile(r"^(FAILED|ERROR)\s+([\w./-]+\.\w+::[^\s]+)"), 2, 1),
    (re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)"), (3, 2), 1),
    (re.compile(r"^(\w+) \(([\w.]+)\)(?: \.\.\.|\n)\s*(ok|FAIL|ERROR)\b"), (2, 1), 3),
    (re.compile(r"^\s*--- (FAIL|PASS|SKIP): (\S+)"), 2, 1),
    (re.compile(r"^(?:test )?(\S[^\n]*?) \.\.\. (ok|FAILED|FAIL|ERROR|ignored)\b"), 1, 2),
    (
        re.compile(
            r"^\s*(✓|✕|×|√|✔|✗|✖|✘)\s+(?:Test )?(.+?)(?: (?:passed|failed)\b.*)?" + _MS + "$"
        ),
        2,
        1,
    ),
    (re.compile(r"^\s*ok \d+(?: -)? (.+?)\s+#\s*(SKIP)\b"), 1, 2),
    (re.compile(r"^\s*(not ok|ok) \d+(?: -)? (.+?)(?:\s+#\s*(?:SKIP|TODO)\b.*)?$"), 2, 1),
    (re.compile(r"^\s*(PASS|FAIL)\s+(\S+\.\w+(?: > [^>\n]+)+?)" + _MS + r"\s*$"), 2, 1),
    (re.compile(r"^\s*(PASS|FAIL)\s+([\w./@-]+\.\w+)" + _MS + r"\s*$"), 2, 1),
    (re.compile(r"^(ok|FAIL)\s+([\w.-]+(?:/[\w.-]+)+)\s+(?:\(cached\)|[\d.]+s)"), 2, 1),
    (re.compile(r"^\s*\[(PASS|FAIL|SKIP)(?:ED)?\]\s+(\S.*?)\s*$"), 2, 1),
    (re.compile(r"^\s*(Passed|Failed|Skipped)\s+(\S+)\s+\[[\d.,<>\s]*m?s\]"), 2, 1),
    (re.compile(r"^\s*(\S+(?: > [^>\n]+)+?) (PASSED|FAILED|SKIPPED)$"), 1, 2),
    (re.compile(r"^\s*Test Case '-?\[?([^\]']+)\]?' (passed|failed)\b"), 1, 2),
    (re.compile(r"^\s*(?:\d+/\d+ )?Test\s+#\d+: (\S+) \.+\**\s*(Passed|Failed)\b"), 1, 2),
    (re.compile(r"^\s*(?:\[\w+\]\s+)?(\S+) +Time elapsed: .*<<< (FAILURE|ERROR)!"), 1, 2),
    (re.compile(r"^(\w[\w:]*#\w+) = [\d.]+ s = ([.FES])$"), 1, 2),
    (re.compile(r"^\s*● (\S.* › .+)$"), 1, _FAIL),
    (re.compile(r"^\s*\d+\) ([\w\\]+::\w+)$"), 1, _FAIL),
    (re.compile(r"^\s*rspec (\./\S+:\d+) # .+$"), 1, _FAIL),
)
_ITEM = (
    r"(?:\d+(?:/\d+)? [a-z]+(?: out)?|[a-z]+(?: [a-z]+)?: *[\d.]+(?: ?m?s\b)?|\(\d+\)|"
    r"\(?(?:in |finished in )?[\d.]+ ?(?:m?s|sec|seconds)\)?)"
)
_SUMMARY = re.compile(
    r"^(?:=+ )?((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)"
    r"(?:, )?)+)(?: in [\d.]+s)?(?: =+)?$|^(FAILED \((?:failures|errors)=\d+.*\)|OK(?: \(.*\))?|"
    r"FAILURES!|ERRORS!|PASS|FAIL)$"
)
_COUNTED = re.compile(
    rf"(?i)^(?:[a-z][a-z ]{{0,20}}[:!.]?\s*)?(?:(?:ok|passed|failed|pass|fail)[.!]?\s*)?[-|]?\s*"
    rf"{_ITEM}(?:[,;|/\s-]+{_ITEM})*[.,;]?$"
)
_VERDICT = re.compile(
    r"(?i)\d+(?:/\d+)? (?:passed|passing|failed|failing|failures?|errors?)\b|"
    r"\b(?:passed|failed|failures|errors):? *\d"
)
_MAX_SUMMARY = 200
_TASK_PREFIX = re.compile(r"^\s*\[[\w:./@-]+\]\s+|^\s*[\w.@/-]+\s+\|\s+")
FAILING = re.compile(
    r"\b[1-9]\d* (?:failed|errors?|failing|failures?)\b|^FAILED \(|^--- FAIL|^FAIL\b|"
    r"^not ok \d|\b(?:Failures|Failed|Errors): *[1-9]|^FAILURES!",
    re.M,
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
        holder, name = match.group(where[0]), match.group(where[1])
        return holder if holder.endswith(f".{name}") else f"{holder}.{name}"
    return match.group(where).strip()


def _test_line(line: str) -> tuple[str, str] | None:
    for pattern, test_at, state_at in _LINES:
        match = pattern.match(line)
        if match:
            state = state_at if isinstance(state_at, str) else _STATES[match.group(state_at)]
            return _test_id(match, test_at), state
    return None


def reported(output: str) -> list[tuple[str, str]]:
    """(test id, state) for every test line of one runner output, in order (a task runner's
    prefix before the line, ``[task:name]`` or ``name | ``, set aside)."""
    found: list[tuple[str, str]] = []
    for line in output.splitlines():
        test = _test_line(line)
        if test is None and (prefix := _TASK_PREFIX.match(line)):
            test = _test_line(line[prefix.end() :])
        if test is not None:
            found.append(test)
    return found


def last_summary(output: str) -> str | None:
    """A runner's closing count line (``3 failed, 70 passed``, ``FAILED (errors=1)``, ``OK``)."""
    found = None
    for raw in output.splitlines():
        line = raw.strip()
        if len(line) > _MAX_SUMMARY:
            continue
        if _SUMMARY.match(line) or (_COUNTED.match(line) and _VERDICT.search(line)):
            found = line.strip("= ")
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

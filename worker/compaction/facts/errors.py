"""Errors seen in tool results (never in prose or arguments), folded by shape, latest first.

An error line is a Python exception line (``TypeError: …``, pytest's ``E   …``), a compiler or
tool diagnostic (``path:12:3: …``, ``error: …``, ``error[E0308]: …``, ``fatal: …``, ``panic:
…``, ``npm ERR! …``), or a shell's ``command not found`` / ``No such file or directory``; a
failed tool result with no such line contributes its first line. Outputs of commands that print
files or search them (``cat``, ``grep``, ``git diff``, read tools) are skipped: their "errors"
are source code. Two errors are the same when they differ only in numbers, hex ids and quoted
names; each is kept at its last occurrence, with the command that produced it, and marked
resolved when a later run of that command succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.compaction.facts.actions import Action, Status
from tersify.worker.compaction.facts.commands import normalized, prints_files
from tersify.worker.compaction.facts.testruns import FAILING as _FAILING
from tersify.worker.compaction.facts.testruns import last_summary

_LINE_NUMBERED = re.compile(r"^\s*\d+(?:[\t→:|]|\s{2,})")  # a listing: cat -n, nl, Read
_CODE = re.compile(r"\b(?:raise|except|throw|catch|def|class|return|assert|import)\b")
_PATTERNS = (
    re.compile(
        r"^\s*(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Failure|Interrupt)\b:?.*)$"
    ),
    re.compile(r"^\s*E\s{2,}(Failed: .+|assert .+)$"),
    re.compile(
        r"^\s*((?:[\w./-]+):\d+(?::\d+)?: (?:error|fatal error|undefined|cannot|syntax error).*)$",
        re.I,
    ),
    re.compile(
        r"^\s*((?:[\w./-]+\.\w+):\d+(?::\d+)?: .*(?:undefined|not declared|expected|cannot|"
        r"mismatch|no (?:field|method|member)).*)$"
    ),
    re.compile(r"^\s*((?:error|fatal|panic)(?:\[\w+\])?: .+)$", re.I),
    re.compile(r"^\s*(npm ERR! .+|ERR_\w+.*)$"),
    re.compile(r"^\s*((?:FAIL|FAILED|FAILURE|ERROR):? [A-Z].+)$"),  # a script's own verdict
    re.compile(
        r"^(.*(?:command not found|No such file or directory|Permission denied|"
        r"Segmentation fault).*)$"
    ),
    # an exception a script caught and printed: "check failed with TypeError: …"
    re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*)$"),
)
_FAILED_BECAUSE = re.compile(
    r"^(?:FAILED|ERROR) \S+ - ((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b.*)$"
)
_TAG = re.compile(r"</?[a-z_]+>")
_NOT_VERDICT = re.compile(
    r"^(?:Exit code:? -?\d+|The output of your last command was too long|Please try a)"
)
_FOLD_QUOTED = re.compile(r"(['\"`]).*?\1")
_FOLD_NUMBER = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b|\d+", re.I)
_MAX_PER_OUTPUT = 5
_MAX_SCAN = 1000
_TEST_STATUS = re.compile(r"^\s*(?:ERROR|FAIL|FAILED|PASSED|ok)\b:? +[\w./:\[\]-]+(?: \(|$| - )")
_MAX_LINE = 240


@dataclass(slots=True)
class SeenError:
    """One error (the latest of its shape): its line, where, how often, and whether it passed."""

    line: str
    index: int
    command: str | None
    count: int = 1
    resolved: bool = False


def _fold(line: str) -> str:
    return _FOLD_NUMBER.sub("N", _FOLD_QUOTED.sub("Q", line)).strip().lower()


def error_lines(output: str) -> list[str]:
    """The error lines of one tool output, at most a few, in order."""
    found: list[str] = []
    for whole in output.splitlines():
        if len(found) >= _MAX_PER_OUTPUT:
            break
        raw = whole[:_MAX_SCAN]  # a long line (minified code, JSON) is read by its start only
        if _LINE_NUMBERED.match(raw) or raw.lstrip().startswith(("+", "-", "#", "//", ">>>")):
            continue
        failed = _FAILED_BECAUSE.match(raw)
        if failed and failed.group(1) not in found:
            found.append(failed.group(1)[:_MAX_LINE])  # pytest's "FAILED id - Error: why"
            continue
        if _TEST_STATUS.match(raw):
            continue  # a test runner's status line: a test's state, read by ``testruns``
        for pattern in _PATTERNS:
            match = pattern.search(raw)
            if match and not _CODE.search(match.group(1).split(":", 1)[0]):
                line = match.group(1).strip()[:_MAX_LINE]
                if line not in found:
                    found.append(line)
                break
    return found


def _summary_line(output: str, last: bool) -> str | None:
    """The line that best says how a failed result ended: its first line, or its last one
    when the result carries an exit code (a run's last line is its verdict); tags left out."""
    lines = [_TAG.sub("", raw).strip() for raw in output.splitlines()]
    useful = [line for line in lines if line and not _NOT_VERDICT.match(line)]
    if not useful:
        return None
    return (useful[-1] if last else useful[0])[:_MAX_LINE]


def seen_errors(actions: Sequence[Action]) -> list[SeenError]:
    """The distinct errors of the actions' results, the most recent first."""
    by_shape: dict[str, SeenError] = {}
    for action in actions:
        if prints_files(action):
            continue
        lines = error_lines(action.output)
        if not lines and action.status is Status.FAILED and not last_summary(action.output):
            verdict = _summary_line(action.output, last=action.exit_code is not None)
            lines = [verdict] if verdict else []
        for line in lines:
            key = _fold(line)
            previous = by_shape.pop(key, None)
            count = previous.count + 1 if previous else 1
            by_shape[key] = SeenError(line, action.index, action.command, count)
    _mark_resolved(list(by_shape.values()), actions)
    return sorted(by_shape.values(), key=lambda e: -e.index)


def _mark_resolved(errors: list[SeenError], actions: Sequence[Action]) -> None:
    """An error is resolved when a later run of the command that produced it succeeded."""
    for error in errors:
        if error.command is None:
            continue
        key = normalized(error.command)
        error.resolved = any(
            a.index > error.index
            and a.command is not None
            and normalized(a.command) == key
            and a.status is not Status.FAILED
            and not error_lines(a.output)
            and not _FAILING.search(a.output)
            for a in actions
        )

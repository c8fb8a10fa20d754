"""Errors seen in tool results (never in prose or arguments), read by shape, latest first.

Each line of a result is judged by its shape (``errorlines``); a short result that refuses the
call in plain words gives that line (``refusal``), whether or not the call was flagged as
failed; a failed call's result with no such line gives the line that best says how it ended.
Outputs that print files or search hits are source code, not errors: of those only the printing
program's own complaints count (``rg: src: No such file or directory``, ``fatal: bad object
…``), and a refusal when that is all they say. Two errors are the same when their normalized
forms are (numbers, hex ids, quoted names and paths of temporary directories folded); each is
kept at its last occurrence, with the command that produced it, and marked resolved when a
later run of that command succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.compaction.facts.actions import Action, Status, states_exit_code
from tersify.worker.compaction.facts.commands import normalized, prints_files
from tersify.worker.compaction.facts.errorlines import (
    MAX_LINE,
    error_lines,
    fold,
    plain_line,
    refusal,
    says_failure,
)
from tersify.worker.compaction.facts.shell import parse_command, program
from tersify.worker.compaction.facts.testruns import FAILING as _FAILING
from tersify.worker.compaction.facts.testruns import last_summary

_TAG = re.compile(r"</?[a-z_]+>")
_NOT_VERDICT = re.compile(
    r"^(?:Exit code:? -?\d+|Process exited with code -?\d+|Chunk ID: |Wall time: |"
    r"Original token count: |Output:$|The output of your last command was too long|Please try a)"
)
_HEADER_LINES = 6
_MAX_PER_OUTPUT = 5
_COMPLAINT = re.compile(r"^([\w.-]+): (.+)$")


@dataclass(slots=True)
class SeenError:
    """One error (the latest of its shape): its line, where, how often, and whether it passed."""

    line: str
    index: int
    command: str | None
    count: int = 1
    resolved: bool = False


def _complaints(output: str, programs: frozenset[str]) -> list[str]:
    """Lines where a program that prints files says what went wrong (``rg: x: No such file or
    directory``, ``fatal: bad object``): the only errors of an output that is file content."""
    found: list[str] = []
    for raw in output.splitlines()[:2000]:
        line = plain_line(raw)
        complaint = _COMPLAINT.match(line)
        if complaint is None:
            continue
        who = complaint.group(1)
        if who in programs or who.lower() in ("fatal", "error"):
            found.append(line.strip()[:MAX_LINE])
            if len(found) >= _MAX_PER_OUTPUT:
                break
    return list(dict.fromkeys(found))


def _programs(command: str | None) -> frozenset[str]:
    if not command:
        return frozenset()
    return frozenset(program(words)[0] for words in parse_command(command).commands)


def _verdict(output: str, exit_code: int | None) -> str | None:
    """How a failed result ended, when no line has an error's shape: its first line that says
    what was wrong, else its last line (with an exit code: a run's last line is its verdict)
    or its first; a tool's header lines and tags left out."""
    lines = [_TAG.sub("", plain_line(raw)).strip() for raw in output.splitlines()]
    useful = [
        line
        for line in lines
        if line and not _NOT_VERDICT.match(line) and not states_exit_code(line)
    ]
    if not useful:
        return None
    said = next((line for line in useful[:50] if says_failure(line)), None)
    if said is not None:
        return said[:MAX_LINE]
    return (useful[-1] if exit_code is not None else useful[0])[:MAX_LINE]


def _body(output: str) -> str:
    """The output without a tool's header lines (exit code, timing, ``Output:``)."""
    lines = output.splitlines()
    head = 0
    while head < min(len(lines), _HEADER_LINES) and (
        _NOT_VERDICT.match(lines[head].strip()) or states_exit_code(lines[head])
    ):
        head += 1
    return "\n".join(lines[head:])


def _errors_of(action: Action) -> list[str]:
    """The error lines of one action's result."""
    body = _body(action.output)
    failed = action.status is Status.FAILED
    if prints_files(action):
        if failed and len(body.splitlines()) <= 5:
            return error_lines(body) or [v for v in [_verdict(body, None)] if v]
        complaints = _complaints(body, _programs(action.command))
        refused = refusal(body) if not complaints else None
        return [refused] if refused else complaints
    lines = error_lines(body)
    if not lines:
        refused = refusal(body)
        lines = [refused] if refused else []
    if not lines and failed and not last_summary(body):
        verdict = _verdict(body, action.exit_code)
        lines = [verdict] if verdict else []
    return lines


def seen_errors(actions: Sequence[Action]) -> list[SeenError]:
    """The distinct errors of the actions' results, the most recent first."""
    by_shape: dict[str, SeenError] = {}
    for action in actions:
        for line in _errors_of(action):
            key = fold(line)
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

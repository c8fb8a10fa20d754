"""Errors seen in tool results (never in prose or arguments), read by shape, latest first.

A line of a tool result is an error when it has an error's shape, whatever printed it:

- an exception: ``TypeError: …``, pytest's ``E   …``, and the last line of a traceback;
- a severity word as a field: ``error: …``, ``error[E0308]: …``, ``warning[rule]: …``, ``[ERROR]
  …``, ``##[error]…``, ``level=error``, a log line's ``ERROR``/``FATAL`` after its timestamp, a
  linter's ``12:5  error  …``, ``npm ERR! …``;
- a compiler diagnostic: ``path:line:col: …``, ``path:line: error …``, ``path(line,col): error
  …``;
- a non-zero exit stated in a line (``exit code 13``, ``Error 2``, ``non-zero exit status 1``);
- a failure stated in words: "not found", "No such file", "No module named", "denied", "timed
  out", "aborted", "refused", "panicked at", "does not exist", a line ending in "failed";
- in the result of a call that failed, a line saying what was unknown, invalid, missing,
  unexpected or impossible; with none of these, the line that best says how it ended.

Log prefixes (timestamps, tab-separated columns, ANSI colours) are set aside first. Outputs that
print files or search hits are source code, not errors: of those only the printing program's own
complaints count (``rg: src: No such file or directory``, ``fatal: bad object …``). Two errors
are the same when their normalized forms are (numbers, hex ids, quoted names and paths of
temporary directories folded); each is kept at its last occurrence, with the command that
produced it, and marked resolved when a later run of that command succeeded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.worker.compaction.facts.actions import Action, Status, states_exit_code
from tersify.worker.compaction.facts.commands import normalized, prints_files
from tersify.worker.compaction.facts.shell import parse_command, program
from tersify.worker.compaction.facts.testruns import FAILING as _FAILING
from tersify.worker.compaction.facts.testruns import last_summary

_ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_TIMESTAMP = re.compile(
    r"^\s*\[?\d{4}-\d\d-\d\d[T ][\d:.,]+(?:Z|[+-]\d\d:?\d\d)?\]?\s*"
    r"|^\s*\[?\d\d:\d\d:\d\d(?:[.,]\d+)?\]?\s+"
)
_LINE_NUMBERED = re.compile(r"^\s*\d+(?:[\t→:|]|\s{2,})(?!\d+\s+(?:error|warning)\b)")
_CODE = re.compile(r"\b(?:raise|except|throw|catch|def|class|return|assert|import)\b")
_EXCEPTION = re.compile(
    r"^\s*(?:E\s+)?((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Failure|Interrupt)\b:?.*)$"
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("exception", _EXCEPTION),
    ("assertion", re.compile(r"^\s*E\s{2,}(Failed: .+|assert .+)$")),
    ("severity", re.compile(r"^\s*##\[(?:error|fatal)\]\s*(.+)$", re.I)),
    ("severity", re.compile(r"^\s*(\[(?:ERROR|FATAL|CRITICAL|error|fatal|Error|Fatal)\]:?\s*.+)$")),
    ("severity", re.compile(r"^\s*((?:error|fatal|panic|critical)(?:\[[\w/-]+\])?: .+)$", re.I)),
    ("severity", re.compile(r"^\s*(warning\[[\w/-]+\]: .+)$", re.I)),
    ("severity", re.compile(r"^\s*((?:ERROR|FATAL|CRITICAL)\b[:\s]\s*\S.+)$")),
    (
        "severity",
        re.compile(
            r"\"?\b(?:level|severity|status)\"?\s*[=:]\s*\"?(?:error|fatal|critical)\b\"?.*?"
            r"\b(?:msg|message|error)\"?\s*[=:]\s*\"?([^\"]+)",
            re.I,
        ),
    ),
    ("severity", re.compile(r"^\s*(\d+:\d+\s+error\s+.+)$")),
    ("severity", re.compile(r"^\s*(npm ERR! .+|ERR_\w+.*)$")),
    ("diagnostic", re.compile(r"^\s*((?:[\w./\\@+-]+\.\w+):\d+:\d+:? \S.*)$")),
    (
        "diagnostic",
        re.compile(
            r"^\s*((?:[\w./\\@+-]+\.\w+):\d+: (?:error|fatal|undefined|cannot|syntax error).*)$",
            re.I,
        ),
    ),
    ("diagnostic", re.compile(r"^\s*((?:[\w./\\@+-]+\.\w+)\(\d+,\d+\): (?:error|fatal).*)$", re.I)),
    ("verdict", re.compile(r"^\s*((?:FAIL|FAILED|FAILURE|ERROR):? [A-Z].+)$")),
    (
        "exit",
        re.compile(
            r"^(.*(?:\b(?:exit(?:ed)? (?:with )?(?:code|status)|exit code|non-zero exit status)|"
            r"\*\*\* \[[^\]]*\] Error) :?[1-9]\d*\b.*)$",
            re.I,
        ),
    ),
    (
        "words",
        re.compile(
            r"^(.*(?:\bnot found\b|No such file or directory|No module named|Permission denied|"
            r"\b(?:access|permission) denied\b|\btimed out\b|\bwas aborted\b|"
            r"\bConnection refused\b|"
            r"\bpanicked at\b|Segmentation fault|\bdoes not exist\b|\bcommand not found\b).*)$",
            re.I,
        ),
    ),
    (
        "failed",
        re.compile(r"^(.*[^\W\d].*(?<!\b0 )\bfailed[.!]?)$|^(.*\bfailed(?: with|:) \S.*)$", re.I),
    ),
    # an exception a script caught and printed: "check failed with TypeError: …"
    ("exception", re.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): \S.*)$")),
)
_FAILED_WORDS = re.compile(
    r"\b(?:unknown|invalid|unrecognized|unexpected|missing|cannot|can't|could not|couldn't|"
    r"unable to|not allowed|not supported|not permitted|is required|refused|rejected|"
    r"conflict|error|failure|failed)\b",
    re.I,
)
_NO_VALUE = re.compile(
    r"^\s*[\w ]{1,30}:\s*\(?(?:none|null|nil|n/a|empty|-|0|false|no errors?)\)?\.?\s*$", re.I
)
_FAILED_BECAUSE = re.compile(
    r"^(?:FAILED|ERROR) \S+ - ((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b.*)$"
)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_TAG = re.compile(r"</?[a-z_]+>")
_NOT_VERDICT = re.compile(
    r"^(?:Exit code:? -?\d+|Process exited with code -?\d+|Chunk ID: |Wall time: |"
    r"Original token count: |Output:$|The output of your last command was too long|Please try a)"
)
_HEADER_LINES = 6
_FOLD_QUOTED = re.compile(r"(['\"`]).*?\1")
_FOLD_TEMPORARY = re.compile(r"(?:/private)?(?:/var/folders|/tmp)/\S*")
_FOLD_NUMBER = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b|\d+", re.I)
_MAX_PER_OUTPUT = 5
_MAX_SCAN = 1000
_TEST_STATUS = re.compile(
    r"^\s*(?:ERROR|FAIL|FAILED|PASSED|ok)\b:? +[\w./:\[\]-]+(?: \(|$| - )|^\s*(?:not )?ok \d+\b"
)
_MAX_LINE = 240
_COMPLAINT = re.compile(r"^([\w.-]+): (.+)$")


@dataclass(slots=True)
class SeenError:
    """One error (the latest of its shape): its line, where, how often, and whether it passed."""

    line: str
    index: int
    command: str | None
    count: int = 1
    resolved: bool = False


def fold(line: str) -> str:
    """An error's normalized form: two errors are the same when these are equal."""
    line = _FOLD_TEMPORARY.sub("T", _FOLD_QUOTED.sub("Q", line))
    return _FOLD_NUMBER.sub("N", line).strip().lower()


def plain_line(raw: str) -> str:
    """A result line without its colours and log prefixes (tab-separated columns before the
    message, a timestamp, a ``#`` comment mark) and cut to the length read."""
    line = _ANSI.sub("", raw[:_MAX_SCAN]).rstrip()
    if "\t" in line.strip():
        line = line.rsplit("\t", 1)[-1]
    line = _TIMESTAMP.sub("", line)
    return re.sub(r"^#\s+", "", line)


def _skipped(line: str) -> bool:
    """Lines that quote code or text rather than report: listings, diffs, comments, prompts."""
    start = line.lstrip()
    if start.startswith("##["):
        return False  # a CI runner's severity mark, not a comment
    return bool(_LINE_NUMBERED.match(line)) or start.startswith(("+", "-", "#", "//", ">>>", "|"))


def _match(line: str) -> str | None:
    """The error ``line`` states, by the first rule whose shape it has, else None (a field
    whose value says there is none, ``Error: (none)``, is no error)."""
    if _NO_VALUE.match(line) or states_exit_code(line):
        return None  # a status line: how the run ended, said by the Commands section
    for _, pattern in _RULES:
        match = pattern.search(line)
        if match is None:
            continue
        found = next(g for g in match.groups() if g is not None).strip()
        if _CODE.search(found.split(":", 1)[0]):
            return None  # a line of code that names an exception
        return found[:_MAX_LINE]
    return None


def error_lines(output: str) -> list[str]:
    """The error lines of one tool output, at most a few, in order."""
    found: list[str] = []
    traceback = False
    for raw in output.splitlines():
        if len(found) >= _MAX_PER_OUTPUT:
            break
        line = plain_line(raw)
        if traceback and line and not line[0].isspace():
            traceback = False
            if not _skipped(line) and line.strip() not in found:
                found.append(line.strip()[:_MAX_LINE])  # a traceback's last line
                continue
        if _TRACEBACK.match(line):
            traceback = True
            continue
        if _skipped(line) or traceback:
            continue
        failed = _FAILED_BECAUSE.match(line)
        if failed and failed.group(1) not in found:
            found.append(failed.group(1)[:_MAX_LINE])  # pytest's "FAILED id - Error: why"
            continue
        if _TEST_STATUS.match(line) or last_summary(line):
            continue  # a test runner's status line: a test's state, read by ``testruns``
        error = _match(line)
        if error and error not in found:
            found.append(error)
    return found


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
            found.append(line.strip()[:_MAX_LINE])
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
    said = next((line for line in useful[:50] if _FAILED_WORDS.search(line)), None)
    if said is not None:
        return said[:_MAX_LINE]
    return (useful[-1] if exit_code is not None else useful[0])[:_MAX_LINE]


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
        return _complaints(body, _programs(action.command))
    lines = error_lines(body)
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

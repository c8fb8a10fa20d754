"""What one line of tool output signals: a verdict, an exit code, an error, a warning, a location.

Matching is substring tests on the lower-cased line plus a few patterns anchored at its start:
Python's regex engine is slow on unanchored alternations, and this runs on every candidate line
of multi-megabyte logs.
"""

from __future__ import annotations

import re
from enum import IntEnum

from tersify.contract import ToolType


class Kind(IntEnum):
    """Why a line is salient; the value is its base weight."""

    QUERY = 2
    WARNING = 3
    LOCATION = 4
    FRAME = 6
    PROBLEM = 6
    ERROR = 8
    EXIT = 9
    VERDICT = 10


_VERDICT_START = re.compile(
    r"=+ .*(?:passed|failed|error|skipped|xfailed|xpassed|deselected|no tests ran)"
    r"|(?:FAILED|OK)(?: \(.*\))?\s*$|Ran \d+ tests? in |Found \d+ |Success: no issues found"
    r"|All checks passed|test result: |(?:ok|FAIL|PASS)\s+\S+\s+[\d.]+m?s\b|Tests?:\s+\d+"
    r"|\d+ (?:passing|failing|pending)\b|make(?:\[\d+\])?: \*\*\*|Summary of failures"
    r"|\d+ (?:failed|passed)\b|BUILD (?:SUCCESSFUL|FAILED)|Build (?:succeeded|FAILED|failed)"
    r"|error: could not compile|\[\*\] \d+ fixable|\d+ unsafe fix"
    r"|\d+ (?:errors?|warnings?) generated"
)
_VERDICT_PHRASES = ("build successful", "build failed", "build succeeded", " generated.")
_EXIT_PHRASES = (
    "exit code", "exit status", "exited with", "exit_code", "exitcode", "returned non-zero",
    "non-zero exit", "process finished with",
)  # fmt: skip
_ERROR_START = re.compile(
    r"(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)\b(?::|$)"
    r"|Exception in thread|panic: |fatal error:|FATAL|Segmentation fault|E\s{2,}\S|E\s+\w+Error\b"
)
_ERROR_PHRASES = (
    "error:", "error[", "errors:", " error ", "segmentation fault", "core dumped", "err!",
    "assertionerror", "exception:", "*** ", "] error",
)  # fmt: skip
# Error words as words: "failed" reports a failure, "failure_count" and "on_fatal" name things.
_ERROR_WORDS = re.compile(
    r"(?<![\w])(?:fatal|panic|panicked|failed|failure|traceback|aborted)(?![\w])"
)
# A line of code (quoted by a traceback, a diff, a test runner): it names exceptions, it does
# not report one. A diff's +, - or space comes first.
_CODE_LINE = re.compile(
    r"[+\- >]?\s*(?:except|raise|catch|throw|throws|return|import|from|def|class|elif|else|try"
    r"|finally|with|async|await|const|let|var|function|public|private|protected|static)\b"
)
# A location then an exception: "store.py:18: KeyError" (pytest's short traceback).
_LOCATED_EXCEPTION = re.compile(r"\S+:\d+:(?:\d+:)?\s+(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b")
_ERROR_WORDS_UPPER = ("FAILED", "FAIL ", "ERROR", "FATAL", "CRITICAL", "PANIC")
_PROBLEM_PHRASES = (
    "cannot", "can't", "could not", "couldn't", "unable to", "no such file", "not found",
    "permission denied", "access denied", "undefined reference", "unresolved",
)  # fmt: skip
_WARNING_PHRASES = ("warning:", "warning[", " warning ", "warn:", "[warn", "deprecat")
# Source excerpts that linters and test runners quote ("298 |     except KeyError:"): the code
# they show is not itself an error message.
CODE_FRAME = re.compile(r"\s*\d*\s*[|│]|\s*\d+\s*[-+]\s|>\s{3}|\s{4,}\^+\s*$|\s+[-+]\s{2,}")
_PATH_TOKEN = re.compile(r"(?:[\w.~-]*/)*[\w.-]+\.\w{1,8}")
LONG_LINE = 300


def _is_sentence(stripped: str) -> bool:
    """Prose: eight words or more, starting with a capital or lower-case word."""
    words = stripped.split()
    return len(words) >= 8 and words[0][:1].isalpha() and not words[0].isupper()


def is_verdict(stripped: str) -> bool:
    """Whether a (stripped) line sums up a run: test totals, error counts, build results."""
    if _VERDICT_START.match(stripped):
        return True
    low = stripped.lower()
    return any(phrase in low for phrase in _VERDICT_PHRASES)


def is_location_token(token: str) -> bool:
    """Whether ``token`` (the text before ``:line:col``) is a file path."""
    return _PATH_TOKEN.fullmatch(token.lstrip("([\"'<>")) is not None


def classify_line(line: str, tool_type: ToolType) -> Kind | None:
    """The strongest kind of salience ``line`` shows for this tool type, or None."""
    head = line[:LONG_LINE]
    stripped = head.strip()
    if not stripped:
        return None
    low = head.lower()
    if tool_type is not ToolType.COMMAND_OUTPUT:
        problem = any(p in low for p in _PROBLEM_PHRASES)
        return Kind.PROBLEM if problem or ("error" in low and ": " in stripped) else None
    if CODE_FRAME.match(head):
        return None
    if is_verdict(stripped):
        return Kind.VERDICT
    if any(p in low for p in _EXIT_PHRASES):
        return Kind.EXIT
    if _ERROR_START.match(stripped) or _ERROR_START.match(head):
        return Kind.ERROR
    if _LOCATED_EXCEPTION.match(stripped):
        return Kind.ERROR
    if _CODE_LINE.match(head):
        return None
    if (
        any(p in low for p in _ERROR_PHRASES)
        or _ERROR_WORDS.search(low)
        or low.endswith((" error", " failed"))
        or any(w in head for w in _ERROR_WORDS_UPPER)
    ):
        # A sentence that mentions an error (a commit message, a doc line) says less than a
        # line that reports one.
        return Kind.WARNING if _is_sentence(stripped) else Kind.ERROR
    if any(p in low for p in _PROBLEM_PHRASES):
        return Kind.PROBLEM
    if any(p in low for p in _WARNING_PHRASES) or "WARN" in head:
        return Kind.WARNING
    return None

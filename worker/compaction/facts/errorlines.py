"""The shapes of an error line in a tool result, whatever printed it.

A line of a tool result is an error when it has an error's shape:

- an exception: ``TypeError: …``, pytest's ``E   …``, and the last line of a traceback;
- a severity word as a field: ``error: …``, ``Error <what>: …``, ``error[E0308]: …``,
  ``warning[rule]: …``, ``[ERROR] …``, ``##[error]…``, ``level=error``, a log line's
  ``ERROR``/``FATAL`` after its timestamp, a linter's ``12:5  error  …``, ``npm ERR! …``, a
  JSON ``"error": "…"`` field, a line inside an ``<…error…>`` tag;
- a compiler diagnostic: ``path:line:col: …``, ``path:line: error …``, ``path(line,col): error
  …``;
- a non-zero exit stated in a line (``exit code 13``, ``Error 2``, ``non-zero exit status 1``);
- a failure stated in words: "not found", "No such file", "No module named", "denied", "timed
  out", "aborted", "refused", "rejected", "not recognized", "cannot find", "panicked at",
  "does not exist", a line ending in "failed";
- a tool's refusal in plain words: a line opening with "Failed to", "Cannot", "Could not",
  "Unable to", "Invalid", "No such"… (``refusal``: in a short result, any line saying what was
  unknown, invalid, missing, too large, not unique or impossible).

Log prefixes (timestamps, tab-separated columns, ANSI colours) are set aside first; lines that
quote code or text (numbered listings, diff lines, comments, prompts) never count. Two errors
are the same when their normalized forms (``fold``) are.
"""

from __future__ import annotations

import re

from tersify.worker.compaction.facts.actions import states_exit_code
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
# A line that opens by saying the call could not be done: a tool's refusal in plain words.
_OPENER = (
    r"(?:failed to|failed:|cannot|can't|could not|couldn't|unable to|refusing to|refused to|"
    r"not allowed|not permitted|invalid|no such|missing required|aborted|timed out|"
    r"operation not permitted|access is denied|(?:the )?user (?:denied|rejected|declined|"
    r"cancell?ed|interrupted|doesn't want))\b"
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("exception", _EXCEPTION),
    ("assertion", re.compile(r"^\s*E\s{2,}(Failed: .+|assert .+)$")),
    ("severity", re.compile(r"^\s*##\[(?:error|fatal)\]\s*(.+)$", re.I)),
    ("severity", re.compile(r"^\s*(\[(?:ERROR|FATAL|CRITICAL|error|fatal|Error|Fatal)\]:?\s*.+)$")),
    ("severity", re.compile(r"^\s*((?:error|fatal|panic|critical)(?:\[[\w/-]+\])?: .+)$", re.I)),
    ("severity", re.compile(r"^\s*(warning\[[\w/-]+\]: .+)$", re.I)),
    ("severity", re.compile(r"^\s*((?:ERROR|FATAL|CRITICAL)\b[:\s]\s*\S.+)$")),
    ("severity", re.compile(r"^\s*((?:error|fatal)\b[\w ,.'()-]{1,60}?: \S.*)$", re.I)),
    (
        "severity",
        re.compile(
            r"\"?\b(?:level|severity|status)\"?\s*[=:]\s*\"?(?:error|fatal|critical)\b\"?.*?"
            r"\b(?:msg|message|error)\"?\s*[=:]\s*\"?([^\"]+)",
            re.I,
        ),
    ),
    (
        "severity",
        re.compile(r"\"(?:error|err|error_?message)\"\s*:\s*\"((?:[^\"\\]|\\.){3,})\"", re.I),
    ),
    ("severity", re.compile(r"^\s*<\w*error\w*>\s*(\S.*?)\s*(?:</\w*error\w*>)?\s*$", re.I)),
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
    ("refusal", re.compile(r"^\s*((?:[\w.-]+: )?(?:\(\w+\) )?" + _OPENER + r".*)$", re.I)),
    (
        "words",
        re.compile(
            r"^(.*(?:\bnot found\b|No such file or directory|No module named|Permission denied|"
            r"\bdenied\b|\btimed out\b|\bwas aborted\b|\bConnection refused\b|\brejected\b|"
            r"\bnot recognized as\b|\b(?:cannot|could not|unable to) find\b|"
            r"\bis not defined\b|\bundefined reference\b|\bout of memory\b|No space left|"
            r"\bpanicked at\b|Segmentation fault|\bdoes not exist\b|\bcommand not found\b|"
            r"\b(?:does not|doesn't|did not|didn't) match\b|^Exception in thread\b|"
            r"\bMerge conflict in\b).*)$",
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
FAILED_WORDS = re.compile(
    r"\b(?:unknown|invalid|unrecognized|unexpected|missing|cannot|can't|could not|couldn't|"
    r"unable to|not allowed|not supported|not permitted|is required|are required|refused|"
    r"rejected|denied|declined|conflict|error|failure|failed|not found|no match(?:es)?|"
    r"0 (?:occurrences|matches)|no occurrences|not unique|multiple (?:occurrences|matches)|"
    r"too (?:large|long|big|many)|exceeds?|does not exist|doesn't exist|not exist|"
    r"must (?:be|not|have)|did not match|didn't match|does not match|doesn't match|"
    r"not (?:yet )?(?:been )?read)\b",
    re.I,
)
"""Words saying what was unknown, invalid, missing or impossible: how a refusal reads."""
_NONE_OF_THEM = re.compile(r"\b(?:no|0|zero|without) (?:errors?|failures?|conflicts?)\b", re.I)
_NO_VALUE = re.compile(
    r"^\s*[\w ]{1,30}:\s*\(?(?:none|null|nil|n/a|empty|-|0|false|no errors?)\)?\.?\s*$", re.I
)
_FAILED_BECAUSE = re.compile(
    r"^(?:FAILED|ERROR) \S+ - ((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\b.*)$"
)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_TEST_STATUS = re.compile(
    r"^\s*(?:ERROR|FAIL|FAILED|PASSED|ok)\b:? +[\w./:\[\]-]+(?: \(|$| - )|^\s*(?:not )?ok \d+\b"
)
_FOLD_QUOTED = re.compile(r"(['\"`]).*?\1")
_FOLD_TEMPORARY = re.compile(r"(?:/private)?(?:/var/folders|/tmp)/\S*")
_FOLD_NUMBER = re.compile(r"0x[0-9a-f]+|\b[0-9a-f]{7,40}\b|\d+", re.I)
_MAX_PER_OUTPUT = 5
_MAX_SCAN = 1000
MAX_LINE = 240
_SHORT_LINES = 4
_SHORT_CHARS = 600


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


def skipped(line: str) -> bool:
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
        return found[:MAX_LINE]
    return None


def error_lines(output: str) -> list[str]:
    """The error lines of one tool output, at most a few, in order, each shape once (lines that
    differ only in numbers or quoted names are one)."""
    found: list[str] = []
    shapes: set[str] = set()
    traceback = False
    for raw in output.splitlines():
        if len(found) >= _MAX_PER_OUTPUT:
            break
        line = plain_line(raw)
        if traceback and line and not line[0].isspace():
            traceback = False
            if not skipped(line) and fold(line) not in shapes:
                found.append(line.strip()[:MAX_LINE])  # a traceback's last line
                shapes.add(fold(line))
                continue
        if _TRACEBACK.match(line):
            traceback = True
            continue
        if skipped(line) or traceback:
            continue
        failed = _FAILED_BECAUSE.match(line)
        if failed and fold(failed.group(1)) not in shapes:
            found.append(failed.group(1)[:MAX_LINE])  # pytest's "FAILED id - Error: why"
            shapes.add(fold(failed.group(1)))
            continue
        if _TEST_STATUS.match(line) or last_summary(line):
            continue  # a test runner's status line: a test's state, read by ``testruns``
        error = _match(line)
        if error and fold(error) not in shapes:
            found.append(error)
            shapes.add(fold(error))
    return found


def _quoted(line: str) -> bool:
    """Lines a refusal is never read from: quoted code or text, structured data, test states."""
    return skipped(line) or line.startswith(("{", "[{", '"')) or bool(_TEST_STATUS.match(line))


def says_failure(line: str) -> bool:
    """True when ``line`` says what was unknown, invalid, missing or impossible."""
    return bool(FAILED_WORDS.search(line)) and not _NONE_OF_THEM.search(line)


def refusal(output: str) -> str | None:
    """In a short result (a few lines), the line that says the call was refused or could not
    be done (``Parameter 'x' is required``, ``0 occurrences found``), else None."""
    lines = [plain_line(raw).strip() for raw in output.splitlines()]
    lines = [line for line in lines if line]
    if not lines or len(lines) > _SHORT_LINES or len(output) > _SHORT_CHARS:
        return None
    if last_summary(output):
        return None  # a test run's count line
    said = next(
        (line for line in lines if not _quoted(line) and says_failure(line)),
        None,
    )
    return said[:MAX_LINE] if said else None

"""The parts of an output that change from run to run without saying anything: clock times and
dates, durations, memory addresses and object ids, temporary paths, process ids, ports, seeds
and progress counters. Two runs' lines are compared with each of them replaced by a mark.

Counts are not volatile: "3 failed, 40 passed" keeps its numbers, so a changed count is a
changed line. Each pattern is tried only when a cheap test says the text may hold it, and runs
once over the whole text (a line-by-line loop costs ten times as much on a long log).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from tersify.text.sanitize import sanitize

# (a cheap test on the text, the pattern, its mark), in order: a timestamp before the clock
# time inside it, a clock time before the durations its digits could be read as, a host's port
# and a file's line before the other counters.
_MARKS: Final[tuple[tuple[Callable[[str], bool], re.Pattern[str], str], ...]] = (
    (
        lambda t: "-" in t,
        re.compile(
            r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)?(?:Z|[+-]\d\d:?\d\d)?\b"
        ),
        "<time>",
    ),
    (
        lambda t: ":" in t,
        re.compile(r"(?<![\d:])\d{1,2}:\d\d:\d\d(?:[.,]\d+)?(?![\d:])"),
        "<time>",
    ),
    (
        lambda t: "0x" in t or "0X" in t,
        re.compile(r"\b0[xX][0-9a-fA-F]{4,}\b"),
        "<addr>",
    ),
    (
        lambda t: True,
        # hex digits with both a digit and a letter: a commit, an object, a build, a UUID
        re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b", re.IGNORECASE),
        "<id>",
    ),
    (
        lambda t: "tmp" in t or "temp" in t.lower() or "/var/folders/" in t,
        re.compile(
            r"(?:/private)?/(?:var/)?tmp/[^\s/:'\"),\]]+"
            r"|/var/folders/[^\s:'\"),\]]+?/T/[^\s/:'\"),\]]+"
            r"|\\(?:AppData\\Local\\)?Temp\\[^\s\\:'\"),\]]+"
            r"|\b(?:tmp|temp)[-_.]?(?=[A-Za-z_]*\d)[A-Za-z0-9_]{5,}\b"
            r"|\bpytest-\d+\b",
            re.IGNORECASE,
        ),
        "<tmp>",
    ),
    (
        lambda t: ":" in t,
        re.compile(r"(localhost|\b\d{1,3}(?:\.\d{1,3}){3}|\]):\d{1,5}\b"),
        r"\1:<port>",
    ),
    (
        lambda t: True,
        # where in a file: "a.py:12:5" after an edit is "a.py:14:5", the same report
        re.compile(r"(\.[A-Za-z]{1,6}):\d+(?::\d+)?\b"),
        r"\1:<line>",
    ),
    (
        lambda t: "line " in t,
        re.compile(r"\b(line )\d+\b"),
        r"\1<line>",
    ),
    (
        lambda t: True,
        re.compile(
            r"(?<![\w.])\d+(?:\.\d+)?[ \t]?(?:ns|us|µs|ms|msec|s|sec|secs|seconds?|m|min|mins|"
            r"minutes?|h|hrs?|hours?)(?!\w)"
            r"|(?<![\w.])\d+m\d+(?:\.\d+)?s\b",
        ),
        "<dur>",
    ),
    (
        lambda t: True,
        re.compile(
            r"\b(?:pid|thread|tid|seed)\b[ =:#]*\d+"
            r"|\[[ \t]*\d{1,3}%\]"
            r"|[(\[][ \t]*\d+[ \t]*/[ \t]*\d+[ \t]*[)\]]",
            re.IGNORECASE,
        ),
        "<n>",
    ),
)
_SPACES: Final = re.compile(r"[ \t]+")
_PATH_MARKS: Final = frozenset({"<tmp>", r"\1:<port>"})


def volatile_path(word: str) -> str:
    """One word of a command with a temporary path or a host's port in it marked (the other
    marks would merge commands that choose different things: commits, lines, dates)."""
    for may_hold, pattern, mark in _MARKS:
        if mark in _PATH_MARKS and may_hold(word):
            word = pattern.sub(mark, word)
    return word


def normalized_text(text: str) -> str:
    """``text`` sanitized (ANSI codes and control characters gone, LF line ends) with every
    volatile part replaced by its mark and runs of blanks made one space."""
    text = sanitize(text)
    for may_hold, pattern, mark in _MARKS:
        if may_hold(text):
            text = pattern.sub(mark, text)
    return _SPACES.sub(" ", text)


def normalized_lines(text: str) -> list[str]:
    """Each line of ``text`` as ``normalized_text`` makes it, stripped (one per line of the
    sanitized text, so indices match ``sanitize(text).split("\\n")``)."""
    return [line.strip() for line in normalized_text(text).split("\n")]


def normalized_line(line: str) -> str:
    """One line as ``normalized_lines`` reads it."""
    if len(line) <= _CACHED_LINE_CHARS:
        return _normalized_short_line(line)
    return normalized_lines(line)[0]


# Matching two runs reads each new and gone line several times (by verdict, by counts, as
# read), and a session's runs of one command share most of their lines: a short line's reading
# is kept (at most 16,384 of them, 2,000 chars each).
_CACHED_LINE_CHARS = 2000


@lru_cache(maxsize=16_384)
def _normalized_short_line(line: str) -> str:
    return normalized_lines(line)[0] if line else ""

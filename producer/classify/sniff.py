"""What an output looks like, read from a sample of it: the content tests of the tool kinds.

Each test says whether an output looks like one tool type; ``tersify.classify.kinds`` gives
every kind its tests and the order they run in, when neither the tool name nor the command
tells. JSON, XML, YAML and tables are also read here as data whatever printed them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from tersify.text.sanitize import sanitize
from tersify.text.signals import is_verdict

_SAMPLE_HEAD = 48_000
_SAMPLE_TAIL = 12_000
_MAX_LINES = 400
_LOG_SHARE = 0.5  # of a log's lines open with a time stamp; tracebacks and wraps are the rest

_TRACEBACK = re.compile(
    r"^Traceback \(most recent call last\):|^\s*File \"[^\"]+\", line \d+, in |^panic: "
    r"|^Exception in thread |^\s+at [\w.$<>]+\([\w.]+:\d+\)|^thread '.*' panicked at",
    re.M,
)
_DIAGNOSTIC = re.compile(
    r"^\S+:\d+(?::\d+)?: (?:fatal )?(?:error|warning|note)\b|^(?:error|warning)(?:\[\w+\])?: "
    r"|^make(?:\[\d+\])?: \*\*\*|^npm ERR!|^=+ (?:test session starts|FAILURES|ERRORS) =+"
    r"|^(?:FAILED|ERROR) \S+::|^-{3,} FAIL: |^E\s{3,}\S",
    re.M,
)
_SEARCH_HIT = re.compile(r"^(?:\./)?[^\s:][^:\n]{0,300}?:\d+[:-]")
# A log line opens with its time: ISO or Go dates, syslog's "Mar  1 12:00:01", glog's
# "I0301 12:00:01.5", a bare clock, or logfmt's time=; then a space (a CSV's next field would
# follow a comma).
_LOG_LINE = re.compile(
    r"^(?:\[\s*)?(?:\d{4}[-/]\d{2}[-/]\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
    r"(?:Z|[+-]\d{2}:?\d{2})?|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|[IWEF]\d{4} \d{2}:\d{2}:\d{2}"
    r"(?:\.\d+)?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)\]?[\s|]|^(?:time|ts)=\S"
)
_SEARCH_COUNT = re.compile(r"^(?:\./)?[^\s:][^:\n]{0,300}?:\d+$")
_CAT_N = re.compile(r"^\s*\d+\t")
_LS_LONG = re.compile(r"^[-dlcbpsD][rwxsStT-]{9}[.+@]?\s+\d+\s")
_TREE = re.compile(r"^[\s│|]*(?:├──|└──|\|--|`--) ")
_PATH_ONLY = re.compile(r"^(?:\./|/|~/)?[\w@+.,=~-]+(?:/[\w@+.,=~ -]*)*/?$")
_HTML = re.compile(r"<!doctype html|<html[\s>]|<head[\s>]|<body[\s>]|<div[\s>]|<p>", re.I)
_YAML = re.compile(r"^\s*(?:- )?[\w\"'./-]+:(?: |$)|^\s*- \S|^---\s*$")
_CODE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |#include|#!|function |const |let |var |fn |"
    r"pub |impl |struct |package |func |public |private |protected |return\b|if \(|for \(|"
    r"@\w+|module |export |using |namespace |template|[}{]\s*$|\$\w+ = |param\(|"
    r"(?:else|elif|elseif|foreach|while|switch|try|catch|finally|then|do|done|fi|esac)\b|"
    r"[A-Z][a-z]+-[A-Z]\w+ |//|/\*|\*/|<#|#>|\[[\w.\"-]+\]\s*$|[\w.-]+ = \S)"
    r"|[;{(\[,]\s*$|^\s*[}\])]+[;,)]*\s*$"  # a line closing code; "{default}" at an end is no code
)
# Markdown headings are followed by a blank line; code comments ("# step 2") by more code.
_MD_HEADING = re.compile(
    r"^#{1,6} \S[^\n]*\n[ \t]*\n|^\S(?:(?! {2})[^\n])*\n(?:={3,}|-{3,})[ \t]*$", re.M
)  # a setext heading's text has no column gaps: a table's header row over its rule is none
_WORD_RUN = re.compile(r"[^\W\d_]+")
_DIGIT_RUN = re.compile(r"\d+")
_SPACE_RUN = re.compile(r"\s+")
_TEMPLATE_REPEATS = 3
_TEMPLATED = 0.5
"""Past this share of lines of repeated shapes, running text is a report, not a document."""
_LETTER = re.compile(r"[^\W\d_]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CODE_CHARS = re.compile(r"[{}();=<>$\\|]")
# Searched in the lowered text: a case-blind search of 60 KB is five times slower.
_WEAK_COMMAND = re.compile(r"\b(?:error|warning|failed|exception|exit code)\b")
# A unified diff (diff -u, git diff, a formatter's --diff): a command's report, not a file.
_DIFF = re.compile(r"^--- \S.*\n\+\+\+ \S.*\n@@ -\d", re.M)
# A symbol index: name, kind, line number, file ("ctags -x", "cscope -L"): locations to jump to.
_INDEX = re.compile(r"^\S+\s+[a-z]\w*\s+\d+\s+\S+\.\w{1,8}\s")


def _sample(text: str) -> str:
    if len(text) <= _SAMPLE_HEAD + _SAMPLE_TAIL:
        return sanitize(text)
    return sanitize(text[:_SAMPLE_HEAD] + "\n" + text[-_SAMPLE_TAIL:])


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is a JSON document, JSON lines, or the start of a big JSON value."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return False
    if stripped[-1] in "]}":
        try:
            json.loads(stripped)
            return True
        except ValueError:
            pass
    lines = [line for line in stripped[:_SAMPLE_HEAD].split("\n")[:50] if line.strip()]
    if len(lines) >= 2 and all(line.lstrip()[:1] in "[{" for line in lines[:-1]):
        try:
            for line in lines[:-1]:
                json.loads(line)
            return True
        except ValueError:
            pass
    # A value too big or cut short to parse: judge by its opening.
    # A log line may open with a bracket too ("[1.84s][info] ...", "[ 50%] Building", "[  0.000]
    # Connected"): a number counts only as an array's first element, or as the whole line.
    return (
        re.match(
            r'^[\[{]\s*(?:"[^"\n]{1,200}"\s*:|\{\s*"|\[|"|-?\d+(?:\.\d+)?\s*(?:,|\]\s*(?:\n|$))'
            r"|true|false|null)",
            stripped,
        )
        is not None
    )


_DIAGNOSTIC_WORD = re.compile(r"^\s*(?:error|warning|fatal|note|help|hint)\b", re.I)
_CSV_DELIMITERS = (",", "\t", ";", "|")


_XML_START = re.compile(r"\s*(?:<\?xml\b|<([A-Za-z][\w:.-]*)[\s>])")


def looks_like_xml(text: str) -> bool:
    """Whether ``text`` is an XML document (not an HTML page): a declaration or a root element
    closed at the end."""
    head = text[:2000]
    match = _XML_START.match(head)
    if match is None or _HTML.search(head[:600]):
        return False
    return head.lstrip().startswith("<?xml") or text.rstrip().endswith(f"</{match.group(1)}>")


def is_machine_data(text: str) -> bool:
    """Whether ``text`` is JSON or XML: data even when a file-reading program printed it."""
    sample = text[:_SAMPLE_HEAD]
    return looks_like_json(sample if len(text) > len(sample) else text) or looks_like_xml(text)


def parses_as_data(text: str) -> bool:
    """Whether ``text`` is data whatever printed it: JSON, YAML or a delimited table (CSV, TSV).

    Strict on purpose: a command's log is never taken for data because some lines look like
    ``key: value``.
    """
    if is_machine_data(text):
        return True
    sample = _sample(text)
    lines = [line for line in sample.split("\n") if line.strip()][:_MAX_LINES]
    if len(lines) < 3 or any(_DIAGNOSTIC_WORD.match(line) for line in lines):
        return False
    if _ratio(lines, _LOG_LINE) >= _LOG_SHARE:  # "12:00:01,244 INFO …" is no CSV row
        return False
    return _is_yaml(lines) or _is_table(lines)


def _is_yaml(lines: list[str]) -> bool:
    """Mostly ``key: value`` and ``- item`` lines, some of them nested, no code."""
    nested = sum(1 for line in lines if line[:1] in " -" and _YAML.match(line))
    return (
        _ratio(lines, _YAML) >= 0.85 and nested >= max(2, len(lines) // 5)
        and _ratio(lines, _CODE) < 0.1
    )  # fmt: skip


def _is_table(lines: list[str]) -> bool:
    """A header and rows that all split into the same number (≥ 2) of fields."""
    for delimiter in _CSV_DELIMITERS:
        counts = [line.count(delimiter) for line in lines[:60]]
        width = counts[0]
        if width >= 1 and sum(1 for c in counts if c == width) >= 0.9 * len(counts):
            header = lines[0].split(delimiter)
            return not any(cell.strip().replace(".", "").isdigit() for cell in header)
    return False


def _ratio(lines: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for line in lines if pattern.search(line)) / len(lines) if lines else 0.0


@dataclass(frozen=True, slots=True)
class Sample:
    """What the content tests read of an output: its sampled head and tail, their non-blank
    lines and the last lines stripped (the verdicts), and the output itself."""

    output: str
    text: str
    lines: list[str]
    tail: list[str]

    @classmethod
    def of(cls, output: str) -> Sample:
        """The sample of ``output`` (its head and tail past ``_SAMPLE_HEAD + _SAMPLE_TAIL``)."""
        text = _sample(output)
        lines = [line for line in text.split("\n") if line.strip()][:_MAX_LINES]
        tail = [line.strip() for line in text.split("\n")[-40:] if line.strip()]
        return cls(output, text, lines, tail)


SniffTest = Callable[[Sample], bool]
"""A content test: whether a sample looks like one tool type (``tersify.classify.kinds``)."""


def json_document(s: Sample) -> bool:
    """JSON, JSON lines, or the start of a big JSON value."""
    output = s.output
    return looks_like_json(s.text if len(output) == len(s.text) else output[:_SAMPLE_HEAD])


def delimited_table(s: Sample) -> bool:
    """Rows under a header that all split into the same number of fields (CSV, TSV)."""
    lines = s.lines
    return len(lines) >= 3 and _ratio(lines, _LOG_LINE) < _LOG_SHARE and _is_table(lines)


def run_report(s: Sample) -> bool:
    """A traceback anywhere, or a verdict (test totals, a build result) near the end."""
    return _TRACEBACK.search(s.text) is not None or any(is_verdict(line) for line in s.tail)


def log_lines(s: Sample) -> bool:
    """An application's or a service's log: most lines that are not indented (a traceback's
    frames, a wrapped message) open with a time stamp."""
    return _ratio([line for line in s.lines if line[0] not in " \t"], _LOG_LINE) >= _LOG_SHARE


def diagnostics(s: Sample) -> bool:
    """Compiler or linter diagnostics: two or more, or one in a short output."""
    found = len(_DIAGNOSTIC.findall(s.text))
    return found >= 2 or (len(s.lines) < 6 and found > 0)


def unified_diff(s: Sample) -> bool:
    """A unified diff (diff -u, git diff, a formatter's --diff): a command's report."""
    return _DIFF.search(s.text) is not None


def numbered_file(s: Sample) -> bool:
    """Lines numbered as ``cat -n`` numbers them."""
    return _ratio(s.lines, _CAT_N) >= 0.8


def symbol_index(s: Sample) -> bool:
    """A symbol index (``ctags -x``, ``cscope -L``): locations to jump to."""
    return _ratio(s.lines, _INDEX) >= 0.6


def search_hits(s: Sample) -> bool:
    """``path:line:`` hits, or ``path:count`` rows."""
    return _ratio(s.lines, _SEARCH_HIT) >= 0.6 or _ratio(s.lines, _SEARCH_COUNT) >= 0.8


def long_listing(s: Sample) -> bool:
    """``ls -l`` rows or ``tree`` art."""
    return _ratio(s.lines, _LS_LONG) >= 0.4 or _ratio(s.lines, _TREE) >= 0.3


def path_list(s: Sample) -> bool:
    """Mostly lines that are paths alone (``find``, ``fd``)."""
    lines = s.lines
    paths = [line for line in lines if _PATH_ONLY.match(line.strip())]
    return len(lines) >= 3 and len(paths) / len(lines) >= 0.7 and _path_like(paths)


def html(s: Sample) -> bool:
    """HTML markup near the start."""
    return _HTML.search(s.text[:4000]) is not None


def yaml_lines(s: Sample) -> bool:
    """Mostly ``key: value`` and ``- item`` lines, little code."""
    lines = s.lines
    return len(lines) >= 4 and _ratio(lines, _YAML) >= 0.7 and _ratio(lines, _CODE) < 0.2


def source_code(s: Sample) -> bool:
    """Lines of code, at least as many as lines of prose."""
    code = _ratio(s.lines, _CODE)
    return len(s.lines) >= 3 and code >= 0.25 and code >= 0.8 * _prose_share(s.lines)


def prose(s: Sample) -> bool:
    """Markdown headings, or running text that is not a report's template filled again and
    again (a scanner's findings read like sentences, but each follows the one before)."""
    if md_headings(s.text) >= 2:
        return True
    return _prose_share(s.lines) >= 0.3 and templated_share(s.lines) < _TEMPLATED


def md_headings(text: str) -> int:
    """How many Markdown headings ``text`` holds (none without a ``#`` or an underline: the
    search is slow on long texts)."""
    if "#" not in text and "===" not in text and "---" not in text:
        return 0
    return len(_MD_HEADING.findall(text))


def templated_share(lines: list[str]) -> float:
    """The share of ``lines`` whose shape — words, numbers and spacing made alike — at least
    ``_TEMPLATE_REPEATS`` lines share: a program's report repeats its templates, a document
    seldom repeats a sentence's shape."""
    if not lines:
        return 0.0
    shapes = [_line_shape(line) for line in lines]
    counts = Counter(shapes)
    return sum(1 for one in shapes if counts[one] >= _TEMPLATE_REPEATS) / len(shapes)


def _line_shape(line: str) -> str:
    text = _WORD_RUN.sub("a", line.strip())
    return _SPACE_RUN.sub(" ", _DIGIT_RUN.sub("#", text))[:40]


def failure_words(s: Sample) -> bool:
    """A word a command's report uses (error, warning, failed, exit code)."""
    return _WEAK_COMMAND.search(s.text.lower()) is not None


def _path_like(paths: list[str]) -> bool:
    """Whether path-only lines are really paths (slashes or extensions), not single words."""
    marked = sum(1 for p in paths if "/" in p or re.search(r"\.\w{1,8}$", p))
    return marked >= max(2, len(paths) // 2)


def _is_prose(line: str) -> bool:
    """A line of running text: mostly letters, several words (or CJK), few code symbols."""
    body = line.strip()
    if len(body) < 20 or len(_CODE_CHARS.findall(body)) > 2:
        return False
    letters = len(_LETTER.findall(body))
    if letters < 0.6 * len(body.replace(" ", "")):
        return False
    return len(body.split()) >= 6 or len(_CJK.findall(body)) >= 10


def _prose_share(lines: list[str]) -> float:
    return sum(1 for line in lines if _is_prose(line)) / len(lines) if lines else 0.0

"""Grounding of model answers: the paths, lines, test ids, versions and numbers a source backs.

A cheap model that invents ``src/nowhere.py:123`` or ``v9.9.9`` misleads the agent more than a
truncation would, so claims of those kinds are pulled out of the answer and looked up in what the
model was shown. Look-ups are verbatim substring checks (an answer cut mid-token still matches);
a line number is also backed when the source has that many lines, because models describe files
by line numbers the raw text need not print.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

import structlog

from tersify.contract import FallbackReason, PendingSummary
from tersify.errors import ProviderError
from tersify.settings import Settings
from tersify.text.sanitize import sanitize
from tersify.worker.summarize.prompts import (
    CUT_NOTE,
    FLAG_RULE,
    FOCUS,
    PROSE_RULES,
    QUOTE_RULE,
    SYSTEM_TEMPLATE,
)

log = structlog.get_logger(__name__)

# Text the model got as instructions, not data: claims copied from it (the "L123:" example of the
# cut note, say) are not inventions.
INSTRUCTIONS = "\n".join(
    [SYSTEM_TEMPLATE, CUT_NOTE, QUOTE_RULE, FLAG_RULE, *PROSE_RULES.values(), *FOCUS.values()]
)

# Each look-up scans the whole output (up to 16 MB); past this many claims the verdict is clear.
MAX_CLAIMS = 100
_EXTENSIONS = (
    "py|pyi|pyc|rs|go|js|mjs|cjs|ts|tsx|jsx|rb|java|kt|c|h|cc|cpp|hpp|cs|swift|php|sh|bash|ps1|"
    "psm1|toml|yaml|yml|json|jsonl|ini|cfg|conf|lock|txt|md|rst|html|htm|css|xml|sql|proto|"
    "ipynb|csv|log|gradle|mk|cmake|dockerfile|env|tf|vue|svelte|lua|pl|r|scala|ex|exs|erl|zig|nim"
)
_SEGMENT = r"[\w.@+~-]+"
_PATH = rf"(?:[A-Za-z]:)?(?:\.{{0,2}}[/\\])?{_SEGMENT}(?:[/\\]{_SEGMENT})*"
_FILE_NAME = rf"{_SEGMENT}\.(?:{_EXTENSIONS})\b"
# Claims start only where a token starts: scanning from inside tokens made the look-ups quadratic.
_START = r"(?<![\w.@+~/\\-])"
_TEST_ID = re.compile(rf"{_START}{_PATH}\.py::[\w:\[\]./-]+")
_URL = re.compile(r"\bhttps?://[^\s<>\"'`)\]]+")
_PATH_LINE = re.compile(rf"{_START}((?:{_PATH}[/\\])?{_FILE_NAME}):(\d+)(?::\d+)?")
_LINE_REF = re.compile(
    r"(?<![\w#])(?:L(\d+)\b|(\d+)#[0-9a-fA-F]{2}\||[Ll]ines? (\d+)(?:\s*(?:-|–|to|and)\s*(\d+))?)"
)
_FILE_PATH = re.compile(rf"{_START}{_PATH}[/\\]{_SEGMENT}|{_START}{_FILE_NAME}")
_VERSION = re.compile(r"(?<![\w.])(?:v\d+(?:\.\d+)+|\d+\.\d+\.\d+(?:\.\d+)*)(?:[-+.]?[A-Za-z]\w*)?")
_NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w,])|(?<![\w.,])\d+(?:\.\d+)?")
_SIZE_UNIT = re.compile(r"(?:\s*(?:to|of|/)\s*[\d,]+)?\s*(?:chars|characters|bytes)\b")
_TRAILING = ".,;:!?>'\"`"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


class ClaimKind(StrEnum):
    """What a claim in an answer asserts about the source."""

    TEST_ID = "test_id"
    URL = "url"
    PATH_LINE = "path_line"
    LINE = "line"
    PATH = "path"
    VERSION = "version"
    NUMBER = "number"


@dataclass(frozen=True, slots=True)
class Claim:
    """One checkable statement of an answer: its kind and the text as the answer wrote it."""

    kind: ClaimKind
    text: str


def _clean(text: str) -> str:
    """The claim without the sentence's punctuation after it (a closing bracket it opened stays)."""
    while text:
        last = text[-1]
        if last in _TRAILING or (last in _CLOSERS and _CLOSERS[last] not in text):
            text = text[:-1]
        else:
            break
    return text


def _looks_like_path(text: str) -> bool:
    """False for ``and/or``, ``3/4`` or ``2024/01/31``: words and dates that share the slash."""
    parts = [part for part in re.split(r"[/\\]", text) if part]
    if all(part.isdigit() for part in parts):
        return False
    return len(parts) > 2 or "." in parts[-1].strip(".") or len(parts) == 1


def _claim_spans(answer: str) -> list[tuple[ClaimKind, re.Match[str]]]:
    """Every claim's match, most specific kinds first; each char belongs to at most one claim."""
    taken = [False] * len(answer)
    found: list[tuple[ClaimKind, re.Match[str]]] = []
    kinds = [
        (ClaimKind.TEST_ID, _TEST_ID),
        (ClaimKind.URL, _URL),
        (ClaimKind.PATH_LINE, _PATH_LINE),
        (ClaimKind.LINE, _LINE_REF),
        (ClaimKind.PATH, _FILE_PATH),
        (ClaimKind.VERSION, _VERSION),
        (ClaimKind.NUMBER, _NUMBER),
    ]
    for kind, pattern in kinds:
        for match in pattern.finditer(answer):
            start, end = match.span()
            if any(taken[start:end]):
                continue
            if kind is ClaimKind.PATH and not _looks_like_path(match.group()):
                continue
            if kind is ClaimKind.NUMBER and sum(c.isdigit() for c in match.group()) < 3:
                continue
            taken[start:end] = [True] * (end - start)
            found.append((kind, match))
    found.sort(key=lambda item: item[1].start())
    return found


def claims(answer: str) -> list[Claim]:
    """The paths, line numbers, test ids, versions and 3+ digit numbers ``answer`` states."""
    return [Claim(kind, _clean(match.group())) for kind, match in _claim_spans(answer)]


@dataclass(frozen=True, slots=True)
class Source:
    """What the model was shown, prepared for claim look-ups."""

    text: str
    lines: int

    @classmethod
    def of(cls, *parts: str | None) -> Source:
        """The source made of ``parts`` (the tool output first), sanitized as the prompt was."""
        text = "\n".join(sanitize(part) for part in parts if part)
        return cls(text=text, lines=text.count("\n") + 1)

    def has(self, fragment: str) -> bool:
        """True when ``fragment`` (or its Windows / unprefixed spelling) occurs verbatim."""
        if not fragment or fragment in self.text:
            return True
        variants = {
            fragment.replace("/", "\\"),
            fragment.removeprefix("./"),
            fragment.removeprefix("v"),
            fragment.replace(",", ""),
        }
        return any(v and v != fragment and v in self.text for v in variants)

    def has_line(self, number: str | None) -> bool:
        """True when line ``number`` exists in the source or the number is printed in it."""
        return number is None or int(number) <= self.lines or number in self.text


def supported(claim_match: tuple[ClaimKind, re.Match[str]], source: Source) -> bool:
    """True when the source backs the claim."""
    kind, match = claim_match
    if source.has(_clean(match.group())):
        return True
    if kind is ClaimKind.PATH_LINE:
        return source.has(match.group(1)) and source.has_line(match.group(2))
    if kind is ClaimKind.LINE:
        return all(source.has_line(n) for n in match.groups())
    if kind is ClaimKind.NUMBER and _SIZE_UNIT.match(match.string, match.end()):
        # "cut from 252752 to 49949 characters": a size of the output, not a fact inside it.
        return float(match.group().replace(",", "")) <= len(source.text)
    return False


def unsupported(answer: str, source: Source) -> list[Claim]:
    """The claims of ``answer`` that ``source`` does not back (the first ``MAX_CLAIMS`` checked)."""
    return [
        Claim(kind, _clean(match.group()))
        for kind, match in _claim_spans(answer)[:MAX_CLAIMS]
        if not supported((kind, match), source)
    ]


def job_source(job: PendingSummary, settings: Settings) -> Source:
    """Everything the model saw for ``job``: output, header fields, instructions and caps."""
    caps = (settings.max_summary_chars, settings.model_window_chars, settings.max_quote_chars)
    sizes = " ".join(str(n) for n in caps)
    return Source.of(job.output, job.tool_name, job.command, job.query, INSTRUCTIONS, sizes)


def check_grounding(text: str, job: PendingSummary, settings: Settings) -> None:
    """Log an answer's unsupported claims; raise ``ungrounded`` once they reach the setting."""
    check_source(text, job_source(job, settings), settings)


def check_source(text: str, source: Source, settings: Settings) -> None:
    """``check_grounding`` against any source (a compaction's transcript, say)."""
    missing = unsupported(text, source)
    if not missing:
        return
    log.warning(
        "summary_ungrounded_claims",
        count=len(missing),
        limit=settings.grounding_max_unsupported,
        claims=[f"{c.kind.value}:{c.text[:80]}" for c in missing[:10]],
    )
    limit = settings.grounding_max_unsupported
    # Two inventions already mislead (a path and a version): the count rejects when it reaches the
    # limit, and 0 keeps only the log line.
    if limit and len(missing) >= limit:
        shown = ", ".join(c.text[:60] for c in missing[:3])
        raise ProviderError(
            FallbackReason.UNGROUNDED, f"{len(missing)} claims not in the source: {shown}"
        )

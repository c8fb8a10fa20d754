"""Two runs of one command, line against line: what is new, what is gone, what changed.

Lines are matched by their normalized text (``volatile``) as a multiset, not in order: test
runners and builds that work in parallel print the same lines in another order on every run,
and a line that moved is not news. What is left over on each side is then paired where a new
line and a gone one have one shape (numbers aside: a count or a verdict that changed) or read
almost alike; the rest is new or gone. Each line's signal (a failure, a verdict, a warning) is
the one the shrinks read (``tersify.text.signals``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import accumulate
from typing import Final

from tersify.contract import ToolType
from tersify.text.sanitize import lowercase, sanitize
from tersify.text.signals import Kind, classify_line
from tersify.worker.rerun.volatile import normalized_line, normalized_lines
from tersify.worker.shrink import kind_of
from tersify.worker.shrink.document import Hits

FAILURES: Final = frozenset({Kind.ERROR, Kind.EXIT, Kind.PROBLEM})
"""The signals of a line that reports a failure or an error."""
_REPORTED: Final = re.compile(
    r"[ \t\-*=>#!]*(?:\[[^\]\n]{0,40}\][ \t]*)*"
    r"(?:error|fatal|panic|fail|failed|failure|critical)\b",
    re.IGNORECASE,
)
"""A line whose first word (after markers: dashes, stars, arrows, bracketed tags) says it
reports a failure or an error, whatever follows: a long message reads as prose to the shrinks'
signals, a bare ``FAIL:`` as nothing; here either must count as a failure."""
ALIKE: Final = 0.6
"""How alike (difflib's ratio) a new line and a gone one must read to be one changed line."""
_COUNT: Final = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_VERDICT_WORDS: Final = re.compile(
    r"\b(?:pass|passed|passes|passing|ok|success|succeeded|fail|failed|fails|failing|failure|"
    r"error|errors|errored|skip|skipped|xfail|xfailed|xpass|xpassed)\b|[✓✔✗✘]",
    re.IGNORECASE,
)
_MOST_COMPARED: Final = 4_000
_MORE_ANCHORS: Final = ("interrupt", "fault", "core dumped", "critical", "undefined", "unresolved")
"""Words of failures the shrinks' salient words of a kind may lack."""
_CANDIDATE: Final = re.compile(r"^[ \t]*E[ \t]{2}|\.[A-Za-z]{1,6}:\d+", re.MULTILINE)
"""Lines that may report a failure without a salient word: an assertion's detail under an
``E``, a place in a file."""
"""Most pairs of leftover lines compared for likeness (the rest stay new and gone)."""


@dataclass(frozen=True, slots=True)
class RunLine:
    """One line of a run: where it is (0-based, in the sanitized output), its text, its signal."""

    index: int
    text: str
    kind: Kind | None

    @property
    def failure(self) -> bool:
        """Whether the line reports a failure or an error."""
        return self.kind in FAILURES


@dataclass(frozen=True, slots=True)
class RunDiff:
    """What one run has that the run before it had not, and the other way round."""

    added: tuple[RunLine, ...]
    gone: tuple[RunLine, ...]
    changed: tuple[tuple[RunLine, RunLine], ...]  # (this run's line, the previous run's)
    counts: frozenset[int]  # changed lines (their indices) that differ in counts or verdicts alone
    kept_failures: tuple[RunLine, ...]  # failure lines this run shares with the previous
    lines: int  # non-blank lines of this run
    previous_lines: int

    @property
    def share(self) -> float:
        """The share of both runs' non-blank lines that found no match in the other run."""
        unmatched = len(self.added) + len(self.gone) + 2 * len(self.changed)
        return unmatched / max(1, self.lines + self.previous_lines)

    @property
    def empty(self) -> bool:
        """Whether every line of each run has its match in the other."""
        return not (self.added or self.gone or self.changed)

    def new_lines(self) -> list[RunLine]:
        """Every line of this run that the previous run had not (new and changed), in order."""
        return sorted([*self.added, *(new for new, _ in self.changed)], key=lambda x: x.index)


_DIAGNOSTIC: Final = re.compile(
    r"[ \t]*(?:[\w.~-]*[/\\])*[\w.-]+\.[A-Za-z]{1,6}:\d+(?::\d+)?: (?!in [\w.<>]+\s*$)\S"
)
"""A command's line that starts at a place in a file (``pkg/a_test.go:95: want 2``): what a
compiler, a linter or a test's own assertion reports there (a traceback's frame, ``a.py:3: in
f``, reports nothing)."""


def signal(line: str, tool_type: ToolType) -> Kind | None:
    """What a line reports: the shrinks' signal; an error when the line starts by saying so or,
    in a command's output, at a place in a file."""
    kind = classify_line(line, tool_type)
    if kind in FAILURES:
        return kind
    if _REPORTED.match(line) or (tool_type is ToolType.COMMAND_OUTPUT and _DIAGNOSTIC.match(line)):
        return Kind.ERROR
    return kind


def run_lines(text: str) -> list[str]:
    """The lines of an output as they are numbered and shown: sanitized, right-stripped."""
    return [line.rstrip() for line in sanitize(text).split("\n")]


def _unmatched(keys: list[str], common: Counter[str]) -> list[int]:
    """The indices of the non-blank lines left once ``common`` of each key are matched."""
    left = Counter(common)
    out = []
    for index, key in enumerate(keys):
        if not key:
            continue
        if left[key] > 0:
            left[key] -= 1
        else:
            out.append(index)
    return out


def _matched(old: list[str], new: list[str]) -> tuple[list[int], list[int]]:
    """The indices of the lines of ``old`` and of ``new`` left without a match: lines equal as
    they are first, then the rest by their normalized text (equal lines normalize alike, so
    this finds the same matches as normalizing all, at a fraction of the cost)."""
    raw_old, raw_new = [x.strip() for x in old], [x.strip() for x in new]
    same = Counter(x for x in raw_old if x) & Counter(x for x in raw_new if x)
    left_old, left_new = _unmatched(raw_old, same), _unmatched(raw_new, same)
    keys_old = normalized_lines("\n".join(old[i] for i in left_old)) if left_old else []
    keys_new = normalized_lines("\n".join(new[i] for i in left_new)) if left_new else []
    alike = Counter(k for k in keys_old if k) & Counter(k for k in keys_new if k)
    gone = [left_old[j] for j in _unmatched(keys_old, alike)]
    added = [left_new[j] for j in _unmatched(keys_new, alike)]
    return gone, added


def _failing(lines: list[str], tool_type: ToolType, skip: set[int]) -> list[int]:
    """The indices of the lines (but ``skip``) that report a failure: each line holding one of
    the kind's salient words, or a failure word or a place in a file, read by ``signal``."""
    joined = "\n".join(lines)
    hits = Hits(lowercase(joined))
    at = hits.merged((*kind_of(tool_type).anchors, *_MORE_ANCHORS))
    at += [m.start() for m in _CANDIDATE.finditer(joined)]
    starts = list(accumulate((len(x) + 1 for x in lines[:-1]), initial=0))
    found: set[int] = set()
    kinds: dict[str, bool] = {}
    for index in {bisect_right(starts, pos) - 1 for pos in at}:
        if index in skip or not lines[index].strip():
            continue
        text = lines[index]
        if text not in kinds:  # logs repeat themselves: read each distinct line once
            kinds[text] = signal(text, tool_type) in FAILURES
        if kinds[text]:
            found.add(index)
    return sorted(found)


def compare(previous: str, current: str, tool_type: ToolType) -> RunDiff:
    """The lines ``current`` adds to ``previous``, the lines it lost, and the ones it changed."""
    old_text, new_text = run_lines(previous), run_lines(current)
    gone_at, added_at = _matched(old_text, new_text)

    def line(texts: list[str], index: int) -> RunLine:
        return RunLine(index, texts[index], signal(texts[index], tool_type))

    added = [line(new_text, i) for i in added_at]
    gone = [line(old_text, i) for i in gone_at]
    kept = [line(new_text, i) for i in _failing(new_text, tool_type, set(added_at))]
    pairs, counts = _pairs(added, gone)
    paired_new = {new.index for new, _ in pairs}
    paired_old = {old.index for _, old in pairs}
    return RunDiff(
        added=tuple(x for x in added if x.index not in paired_new),
        gone=tuple(x for x in gone if x.index not in paired_old),
        changed=tuple(sorted(pairs, key=lambda pair: pair[0].index)),
        counts=counts,
        kept_failures=tuple(kept),
        lines=sum(1 for x in new_text if x.strip()),
        previous_lines=sum(1 for x in old_text if x.strip()),
    )


def counted(text: str) -> str:
    """A line with its volatile parts and its counts marked: lines alike but for a count (a
    total, a verdict's numbers) share it; a name with digits in it (``test_3``) keeps them."""
    return _COUNT.sub("#", normalized_line(text))


def verdicted(text: str) -> str:
    """A line with its counts and its verdict words marked: an item's line that passed and
    now fails (or the other way round) shares it."""
    return _VERDICT_WORDS.sub("?", counted(text))


def _same_by(
    key: Callable[[str], str], added: list[RunLine], gone: list[RunLine]
) -> tuple[list[tuple[RunLine, RunLine]], list[RunLine], list[RunLine]]:
    """New and gone lines paired where ``key`` reads them alike (in order), and the rest of
    each side."""
    by_key: dict[str, list[RunLine]] = defaultdict(list)
    for old in gone:
        by_key[key(old.text)].append(old)
    pairs: list[tuple[RunLine, RunLine]] = []
    left: list[RunLine] = []
    for new in added:
        same = by_key.get(key(new.text))
        if same:
            pairs.append((new, same.pop(0)))
        else:
            left.append(new)
    taken = {old.index for _, old in pairs}
    return pairs, left, [old for old in gone if old.index not in taken]


def _pairs(
    added: list[RunLine], gone: list[RunLine]
) -> tuple[list[tuple[RunLine, RunLine]], frozenset[int]]:
    """New and gone lines that are one line changed: alike but for a verdict word (an item
    that now passes, or fails), alike but for counts, then read alike.

    Otherwise a failure line is never paired: a failure that reads otherwise is a new failure
    (and perhaps one gone), not the same one changed.
    """
    pairs, added, gone = _same_by(verdicted, added, gone)
    added = [new for new in added if not new.failure]
    gone = [old for old in gone if not old.failure]
    counted_pairs, left, rest = _same_by(counted, added, gone)
    pairs += counted_pairs
    counts = frozenset(new.index for new, _ in pairs)
    if not left or not rest or len(left) * len(rest) > _MOST_COMPARED:
        return pairs, counts
    for new in left:
        matcher = SequenceMatcher(None, b=new.text, autojunk=False)
        best, best_ratio = None, ALIKE
        for old in rest:
            matcher.set_seq1(old.text)
            if matcher.real_quick_ratio() < best_ratio or matcher.quick_ratio() < best_ratio:
                continue
            ratio = matcher.ratio()
            if ratio >= best_ratio:
                best, best_ratio = old, ratio
        if best is not None:
            pairs.append((new, best))
            rest.remove(best)
    return pairs, counts

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
from collections import Counter, defaultdict
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final

from tersify.contract import ToolType
from tersify.text.sanitize import sanitize
from tersify.text.signals import Kind, classify_line
from tersify.worker.rerun.volatile import normalized_line, normalized_lines

FAILURES: Final = frozenset({Kind.ERROR, Kind.EXIT, Kind.PROBLEM})
"""The signals of a line that reports a failure or an error."""
_REPORTED: Final = re.compile(
    r"[ \t]*(?:\[[^\]\n]{0,40}\][ \t]*)*(?:error|fatal|panic|failed|failure|critical)\b",
    re.IGNORECASE,
)
"""A line that starts by saying it reports an error, whatever follows (a long message reads as
prose to the shrinks' signals; here it must still count as a failure)."""
ALIKE: Final = 0.6
"""How alike (difflib's ratio) a new line and a gone one must read to be one changed line."""
_COUNT: Final = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_MOST_COMPARED: Final = 4_000
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


def signal(line: str, tool_type: ToolType) -> Kind | None:
    """What a line reports: the shrinks' signal, an error when the line starts by saying so."""
    kind = classify_line(line, tool_type)
    if kind not in FAILURES and _REPORTED.match(line):
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


def compare(previous: str, current: str, tool_type: ToolType) -> RunDiff:
    """The lines ``current`` adds to ``previous``, the lines it lost, and the ones it changed."""
    old_keys, new_keys = normalized_lines(previous), normalized_lines(current)
    old_text, new_text = run_lines(previous), run_lines(current)
    common = Counter(k for k in old_keys if k) & Counter(k for k in new_keys if k)
    added_at = _unmatched(new_keys, common)
    gone_at = _unmatched(old_keys, common)
    fresh = set(added_at)

    def line(texts: list[str], index: int) -> RunLine:
        return RunLine(index, texts[index], signal(texts[index], tool_type))

    added = [line(new_text, i) for i in added_at]
    gone = [line(old_text, i) for i in gone_at]
    kept = [
        found
        for i, key in enumerate(new_keys)
        if key and i not in fresh and (found := line(new_text, i)).failure
    ]
    pairs = _pairs(added, gone)
    paired_new = {new.index for new, _ in pairs}
    paired_old = {old.index for _, old in pairs}
    return RunDiff(
        added=tuple(x for x in added if x.index not in paired_new),
        gone=tuple(x for x in gone if x.index not in paired_old),
        changed=tuple(sorted(pairs, key=lambda pair: pair[0].index)),
        kept_failures=tuple(kept),
        lines=sum(1 for k in new_keys if k),
        previous_lines=sum(1 for k in old_keys if k),
    )


def counted(text: str) -> str:
    """A line with its volatile parts and its counts marked: lines alike but for a count (a
    total, a verdict's numbers) share it; a name with digits in it (``test_3``) keeps them."""
    return _COUNT.sub("#", normalized_line(text))


def _pairs(added: list[RunLine], gone: list[RunLine]) -> list[tuple[RunLine, RunLine]]:
    """New and gone lines that are one line changed: alike but for counts first, then read
    alike.

    A failure line is never paired: a failure that reads otherwise is a new failure (and
    perhaps one gone), not the same one changed.
    """
    added = [new for new in added if not new.failure]
    gone = [old for old in gone if not old.failure]
    by_shape: dict[str, list[RunLine]] = defaultdict(list)
    for old in gone:
        by_shape[counted(old.text)].append(old)
    pairs: list[tuple[RunLine, RunLine]] = []
    left: list[RunLine] = []
    for new in added:
        same = by_shape.get(counted(new.text))
        if same:
            pairs.append((new, same.pop(0)))
        else:
            left.append(new)
    taken = {old.index for _, old in pairs}
    rest = [old for old in gone if old.index not in taken]
    if not left or not rest or len(left) * len(rest) > _MOST_COMPARED:
        return pairs
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
    return pairs

"""A run written as what changed since the run before it: the change summary's text.

One line names the earlier run and its ``output_ref`` (``same as run 4 (ref …), except:``),
then the lines that differ, most telling first, each marked as a diff marks it: ``+ N|`` a new
line of this run (``N`` its line number, as every tersify quote), ``~ N|`` a line that changed
with ``was:`` its earlier text, ``-`` a line the earlier run printed and this one did not.

What a change summary may never leave out is shown whatever the room: every failure or error
line this run has and the earlier run had not, and every failure or verdict that changed. Then
the failures and errors that are gone, the new warnings, the other changed and new lines while
there is room, and a count of the rest. The failures this run still shares with the earlier
one are named last (a few, then their count), so a summary read alone still says they are
there.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Final

from tersify.text.signals import Kind
from tersify.worker.rerun.diff import RunDiff, RunLine
from tersify.worker.rerun.history import Run
from tersify.worker.rerun.volatile import normalized_line
from tersify.worker.shrink import clip

LINE_CHARS: Final = 300
"""The longest line shown whole; a longer one is clipped with '…'."""
GONE_CHARS: Final = 200
"""The longest line of the earlier run shown; a longer one is clipped."""
WAS_WORDS: Final = 40
"""The most of a changed line's earlier words shown inline; more: its earlier line whole."""
KEPT_ROOM: Final = 300
"""Most room for the failures this run still shares with the earlier one (then counted)."""
_STILL_LINE: Final = 60
"""Room kept for the line that counts the failures still there."""


def named(run: Run) -> str:
    """``run 4 (ref …)``: the earlier run as a change summary names it."""
    return f"run {run.run} (ref {run.ref})" if run.ref else f"run {run.run}"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A change summary and whether it shows every line that differs (nothing counted only)."""

    text: str
    complete: bool


def header(earlier: Run, diff: RunDiff) -> str:
    """The first line: the earlier run, and whether anything differs from it."""
    if diff.empty:
        return (
            f"same as {named(earlier)}: every line alike (times, durations, ids, addresses "
            "and temp paths aside)."
        )
    return f"same as {named(earlier)}, except:"


def shown(line: RunLine, mark: str = "+") -> str:
    """A line of this run as the summary shows it: ``+ 12| text``."""
    return f"{mark} {line.index + 1}| {clip(line.text.strip(), LINE_CHARS, ellipsis=True)}"


def gone(line: RunLine) -> str:
    """A line of the earlier run this one no longer prints: ``- text``."""
    return f"- {clip(line.text.strip(), GONE_CHARS, ellipsis=True)}"


def changed(new: RunLine, old: RunLine) -> str:
    """A changed line: ``~ 12| new`` and what it was, inline when a few words changed
    (``[was: PASS]``), else its earlier text under it."""
    words = was_words(new.text, old.text)
    if words is not None:
        return f"{shown(new, '~')}  [was: {words}]"
    return f"{shown(new, '~')}\n    was: {clip(old.text.strip(), GONE_CHARS, ellipsis=True)}"


def was_words(new: str, old: str) -> str | None:
    """The earlier line's words that changed (volatile parts aside), when they are few."""
    before, after = old.split(), new.split()
    matcher = SequenceMatcher(
        None, [normalized_line(w) for w in before], [normalized_line(w) for w in after]
    )
    changed = []
    for op, i1, i2, _, _ in matcher.get_opcodes():
        if op == "equal":
            continue
        if not any(c.isalpha() for c in "".join(before[i1:i2])):
            i2 = min(len(before), i2 + 1)  # a count says what it counts with the word after it
        changed.append(" ".join(before[i1:i2]))
    text = " … ".join(part for part in changed if part)
    return text if text and len(text) <= WAS_WORDS else None


def _telling(new: RunLine, old: RunLine, diff: RunDiff) -> bool:
    """Whether a changed line must be shown: a failure or a verdict on either side, or a line
    whose counts alone changed."""
    return (
        new.failure
        or old.failure
        or new.index in diff.counts
        or Kind.VERDICT in (new.kind, old.kind)
    )


def _must(line: RunLine) -> bool:
    """Whether a new line must be shown: a failure, or a verdict."""
    return line.failure or line.kind is Kind.VERDICT


def must_show(diff: RunDiff) -> list[str]:
    """The entries no change summary may leave out: new failures and verdicts, changed
    failures, verdicts and counts, in the order of this run's lines."""
    entries = [(x.index, shown(x)) for x in diff.added if _must(x)]
    entries += [(n.index, changed(n, o)) for n, o in diff.changed if _telling(n, o, diff)]
    return [text for _, text in sorted(entries)]


def render(diff: RunDiff, earlier: Run, budget: int) -> Rendered:
    """The change summary of ``diff`` in about ``budget`` chars (see the module)."""
    lines = [header(earlier, diff)]
    if diff.empty:
        room = min(KEPT_ROOM, budget - len(lines[0]))
        return Rendered("\n".join([*lines, *still_failing(diff, earlier, room)]), complete=True)
    lines += must_show(diff)
    room = budget - sum(len(x) + 1 for x in lines) - (_STILL_LINE if diff.kept_failures else 0)
    optional = [gone(x) for x in diff.gone if x.failure]
    optional += [shown(x) for x in diff.added if x.kind is Kind.WARNING]
    rest = [(x.index, shown(x)) for x in diff.added if not _must(x) and x.kind is not Kind.WARNING]
    rest += [(n.index, changed(n, o)) for n, o in diff.changed if not _telling(n, o, diff)]
    optional += [text for _, text in sorted(rest)]
    optional += [gone(x) for x in diff.gone if not x.failure]
    left_out = 0
    for entry in optional:
        if len(entry) + 1 <= room:
            lines.append(entry)
            room -= len(entry) + 1
        else:
            left_out += 1
    if left_out:
        lines.append(f"… {left_out} more lines differ: read both runs whole by their refs.")
    lines += still_failing(diff, earlier, min(KEPT_ROOM, room + _STILL_LINE))
    return Rendered("\n".join(lines), complete=left_out == 0)


def still_failing(diff: RunDiff, earlier: Run, room: int = KEPT_ROOM) -> list[str]:
    """The failure lines this run shares with the earlier one: as many as ``room`` holds,
    then how many there are."""
    kept = diff.kept_failures
    if not kept:
        return []
    lines = [f"still as in run {earlier.run}: {len(kept)} failure or error lines, such as"]
    room -= len(lines[0])
    for line in kept:
        entry = shown(line, " ")
        if len(entry) + 1 > room:
            break
        lines.append(entry)
        room -= len(entry) + 1
    if len(lines) == 1:
        lines[0] = f"still as in run {earlier.run}: {len(kept)} failure or error lines."
    elif len(lines) - 1 == len(kept):
        lines[0] = f"still as in run {earlier.run}:"
    return lines

"""The structural facts of a conversation rendered as markdown sections within a size budget.

The same sections, made the same way, go into the extractive summary and, verbatim, into a
model's: Files Changed, Errors, Tests, Commands, Task State, Decisions and Files Read. When they
do not all fit, each section gets a share of the budget by weight (what one section does not
need goes to the others) and keeps its items in rank order: the most recent and the most
important first, then a line saying how many were left out. Beside a model's narrative only the
facts it dropped are appended (``Section.without``): an item whose key (an error line, a test
id, a command, a request, a decision) the narrative states verbatim is not repeated, so the room
goes to the others; the list of files changed is always appended whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tersify.chat.messages import Turn
from tersify.text import elide
from tersify.worker.compaction.facts.actions import Status, actions
from tersify.worker.compaction.facts.asks import Ask, asks
from tersify.worker.compaction.facts.commands import CommandRun, command_runs
from tersify.worker.compaction.facts.decisions import decisions
from tersify.worker.compaction.facts.errors import SeenError, seen_errors
from tersify.worker.compaction.facts.files import FileChange, changed_files, read_files
from tersify.worker.compaction.facts.tasks import PlanItem, plan
from tersify.worker.compaction.facts.testruns import TestState, states_of_tests

HEADINGS = (
    "Files Changed",
    "Errors",
    "Tests",
    "Commands",
    "Task State",
    "Decisions",
    "Files Read",
)
_WEIGHTS = {"Files Changed": 3.0, "Errors": 3.0, "Tests": 2.0, "Commands": 0.5}
_WEIGHTS |= {"Task State": 3.0, "Decisions": 3.0, "Files Read": 0.5}
# The sections whose brief form is their floor, and the part of the budget it may take at most
_FLOOR_PARTS = {"Files Changed": 2, "Task State": 4}
MIN_FACTS_CHARS = 1000
"""The least room the facts sections get, however long the rest of a summary is."""
_REQUEST_CHARS = 200
_BRIEF_REQUEST_CHARS = 100
_BRIEF_COMMAND_CHARS = 80
_SHORTEST_LINE = 24
_COMMAND_CHARS = 160
_SCRATCH_PREFIXES = ("/tmp/", "/var/tmp/", "/private/tmp/", "/var/folders/")  # noqa: S108
_SHORTEST_KEY = 8


@dataclass(frozen=True, slots=True)
class Section:
    """A heading and its item lines, best first; ``short``: the same items said briefly."""

    heading: str
    lines: tuple[str, ...]
    short: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()  # per line: the fact it states ("" for none), for ``without``

    def without(self, text: str) -> Section:
        """The section less the lines whose key ``text`` states verbatim (case and white space
        aside): what a narrative dropped. Lines without a key, or with a short one, stay."""
        said = _normal(text)
        keys = self.keys or ("",) * len(self.lines)
        keep = [len(key) < _SHORTEST_KEY or _normal(key) not in said for key in keys]
        lines = tuple(line for line, k in zip(self.lines, keep, strict=True) if k)
        short = self.short
        if len(short) == len(self.lines):  # a brief form line by line: the same lines go
            short = tuple(line for line, k in zip(short, keep, strict=True) if k)
        return Section(
            self.heading, lines, short, tuple(c for c, k in zip(keys, keep, strict=True) if k)
        )

    def render(self, budget: int) -> str:
        """The section within ``budget`` chars: as many lines as fit (the first one shortened
        if need be), then how many were left out; nothing when not even that fits."""
        if self.short and self.size > budget:
            return Section(self.heading, self.short).render(budget)
        head = f"## {self.heading}"
        out: list[str] = []
        used = len(head)
        for number, line in enumerate(self.lines):
            left = len(self.lines) - number - 1
            tail = len(f"\n- … {left} more") if left else 0
            room = budget - used - 1 - tail
            if len(line) > room and not out and room >= _SHORTEST_LINE:
                line = elide(line, room - 1)  # elide adds its "…" past the cut
            if len(line) > room:
                more = f"- … {len(self.lines) - number} more"
                if out and used + 1 + len(more) <= budget:
                    out.append(more)
                break
            out.append(line)
            used += 1 + len(line)
        return "\n".join([head, *out]) if out else ""

    @property
    def size(self) -> int:
        """Chars of the whole section."""
        return len(self.heading) + 3 + sum(len(line) + 1 for line in self.lines)

    @property
    def floor(self) -> int:
        """Chars the brief form takes: the least this section is given when it has one."""
        return Section(self.heading, self.short).size if self.short else 0


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def _verbs(change: FileChange) -> str:
    counts = Counter(change.verbs)
    return ", ".join(f"{v} ×{n}" if n > 1 else v for v, n in counts.items())


def _scratch(changes: Sequence[FileChange]) -> list[str]:
    """Files created and deleted again (or only deleted, under a temporary directory)."""
    created = {"written by shell", "written by tee", "created", "written", "copied here"}
    return [
        c.path
        for c in changes
        if c.verbs[-1] == "deleted"
        and (created & set(c.verbs) or c.path.startswith(_SCRATCH_PREFIXES))
    ]


def _file_lines(changes: Sequence[FileChange], brief: bool = False) -> list[str]:
    """One line a file, the files under temporary directories together on the last line."""
    scratch = _scratch(changes)
    temporary = [c.path for c in changes if c.path.startswith(_SCRATCH_PREFIXES)]
    lines = [
        f"- {c.path}"
        if brief
        else f"- {c.path}: {_verbs(c)}"
        + (f" ({', '.join(c.places)})" if c.places else "")
        + "".join(f" +`{line}`" for line in c.added)
        for c in changes
        if c.path not in scratch and c.path not in temporary
    ]
    if scratch:
        lines.append(f"- created, then deleted: {', '.join(scratch)}")
    kept = [p for p in temporary if p not in scratch]
    if kept:
        lines.append(f"- in temporary directories: {', '.join(kept)}")
    return lines


def _command(command: str | None, chars: int = _COMMAND_CHARS) -> str:
    return f"`{elide(' '.join((command or '').split()), chars)}`" if command else ""


Item = tuple[str, str]
"""A section's line and its key: the fact it states, as a narrative would state it."""


def _error_lines(errors: Sequence[SeenError], brief: bool = False) -> list[Item]:
    """Open errors first, the latest first; briefly, without the command that showed each."""
    ordered = sorted(errors, key=lambda e: (e.resolved, -e.index))
    return [
        (
            f"- {'[resolved] ' if e.resolved else ''}{e.line}"
            + (f" ← {_command(e.command)}" if e.command and not brief else "")
            + (f" (×{e.count})" if e.count > 1 else ""),
            e.line,
        )
        for e in ordered
    ]


def _test_lines(states: Sequence[TestState], summary: str | None) -> list[Item]:
    failing = [(f"- FAILED {s.test}", s.test) for s in states if s.state == "failed"]
    passed = [s.test for s in states if s.state == "passed"]
    lines = [(f"- last run: {elide(summary, 240)}", "")] if summary else []
    lines += failing
    if passed:
        lines.append((f"- passed ({len(passed)}): {elide(', '.join(passed), 600)}", ""))
    return lines


def _run_lines(runs: Sequence[CommandRun], chars: int = _COMMAND_CHARS) -> list[Item]:
    def ended(run: CommandRun) -> str:
        if run.exit_code is not None:
            return f"exit {run.exit_code}"
        return {Status.OK: "ok", Status.FAILED: "failed", Status.UNKNOWN: "ran"}[run.status]

    return [
        (
            f"- {_command(r.command, chars)} → {ended(r)}"
            + (f" (×{r.runs})" if r.runs > 1 else ""),
            r.command,
        )
        for r in runs
    ]


def _ranked_asks(found: Sequence[Ask]) -> list[tuple[int, Ask]]:
    """The requests with their numbers, best first: the first, then the newest back."""
    numbered = list(enumerate(found, 1))
    return [*numbered[:1], *numbered[:0:-1]]


def _task_lines(
    found: Sequence[Ask], items: Sequence[PlanItem], chars: int = _REQUEST_CHARS
) -> list[Item]:
    """Every request once (``chars`` each at most), then the plan: its open items first."""
    lines: list[Item] = []
    shown: set[str] = set()
    for number, ask in _ranked_asks(found):
        if ask.own in shown:
            continue
        shown.add(ask.own)
        lines.append((f"- request {number}/{len(found)}: {elide(ask.own, chars)}", ask.own))
    open_items = [i for i in items if i.open]
    if items:
        lines.append((f"- plan: {len(items) - len(open_items)} of {len(items)} items done", ""))
    done = [i for i in items if not i.open]
    lines += [(f"- [{i.state}] {elide(i.text, min(chars, 200))}", i.text) for i in open_items]
    lines += [(f"- [{i.state}] {elide(i.text, min(chars, 200))}", i.text) for i in done]
    return lines


def _keyed(heading: str, items: Sequence[Item], brief: Sequence[Item] = ()) -> Section:
    """A section of items, and its brief form (the same items said shorter) when given."""
    lines, keys = tuple(line for line, _ in items), tuple(key for _, key in items)
    return Section(heading, lines, tuple(line for line, _ in brief), keys)


def sections(turns: Sequence[Turn]) -> list[Section]:
    """Every section of facts read from ``turns``, empty ones left out."""
    found = actions(turns)
    changes = changed_files(found)
    states, summary = states_of_tests(found)
    read = read_files(found, [c.path for c in changes])
    errors, runs = seen_errors(found), command_runs(found)
    requests, items, brief = asks(turns), plan(found, turns), _BRIEF_REQUEST_CHARS
    built = [
        Section("Files Changed", tuple(_file_lines(changes)), tuple(_file_lines(changes, True))),
        _keyed("Errors", _error_lines(errors), _error_lines(errors, brief=True)),
        _keyed("Tests", _test_lines(states, summary)),
        _keyed("Commands", _run_lines(runs), _run_lines(runs, _BRIEF_COMMAND_CHARS)),
        _keyed("Task State", _task_lines(requests, items), _task_lines(requests, items, brief)),
        _keyed("Decisions", [(f"- {text}", text) for _, text in decisions(turns, done=found)]),
        _keyed("Files Read", [(f"- {p}", p) for p in read]),
    ]
    return [s for s in built if s.lines]


def _shares(found: Sequence[Section], budget: int) -> dict[str, int]:
    """Each section's budget: its floor (the brief form of Files Changed, up to half of the
    budget), then weighted shares, what a section does not need going to the rest."""
    floors = {
        s.heading: min(s.floor, budget // _FLOOR_PARTS[s.heading])
        if s.heading in _FLOOR_PARTS
        else 0
        for s in found
    }
    shares: dict[str, int] = {}
    left = budget - 2 * len(found) - sum(floors.values())  # less the blank lines between
    pending = sorted(found, key=lambda s: (s.size - floors[s.heading]) / _WEIGHTS[s.heading])
    while pending:
        weight = sum(_WEIGHTS[s.heading] for s in pending)
        section = pending.pop(0)
        extra = int(max(left, 0) * _WEIGHTS[section.heading] / weight)
        extra = min(section.size - floors[section.heading], extra)
        shares[section.heading] = floors[section.heading] + extra
        left -= extra
    return shares


def render(found: Sequence[Section], budget: int) -> str:
    """The sections as markdown within ``budget`` chars, in the order of ``HEADINGS``."""
    shares = _shares(found, budget)
    parts = [s.render(shares[s.heading]) for s in found]
    return "\n\n".join(p for p in parts if p)


def render_size(found: Sequence[Section], budget: int) -> int:
    """Chars ``render`` takes for ``found`` within ``budget`` (less when the sections are small)."""
    return len(render(found, budget))

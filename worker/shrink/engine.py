"""The shrink engine: whole records chosen by worth under a budget, each with its ancestry.

One selection serves every tool type and every method (the extractive summary, the fallback
truncation, the model's input past its cap); they differ in their budget and in how much of
the head and tail they hold fixed. Candidates come from a ``Reading`` (``reading``: one text
read for one tool kind and one query), worthiest first. Each is taken as its record
(``records``) plus the lines that locate it
(``ancestry``); what is left of the budget grows the head and the tail. Rendering marks every
run of omitted lines (``render``).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from tersify.worker.shrink.ancestry import ancestors
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.reading import Reading
from tersify.worker.shrink.records import record
from tersify.worker.shrink.render import MARKER_COST, gap_marker, render, rendered_size
from tersify.worker.shrink.textcut import clip
from tersify.worker.shrink.worth import Candidate

LONG_LINE = 300
ANCESTOR_CHARS = 160
_MAX_MISSES = 60
_MIN_CLIPPED = 24
ANCESTRY_SCAN = 1500
"""Lines looked at above a record for its ancestry (a third of it in documents of over
``_BIG_DOC_LINES`` lines, where picks are spread far apart and looking costs the most)."""
_BIG_DOC_LINES = 20_000
FOCUSED_EDGES = 0.3
"""What is left of the fixed head and tail when the query's evidence is found in the middle."""
RECORD_CHARS = 700
"""The longest record read around an anchor at the local budgets."""
RECORD_SCALE_CHARS = 8000
"""Per this many chars of budget, records may be that much longer (1× up to 15,999)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How to shrink: the budget, the head and tail held fixed, how lines are shown."""

    budget: int
    head: int = 0
    tail: int = 0
    head_share: float = 0.5  # of the room left at the end, the share that grows the head
    numbered: Callable[[int, str], str] | None = None


@dataclass
class _Picker:
    doc: Doc
    plan: Plan
    prose: bool = False
    shown: dict[int, str] = field(default_factory=dict)
    taken: list[tuple[float, list[int]]] = field(default_factory=list)
    used: int = 0

    def cost(self, index: int, text: str) -> int:
        numbered = self.plan.numbered
        return len(numbered(index, text) if numbered is not None else text) + 1

    def add(self, lines: dict[int, str], weight: float) -> bool:
        """Show ``lines`` if their estimated cost fits; whether they were added.

        A line already shown keeps its place; one shown without the note it now carries
        (``(×12 similar)``) gets the note.
        """
        grown = {i: t for i, t in lines.items() if i in self.shown and len(t) > len(self.shown[i])}
        new = {i: t for i, t in lines.items() if i not in self.shown}
        if not new and not grown:
            return True
        cost = sum(self.cost(i, t) for i, t in new.items())
        cost += sum(len(t) - len(self.shown[i]) for i, t in grown.items())
        cost += MARKER_COST * _new_runs(sorted(new), self.shown)
        if self.used + cost > self.plan.budget:
            return False
        self.shown.update(new)
        self.shown.update(grown)
        self.used += cost
        if new:
            self.taken.append((weight, sorted(new)))
        return True

    def size(self) -> int:
        numbered = self.plan.numbered
        extra = (
            {i: len(numbered(i, t)) - len(t) for i, t in self.shown.items()}
            if numbered is not None
            else {}
        )
        return rendered_size(self.doc.lines, self.shown, extra)

    def fit(self) -> None:
        """Drop the least worthy picks until the exact rendering fits the budget."""
        self.taken.sort(key=lambda taken: taken[0])
        while self.shown and self.size() > self.plan.budget and self.taken:
            _, indices = self.taken.pop(0)
            for i in indices:
                self.shown.pop(i, None)


def _new_runs(new: list[int], shown: dict[int, str]) -> int:
    """How many runs of ``new`` lines open a gap of their own (each costs a marker)."""
    runs = 0
    previous = None
    for index in new:
        if (previous is None or index != previous + 1) and index - 1 not in shown:
            runs += 1
        previous = index
    return runs


def shrink_lines(reading: Reading, plan: Plan, *, extra: Iterable[Candidate] = ()) -> str:
    """The best lines of the text within ``plan.budget`` chars, in order, every gap marked."""
    shown = choose(reading, plan, extra=extra)
    return render(reading.doc.lines, shown, numbered=plan.numbered)


def choose(reading: Reading, plan: Plan, *, extra: Iterable[Candidate] = ()) -> dict[int, str]:
    """The lines ``shrink_lines`` shows (index → text), for a caller that renders them itself."""
    doc = reading.doc
    pool = reading.pool(extra)
    plan = follow_evidence(plan, pool)
    picker = _Picker(doc, plan, prose=reading.kind.prose)
    _take_edges(picker, plan)
    misses = 0
    for candidate in sorted(pool, key=lambda c: (-c.weight, c.anchor)):
        if not _take(picker, candidate):
            misses += 1
            if misses > _MAX_MISSES or plan.budget - picker.used < 24:
                break
    picker.fit()
    _fill(picker, plan)
    return picker.shown


def follow_evidence(plan: Plan, pool: Iterable[Candidate]) -> Plan:
    """``plan`` with its fixed head and tail cut to ``FOCUSED_EDGES`` of them when the query's
    evidence was found in a block: the budget goes to the middle where the answer is."""
    if not any(c.focused for c in pool):
        return plan
    head, tail = int(plan.head * FOCUSED_EDGES), int(plan.tail * FOCUSED_EDGES)
    return replace(plan, head=head, tail=tail)


def _take(picker: _Picker, candidate: Candidate) -> bool:
    """Show a candidate's record and ancestry; else its first lines; else nothing.

    A record that would take more than a quarter of the room left shows only its anchor and
    the line after it (a diagnostic and its location), so one code frame cannot crowd out
    the other diagnostics.
    """
    doc = picker.doc
    # A large budget (the model's input) reads longer records: a whole man-page entry.
    scale = max(1, picker.plan.budget // RECORD_SCALE_CHARS)
    start, end = candidate.span or record(
        doc,
        candidate.anchor,
        prose=picker.prose,
        max_lines=candidate.record_lines * scale,
        max_chars=RECORD_CHARS * scale,
    )
    scan = ANCESTRY_SCAN if len(doc) < _BIG_DOC_LINES else ANCESTRY_SCAN // 3
    lines = {i: _clip(doc.lines[i], ANCESTOR_CHARS) for i in ancestors(doc, start, scan=scan)}
    anchor = candidate.snippet or _clip(doc.lines[candidate.anchor], LONG_LINE)
    whole = dict(lines)
    for i in range(start, end):
        whole[i] = _clip(doc.lines[i], LONG_LINE)
    whole[candidate.anchor] = anchor + candidate.note
    room = picker.plan.budget - picker.used
    size = sum(len(t) + 1 for t in whole.values())
    if (size <= room * candidate.share or candidate.weight == float("inf")) and picker.add(
        whole, candidate.weight
    ):
        return True
    short = dict(lines)
    short[start] = whole[start]
    short[candidate.anchor] = whole[candidate.anchor]
    if candidate.anchor + 1 < end:
        short[candidate.anchor + 1] = whole[candidate.anchor + 1]
    return picker.add(short, candidate.weight) or picker.add(
        {**lines, candidate.anchor: whole[candidate.anchor]}, candidate.weight
    )


def _take_edges(picker: _Picker, plan: Plan) -> None:
    """The fixed head and tail blocks (whole lines, as many as their shares hold)."""
    lines = picker.doc.lines
    room, index, head = plan.head, 0, {}
    while index < len(lines) and room >= picker.cost(index, lines[index]):
        head[index] = lines[index]
        room -= picker.cost(index, lines[index])
        index += 1
    room, index, tail = plan.tail, len(lines) - 1, {}
    while index >= 0 and index not in head and room >= picker.cost(index, lines[index]):
        tail[index] = lines[index]
        room -= picker.cost(index, lines[index])
        index -= 1
    picker.add(head, float("inf"))
    picker.add(tail, float("inf"))


def _fill(picker: _Picker, plan: Plan) -> None:
    """Grow the head and the tail into the room still free, in ``head_share`` proportion.

    Sizes are kept exact as lines are added (a line fills part of a gap: the gap's marker is
    replaced by at most two), so growing costs one step per line, whatever the budget.
    """
    lines = picker.doc.lines
    order = sorted(picker.shown)
    size = picker.size()
    ends = {"head": _next_free(picker, 0, 1), "tail": _next_free(picker, len(lines) - 1, -1)}
    grown = {"head": 0, "tail": 0}
    open_sides = ["head", "tail"]
    while open_sides and ends["head"] <= ends["tail"]:
        total = grown["head"] + grown["tail"]
        wants_head = grown["head"] <= plan.head_share * total or "tail" not in open_sides
        side = "head" if "head" in open_sides and wants_head else "tail"
        index = ends[side]
        text = _clip(lines[index], LONG_LINE)
        delta = _insert_cost(picker, order, index, text)
        over = size + delta - plan.budget
        if over > 0 and len(text) - over >= _MIN_CLIPPED:
            # The last line that does not fit is shown cut (its "…" says so), not dropped.
            text = clip(text, len(text) - over, ellipsis=True)
            delta = _insert_cost(picker, order, index, text)
        if size + delta > plan.budget:
            open_sides.remove(side)
            continue
        picker.shown[index] = text
        insort(order, index)
        size += delta
        grown[side] += len(text) + 1
        step = 1 if side == "head" else -1
        ends[side] = _next_free(picker, index + step, step)


def _insert_cost(picker: _Picker, order: list[int], index: int, text: str) -> int:
    """How the rendered size changes when line ``index`` is shown as ``text``."""
    lines = picker.doc.lines
    at = bisect_left(order, index)
    before = order[at - 1] if at > 0 else -1
    after = order[at] if at < len(order) else len(lines)
    old = _gap_part(lines, before + 1, after)
    new = (
        _gap_part(lines, before + 1, index)
        + picker.cost(index, text)
        + _gap_part(lines, index + 1, after)
    )
    return new - old


def _gap_part(lines: list[str], start: int, stop: int) -> int:
    """What the gap ``[start, stop)`` costs rendered, its newline included (0 when empty)."""
    count = stop - start
    if count <= 0:
        return 0
    if count == 1 and not lines[start].strip():
        return 1
    return len(gap_marker(count)) + 1


def _next_free(picker: _Picker, index: int, step: int) -> int:
    """The first line from ``index`` (moving by ``step``) that is not shown yet."""
    while 0 <= index < len(picker.doc.lines) and index in picker.shown:
        index += step
    return index


def _clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else clip(line, limit, ellipsis=True)

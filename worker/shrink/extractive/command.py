"""Command output: the outcome first, then errors with their locations, then the folded log."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from producer.classify.signals import CODE_FRAME, Kind
from producer.contract import ToolType
from producer.textcut import split_lines
from worker.shrink.extractive.compose import Composer, joined
from worker.shrink.salience import Salient, find_salient

_LOCATION_ONLY = re.compile(
    r"^\s*(?:-->|==>|at|in|File|@|↳)?\s*((?:[\w.~-]*/)*[\w.-]+\.\w{1,8}:\d+(?::\d+)?)\s*$"
)
_RULE = re.compile(r"^(?:[A-Z]{1,5}\d{2,5}|(?:error|warning)\[[\w-]+\]|[a-z]+(?:-[a-z]+)+)\b")
_DIGITS = re.compile(r"\d+")
# At least three letters or digits (``[\W_]`` is everything else): a shape worth showing.
_THREE_ALNUM = re.compile(r"[^\W_](?:[\W_]*[^\W_]){2}")
_SHAPE_PREFIX = 48
_FOLD_AT = 3
_SHAPE_WINDOW = 5000
_HEADER_LOOKBACK = 6


@dataclass(slots=True)
class _Diagnostic:
    header: str
    locations: list[str] = field(default_factory=list)


def _header_before(text: str, start: int) -> str | None:
    """The nearest unindented line above ``start`` (a linter's rule line above its location)."""
    end = start - 1
    for _ in range(_HEADER_LOOKBACK):
        if end <= 0:
            return None
        line_start = text.rfind("\n", 0, end) + 1
        line = text[line_start:end]
        end = line_start - 1
        if line.strip() and not line[0].isspace() and not _LOCATION_ONLY.match(line):
            return line.strip()
    return None


def _diagnostics(text: str, items: list[Salient]) -> list[_Diagnostic]:
    """Location-only lines grouped under the rule line each belongs to, biggest group first."""
    groups: dict[str, _Diagnostic] = {}
    for item in sorted(items, key=lambda s: s.start):
        if item.kind is not Kind.LOCATION:
            continue
        match = _LOCATION_ONLY.match(item.text)
        if not match:
            continue
        header = _header_before(text, item.start)
        if header is None:
            continue
        rule = _RULE.match(header)
        key = rule.group(0) if rule else _DIGITS.sub("#", header)[:_SHAPE_PREFIX]
        group = groups.setdefault(key, _Diagnostic(header))
        group.locations.append(match.group(1))
    return sorted(groups.values(), key=lambda g: -len(g.locations))


def _render(item: Salient) -> str:
    body = item.text.rstrip()
    return f"{body} (×{item.count})" if item.count > 1 else body


def _folded_body(lines: list[str], shown: set[str]) -> list[str]:
    """The log with lines of one repeated shape reduced to the first, marked with a count."""
    window = (
        lines if len(lines) <= 2 * _SHAPE_WINDOW else lines[:_SHAPE_WINDOW] + lines[-_SHAPE_WINDOW:]
    )
    shapes = [_DIGITS.sub("#", line.strip())[:_SHAPE_PREFIX] for line in window]
    counts = Counter(shapes)
    seen: set[str] = set()
    view: list[str] = []
    for line, shape in zip(window, shapes, strict=True):
        if not _THREE_ALNUM.search(shape) or line.strip() in shown:
            continue
        if counts[shape] >= _FOLD_AT:
            if shape in seen:
                continue
            seen.add(shape)
            view.append(f"{line.rstrip()} [×{counts[shape]} similar]")
        else:
            view.append(line.rstrip())
    return view


def summarize_command(text: str, budget: int, query: str | None) -> str:
    """Verdicts and exit codes, rule groups, errors (folded, with locations), then the log."""
    items = find_salient(text, ToolType.COMMAND_OUTPUT, query)
    out = Composer(budget)
    shown: set[str] = set()
    outcome = sorted(
        (i for i in items if i.kind in (Kind.VERDICT, Kind.EXIT)), key=lambda s: s.start
    )
    for item in outcome[-8:]:
        if out.add_clipped(_render(item), until=budget // 4):
            shown.add(item.text.strip())
    diagnostics = _diagnostics(text, items)
    if diagnostics:
        _add_diagnostics(out, diagnostics, out.used + int(budget * 0.5))
        shown.update(group.header for group in diagnostics)
    problems = [
        i for i in items
        if i.kind not in (Kind.VERDICT, Kind.EXIT, Kind.LOCATION)
        and i.text.strip() not in shown and not CODE_FRAME.match(i.text)
    ]  # fmt: skip
    room = int(budget * (0.3 if diagnostics else 0.55))
    limit = out.used + room
    chosen: list[Salient] = []
    for item in problems:
        cost = min(len(_render(item)), 300) + 1
        if cost <= room:
            chosen.append(item)
            room -= cost
    for item in sorted(chosen, key=lambda s: s.start):
        if out.add_clipped(_render(item)[:600], until=limit):
            shown.add(item.text.strip())
    _add_body(out, split_lines(text), shown)
    return out.text()


def _add_diagnostics(out: Composer, groups: list[_Diagnostic], limit: int) -> None:
    """One line per rule with its locations; every rule gets a fair share of the room."""
    room = min(limit, out.budget) - out.used
    heads = [f"{group.header[:90]} (×{len(group.locations)}): " for group in groups]
    needs = [
        len(h) + sum(len(loc) + 2 for loc in g.locations) + 1
        for h, g in zip(heads, groups, strict=True)
    ]
    shares = [0] * len(groups)
    pending = list(range(len(groups)))
    while pending and room > 0:
        fair = room // len(pending)
        settled = [i for i in pending if needs[i] - shares[i] <= fair]
        if not settled:
            for i in pending:
                shares[i] += fair
            break
        for i in settled:
            room -= needs[i] - shares[i]
            shares[i] = needs[i]
            pending.remove(i)
    for head, group, share in zip(heads, groups, shares, strict=True):
        width = share - len(head) - 1
        if width >= min(24, len(group.locations[0])):
            out.add(head + joined(group.locations, width), until=limit)


def _add_body(out: Composer, lines: list[str], shown: set[str]) -> None:
    """Head and tail of the folded log in whatever room is left."""
    view = _folded_body(lines, shown)
    room = out.remaining
    if room < 40 or not view:
        return
    total = sum(len(line) + 1 for line in view)
    if total <= room:
        out.add_all(view)
        return
    head_room = room // 2
    head: list[str] = []
    used = 0
    for line in view:
        if used + len(line) + 1 > head_room:
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    used += len("[...99999 lines omitted...]") + 1
    for line in reversed(view[len(head) :]):
        if used + len(line) + 1 > room:
            break
        tail.append(line)
        used += len(line) + 1
    omitted = len(view) - len(head) - len(tail)
    out.add_all([*head, f"[...{omitted} lines omitted...]", *reversed(tail)])

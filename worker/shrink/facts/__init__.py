"""The few facts an extractive summary states before the lines it shows: counts and outlines.

A line or two per tool kind (its ``ToolKind.facts``), at most a sixth of the budget: hits per
file, entries per kind, the shape of a JSON value, a page's headings. The lines themselves are
the engine's. Reading ``ls``/``find``/``tree`` output is ``listing``, a JSON value's shape
``jsonview``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable

from tersify.worker.shrink.facts.jsonview import outline
from tersify.worker.shrink.facts.listing import parse_listing

_HIT = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+):(?:\d+:)?(.*)$", re.M)
_COUNT_ROW = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+)$", re.M)
_HEADING = re.compile(
    r"^\s{0,3}#{1,6}\s+(\S.*)$|^(\S.{1,80})\n(?:={3,}|-{3,})\s*$|^(\S.{0,80})¶\s*$", re.M
)
_MAX_JSON = 512 * 1024  # parsing more costs more than an outline is worth


Facts = Callable[[str, int], list[str]]
"""A tool kind's facts: at most two lines about a text in at most so many chars."""
MAX_SCANNED = 512 * 1024
"""Past this, counting would cost more than the facts are worth: no facts."""
_MIN_BUDGET = 40


def stated(make: Facts, text: str, budget: int) -> list[str]:
    """The facts line(s) ``make`` states about ``text`` in at most ``budget`` chars."""
    if budget < _MIN_BUDGET or len(text) > MAX_SCANNED:
        return []
    return [line for line in make(text, budget) if line][:2]


def no_facts(text: str, budget: int) -> list[str]:
    """No facts: the lines say it all (a command's output, a file's outline is its own)."""
    return []


def joined(items: Iterable[str], room: int, *, sep: str = ", ", more: str = ", …") -> str:
    """As many ``items`` as fit in ``room`` chars joined by ``sep``, '…' when some are left out.

    ``items`` is read lazily, one item ahead: a long generator costs only what is shown.
    """
    out: list[str] = []
    used = 0
    rest = iter(items)
    item = next(rest, None)
    while item is not None:
        following = next(rest, None)
        cost = len(item) + (len(sep) if out else 0)
        tail = len(more) if following is not None else 0
        if used + cost + tail > room:
            return sep.join(out) + (more if out else "…")
        out.append(item)
        used += cost
        item = following
    return sep.join(out)


def search_facts(text: str, budget: int) -> list[str]:
    hits = _HIT.findall(text)
    if not hits:
        rows = _COUNT_ROW.findall(text)
        if not rows:
            return []
        total = sum(int(n) for _, n in rows)
        return [f"{total} matches in {len(rows)} files"]
    per_file = Counter(path for path, _, _ in hits)
    head = f"{len(hits)} hits in {len(per_file)} files"
    if len(per_file) < 2:
        return [head]
    items = (f"{path} ({n})" for path, n in per_file.most_common())
    return [f"{head}; most in: " + joined(items, budget - len(head) - 12)]


def listing_facts(text: str, budget: int) -> list[str]:
    entries, errors = parse_listing(text)
    if not entries:
        return []
    dirs = sum(1 for e in entries if e.is_dir)
    folders = len({e.folder for e in entries})
    where = f" in {folders} listed folders" if folders > 1 else ""
    line = f"{len(entries)} entries ({len(entries) - dirs} files, {dirs} folders){where}"
    return [line + (f"; {len(errors)} errors" if errors else "")]


def structured_facts(text: str, budget: int) -> list[str]:
    if len(text) > _MAX_JSON or text.lstrip()[:1] not in "[{":
        return []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    return [outline(value, budget)]


def web_facts(text: str, budget: int) -> list[str]:
    found = _HEADING.findall(text[:400_000])
    headings = [(a or b or c).strip() for a, b, c in found]
    unique = list(dict.fromkeys(h for h in headings if h))
    if len(unique) < 2:
        return []
    return ["outline: " + joined(unique, budget - 9, sep=" · ")]

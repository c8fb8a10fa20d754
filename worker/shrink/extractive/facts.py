"""The few facts an extractive summary states before the lines it shows: counts and outlines.

A line or two per type, at most a sixth of the budget: hits per file, entries per kind, the
shape of a JSON value, a page's headings, a file's size. The lines themselves are the engine's.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from tersify.contract import ToolType
from tersify.worker.shrink.document import Doc
from tersify.worker.shrink.extractive.compose import joined
from tersify.worker.shrink.extractive.jsonview import outline
from tersify.worker.shrink.extractive.listing import parse_listing

_HIT = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+):(?:\d+:)?(.*)$", re.M)
_COUNT_ROW = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+)$", re.M)
_HEADING = re.compile(
    r"^\s{0,3}#{1,6}\s+(\S.*)$|^(\S.{1,80})\n(?:={3,}|-{3,})\s*$|^(\S.{0,80})¶\s*$", re.M
)
_MAX_JSON = 512 * 1024  # parsing more costs more than an outline is worth
_MAX_SCANNED = 512 * 1024  # past this, counting would cost more than the facts are worth


def facts(tool_type: ToolType, doc: Doc, budget: int) -> list[str]:
    """The facts line(s) for ``doc`` of ``tool_type`` in at most ``budget`` chars."""
    make = {
        ToolType.SEARCH_RESULTS: _search,
        ToolType.DIRECTORY_LISTING: _listing,
        ToolType.STRUCTURED_DATA: _structured,
        ToolType.WEB_CONTENT: _web,
    }.get(tool_type)
    if make is None or budget < 40 or (len(doc.text) > _MAX_SCANNED and make is not _structured):
        return []
    return [line for line in make(doc.text, budget) if line][:2]


def _search(text: str, budget: int) -> list[str]:
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


def _listing(text: str, budget: int) -> list[str]:
    entries, errors = parse_listing(text)
    if not entries:
        return []
    dirs = sum(1 for e in entries if e.is_dir)
    folders = len({e.folder for e in entries})
    where = f" in {folders} listed folders" if folders > 1 else ""
    line = f"{len(entries)} entries ({len(entries) - dirs} files, {dirs} folders){where}"
    return [line + (f"; {len(errors)} errors" if errors else "")]


def _structured(text: str, budget: int) -> list[str]:
    if len(text) > _MAX_JSON or text.lstrip()[:1] not in "[{":
        return []
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return []
    return [outline(value, budget)]


def _web(text: str, budget: int) -> list[str]:
    found = _HEADING.findall(text[:400_000])
    headings = [(a or b or c).strip() for a, b, c in found]
    unique = list(dict.fromkeys(h for h in headings if h))
    if len(unique) < 2:
        return []
    return ["outline: " + joined(unique, budget - 9, sep=" · ")]

"""Search results: hits grouped by file with counts, the hits matching the query first."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from producer.classify.sanitize import lowercase
from producer.textcut import split_lines
from worker.shrink.extractive.compose import Composer, joined
from worker.shrink.lines import LineLocator
from worker.shrink.query import TermWeights, query_terms, weigh_terms

# path:line:text (grep -n, rg -n), path:line:col:text (rg --column), path:count (rg -c).
_HIT = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+):(?:\d+:)?(.*)$", re.M)
_COUNT = re.compile(r"^((?:\./)?[^\s:][^:\n]{0,400}?):(\d+)$", re.M)
_HEADING_HIT = re.compile(r"^(\d+)[:-](.*)$")
_DEFINITION = re.compile(
    r"^\s{0,4}(?:(?:export\s+)?(?:async\s+)?(?:def|class|function|fn|func|struct|enum|interface|"
    r"type|const|let|var|static|final|public|private|pub)\b|[A-Z][A-Z0-9_]{2,}\s*(?::[^=]*)?=[^=])"
)
_DIAGNOSTIC = re.compile(r"^(?:rg|grep|ag|ack|ugrep): |No such file|Permission denied|^Binary file")
_MAX_QUERY_HITS = 400


@dataclass(frozen=True, slots=True)
class _Hit:
    line: str
    path: str
    score: float


def _folder(path: str) -> str:
    parts = path.lstrip("./").split("/")
    return parts[0] + "/" if len(parts) > 1 else "."


def summarize_search(text: str, budget: int, query: str | None, *, flat: bool = False) -> str:
    """Counts per file and folder, hits matching the query, then a spread of the other hits."""
    hits = _HIT.findall(text)
    if len(hits) * 2 < text.count("\n") + 1:
        count_rows = _COUNT.findall(text)
        if count_rows and len(count_rows) > len(hits):
            return _summarize_counts(text, count_rows, budget, query)
        if not hits and not flat:
            return _summarize_headings(text, budget, query)
    per_file = Counter(path for path, _, _ in hits)
    out = Composer(budget)
    out.add(f"{len(hits)} hits in {len(per_file)} files")
    out.add_all(_problem_lines(text)[:5], until=budget // 6)
    best = _query_hits(text, query)
    shown: set[str] = set()
    if best:
        out.add("matching the query:", until=budget // 2)
        for hit in best:
            if out.add_clipped(hit.line[:400], until=int(budget * 0.55)):
                shown.add(hit.line)
    if len(per_file) > 1:
        folders = Counter(_folder(path) for path in per_file.elements())
        if len(folders) > 1:
            room = min(out.remaining, budget // 5) - 12
            items = (f"{name} ({n})" for name, n in folders.most_common())
            out.add("by folder: " + joined(items, max(room, 20)))
        room = min(out.remaining, budget // 4) - 20
        items = (f"{name} ({n})" for name, n in per_file.most_common())
        out.add("files with most hits: " + joined(items, max(room, 20)))
    _add_spread(out, text, shown)
    return out.text()


def _problem_lines(text: str) -> list[str]:
    """The search tool's own complaints (unreadable paths, binary files)."""
    found: list[str] = []
    for pos in (m.start() for m in _DIAGNOSTIC.finditer(text[:200_000])):
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        line = text[start : end if end != -1 else len(text)]
        if not _HIT.match(line) and line not in found:
            found.append(line)
    return found


def _query_hits(text: str, query: str | None) -> list[_Hit]:
    """Hit lines holding the query's rarer terms, best first; definitions beat mere uses."""
    terms = query_terms(query)
    if not terms:
        return []
    low = lowercase(text)
    units = text.count("\n") + 1
    weights = weigh_terms(terms, low, units)
    if not weights:
        return []
    locator = LineLocator(text)
    seen: set[int] = set()
    scored: list[_Hit] = []
    positions: list[int] = []
    for term, weight in weights.weights.items():
        if weight <= 0.1:
            continue
        pos = low.find(term)
        while pos != -1 and len(positions) < 20_000:
            positions.append(pos)
            pos = low.find(term, pos + len(term))
    line_end = -1
    for pos in sorted(positions):
        if pos <= line_end:
            continue
        _, start, line_end = locator.locate(pos)
        if start in seen:
            continue
        seen.add(start)
        scored.append(_score_hit(text[start:line_end], low[start:line_end], weights))
    scored.sort(key=lambda h: -h.score)
    return [h for h in scored[:_MAX_QUERY_HITS] if h.score > 0]


def _score_hit(line: str, low: str, weights: TermWeights) -> _Hit:
    match = _HIT.match(line)
    path, content = (match.group(1), match.group(3)) if match else ("", line)
    score = weights.score(low)
    # A term in the hit's text says more than one in its path; a definition more than a use.
    content_low = low[len(low) - len(content) :] if content else ""
    score += 0.5 * weights.score(content_low)
    if _DEFINITION.match(content):
        score += 0.3
    return _Hit(line, path, score)


def _add_spread(out: Composer, text: str, shown: set[str]) -> None:
    """Other hits in their order, one file after another, while they fit."""
    out.add("other hits:" if shown else "hits:")
    misses = 0
    for line in split_lines(text):
        if line in shown or not line.strip():
            continue
        if not out.add(line):
            misses += 1
            if out.remaining < 40 or misses > 100:
                break


def _summarize_counts(
    text: str, rows: list[tuple[str, str]], budget: int, query: str | None
) -> str:
    """``rg -c`` output: totals, the files with most matches (as ``path:count``), folders."""
    counts = [(path, int(n)) for path, n in rows]
    total = sum(n for _, n in counts)
    out = Composer(budget)
    out.add(f"{total} matches in {len(counts)} files")
    best = _query_hits(text, query)
    for hit in best[:5]:
        out.add(hit.line, until=budget // 5)
    folders: Counter[str] = Counter()
    for path, n in counts:
        folders[_folder(path)] += n
    if len(folders) > 1:
        items = (f"{name} ({n})" for name, n in folders.most_common())
        out.add("by folder: " + joined(items, budget // 4))
    out.add("most matches:")
    for path, n in sorted(counts, key=lambda c: -c[1]):
        if not out.add(f"{path}:{n}"):
            break
    return out.text()


def _summarize_headings(text: str, budget: int, query: str | None) -> str:
    """Heading-style output (a path line, then ``line:text`` hits): flatten it to ``path:line:``."""
    flat: list[str] = []
    path = ""
    for line in split_lines(text):
        match = _HEADING_HIT.match(line)
        if match and path:
            flat.append(f"{path}:{match.group(1)}:{match.group(2)}")
        elif line.strip() and line.strip() != "--":
            path = line.strip()
    if not flat:
        lines = split_lines(text)
        out = Composer(budget)
        out.add(f"{len(lines)} lines")
        best = _query_hits(text, query)
        for hit in best:
            out.add(hit.line[:400], until=budget // 2)
        out.add_all(lines)
        return out.text()
    return summarize_search("\n".join(flat), budget, query, flat=True)

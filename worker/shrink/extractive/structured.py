"""Structured data: JSON by shape, the records matching the query, names and versions."""

from __future__ import annotations

import json
from typing import Any

from producer.classify.sanitize import lowercase
from producer.contract import ToolType
from worker.shrink.extractive.compose import Composer, joined
from worker.shrink.extractive.jsonview import Found, compact, outline, record_keys, value_at
from worker.shrink.fallback import fallback_truncate
from worker.shrink.query import TermWeights, query_terms, weigh_terms

_NAME_KEYS = ("name", "package", "id", "key", "title", "slug", "full_name", "login", "path")
_VERSION_KEYS = ("version", "ver", "tag", "status", "state", "value", "type")
_MAX_POSITIONS = 400
_MAX_REFERENCES = 40


def _parse(text: str) -> Any:
    """The JSON value of ``text``, a list for JSON lines; raises ValueError otherwise."""
    stripped = text.strip()
    try:
        return json.loads(stripped)
    except ValueError:
        rows = [line for line in stripped.split("\n") if line.strip()]
        if len(rows) < 2 or rows[0].lstrip()[:1] not in "[{":
            raise
        return [json.loads(row) for row in rows]


def summarize_structured(text: str, budget: int, query: str | None) -> str:
    """Shape, query-matching values, then a name/version table or key names."""
    try:
        value = _parse(text)
    except (ValueError, RecursionError):
        return fallback_truncate(text, ToolType.STRUCTURED_DATA, budget, query)
    raw = text.strip() if text.strip().startswith(("{", "[")) else None
    out = Composer(budget)
    out.add(outline(value, budget // 5))
    matches = _query_matches(raw, value, query) if raw is not None else []
    for shown, found in enumerate(matches):
        room = min(out.remaining, int(budget * 0.6) - out.used)
        share = room if shown == 0 else min(room, budget // 3)
        if share < 60:
            break
        label = f"{found.key}: " if found.key else "match: "
        out.add(label + compact(found.value, share - len(label)), until=int(budget * 0.6))
    _add_table(out, value)
    return out.text()


def _query_matches(raw: str | None, value: Any, query: str | None) -> list[Found]:
    """Values around the query's rarer terms, best first; keys named like a term rank high."""
    terms = query_terms(query)
    if not terms or raw is None:
        return []
    low = lowercase(raw)
    units = max(_count_units(value), 1)
    weights = weigh_terms(terms, low, units)
    if not weights:
        return []
    positions: list[int] = []
    for term, weight in sorted(weights.weights.items(), key=lambda tw: -tw[1]):
        if weight <= 0.1:
            continue
        pos = low.find(term)
        while pos != -1 and len(positions) < _MAX_POSITIONS:
            positions.append(pos)
            pos = low.find(term, pos + len(term))
    candidates: dict[tuple[int, int], tuple[float, Found]] = {}
    for pos in positions:
        found = value_at(raw, pos)
        if found is None or (found.start, found.end) in candidates:
            continue
        if found.end - found.start > len(raw) // 2 and len(raw) > 4000:
            continue
        candidates[(found.start, found.end)] = (_score(found, low, weights), found)
    ranked = sorted(candidates.values(), key=lambda sf: (-sf[0], sf[1].end - sf[1].start))
    if ranked:
        ranked = _follow_references(raw, low, weights, ranked)
    return [found for _, found in ranked]


def _score(found: Found, low: str, weights: TermWeights) -> float:
    span = low[found.start : min(found.end, found.start + 4000)]
    score = weights.score(span)
    if found.key:
        key = lowercase(found.key)
        # A key named exactly like a term is the thing asked about; one containing it is close.
        for term, weight in weights.weights.items():
            if key == term:
                score += 1.0 + weight / weights.total
            elif term in key:
                score += 0.5 * len(term) / len(key) + weight / weights.total
    return score


def _follow_references(
    raw: str, low: str, weights: TermWeights, ranked: list[tuple[float, Found]]
) -> list[tuple[float, Found]]:
    """Names the best match mentions that are keys elsewhere ("shape": "X" ... "X": {...})."""
    best_score, best = ranked[0]
    own = {(f.start, f.end): score for score, f in ranked}
    references: dict[tuple[int, int], tuple[float, Found]] = {}
    for name in _strings(best.value)[:_MAX_REFERENCES]:
        if len(name) < 4 or " " in name:
            continue
        pos = raw.find(f'"{name}":')
        found = value_at(raw, pos + 1) if pos != -1 else None
        if found is None or found.key != name or found.start == best.start:
            continue
        relevance = 0.5 + weights.score(lowercase(name))
        span = (found.start, found.end)
        references[span] = (max(own.get(span, 0.0), best_score * relevance) + 0.1, found)
    rest = [r for r in ranked[1:] if (r[1].start, r[1].end) not in references]
    rest.extend(references.values())
    rest.sort(key=lambda sf: (-sf[0], sf[1].end - sf[1].start))
    return [ranked[0], *rest]


def _strings(value: Any) -> list[str]:
    """String leaves of a value, breadth first, stopping early on big values."""
    found: list[str] = []
    queue = [value]
    while queue and len(found) < 200:
        node = queue.pop(0)
        if isinstance(node, dict):
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node[:50])
        elif isinstance(node, str) and len(node) <= 80:
            found.append(node)
    return found


def _count_units(value: Any) -> int:
    if isinstance(value, list):
        return len(value)
    if isinstance(value, dict):
        return sum(len(v) if isinstance(v, (dict, list)) else 1 for v in value.values())
    return 1


def _add_table(out: Composer, value: Any) -> None:
    """Name/version pairs of an array of records, or the keys of the biggest objects."""
    records = value if isinstance(value, list) else None
    if isinstance(value, dict) and len(value) <= 3:
        arrays = [v for v in value.values() if isinstance(v, list) and v]
        records = max(arrays, key=len) if arrays else None
    if records and isinstance(records[0], dict):
        keys = record_keys(records)
        name = next((k for k in _NAME_KEYS if k in keys), keys[0] if keys else None)
        second = next((k for k in _VERSION_KEYS if k in keys and k != name), None)
        if name is not None:
            rows = (
                " ".join(str(r.get(k, "")) for k in (name, second) if k)
                for r in records
                if isinstance(r, dict)
            )
            label = f"{name}" + (f" {second}" if second else "") + ": "
            out.add(label + joined(rows, out.remaining - len(label)))
        return
    if isinstance(value, dict):
        for key, child in sorted(value.items(), key=lambda kv: -_count_units(kv[1])):
            if isinstance(child, dict) and len(child) > 1:
                label = f"{key} keys: "
                if out.remaining - len(label) < 40:
                    break
                out.add(label + joined(map(str, child), min(out.remaining - len(label), 600)))

"""Forgetting a session: every Redis key and list entry that holds its data, deleted on request.

Jobs are keyed by job id, not session, so the session's jobs are found by scanning the job
records (``tersify:job:*``, which name their session and payload) and the stored results
(``tersify:result:*``, ``tersify:late:*``, ``tersify:compaction:*``, which outlive them); spilled
full texts (``tersify:spill:*``) and the gateway's replacements (``tersify:gateway:rewrite:*``)
name their session too. A stored output shared with another session's job (the same bytes, the
same digest) is kept for that job. Summaries in the summary cache are keyed by content, not
session, and are left to expire (``TERSIFY_CACHE_TTL_SECONDS``). A job still queued or running
when the session is forgotten may store its result afterwards: forget a session once its agent
has stopped.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from tersify.client.core import Operation, Round
from tersify.store import keys
from tersify.store.commands import command

_BATCH = 500
_FAILED = "could not forget"
_RESULT_PATTERNS = (keys.result("*"), keys.late_result("*"), keys.compaction_result("*"))


class Forgotten(BaseModel):
    """What forgetting a session deleted."""

    session_id: str
    jobs: int = 0
    redis_keys: int = 0
    list_entries: int = 0
    log_files: int = 0


def _pages(pattern: str) -> Operation[list[list[str]]]:
    """The keys matching ``pattern``, in pages (one SCAN pass: bounded by the keyspace)."""
    pages: list[list[str]] = []
    page: list[str] = []
    cursor: int | None = None
    while cursor != 0:
        scan = (command("scan", cursor or 0, match=pattern, count=1000),)
        cursor, found = (yield Round(scan, _FAILED))[0]
        for key in found:
            page.append(key.decode() if isinstance(key, bytes) else str(key))
            if len(page) == _BATCH:
                pages.append(page)
                page = []
    return [*pages, page] if page else pages


def _each(page: list[str], name: str, *args: Any) -> Operation[list[Any]]:
    """One command per key of ``page`` in one round trip; their replies."""
    replies: list[Any] = yield Round(tuple(command(name, key, *args) for key in page), _FAILED)
    return replies


def _text(value: object) -> str | None:
    """A reply value as text."""
    if value is None:
        return None
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _session_of(raw: object) -> str | None:
    """The ``session_id`` of a stored JSON result, if it is one."""
    try:
        value = json.loads(raw) if isinstance(raw, bytes | str) else None
    except ValueError:
        return None
    return str(value.get("session_id")) if isinstance(value, dict) else None


def _jobs(session_id: str) -> Operation[tuple[set[str], set[str], set[str]]]:
    """``(job ids, payload digests, digests other sessions' jobs still use)``."""
    jobs: set[str] = set()
    mine: set[str] = set()
    theirs: set[str] = set()
    prefix = len(keys.job_meta(""))
    for page in (yield from _pages(keys.job_meta("*"))):
        rows = yield from _each(page, "hmget", ["session_id", "payload"])
        for key, (owner, digest) in zip(page, rows, strict=True):
            digests = {text} if (text := _text(digest)) else set()
            if _text(owner) == session_id:
                jobs.add(key[prefix:])
                mine |= digests
            else:
                theirs |= digests
    return jobs, mine, theirs


def _results(session_id: str) -> Operation[set[str]]:
    """The result keys (summaries, late ones, compactions) that belong to the session."""
    found: set[str] = set()
    for pattern in _RESULT_PATTERNS:
        for page in (yield from _pages(pattern)):
            values = yield from _each(page, "lindex", 0)
            pairs = zip(page, values, strict=True)
            found |= {key for key, raw in pairs if _session_of(raw) == session_id}
    return found


def _compactions(session_id: str) -> Operation[set[str]]:
    """The compaction jobs submitted for the session (their marker holds its id)."""
    found: set[str] = set()
    prefix = len(keys.compaction_job(""))
    for page in (yield from _pages(keys.compaction_job("*"))):
        owners = yield from _each(page, "get")
        pairs = zip(page, owners, strict=True)
        found |= {key[prefix:] for key, owner in pairs if _text(owner) == session_id}
    return found


def _owned(pattern: str, session_id: str) -> Operation[set[str]]:
    """The hashes matching ``pattern`` whose ``session_id`` field is the session's: the full
    texts the inline ``truncate`` spilled, the links to full outputs (``output_ref``)."""
    found: set[str] = set()
    for page in (yield from _pages(pattern)):
        owners = yield from _each(page, "hget", "session_id")
        pairs = zip(page, owners, strict=True)
        found |= {key for key, owner in pairs if _text(owner) == session_id}
    return found


def _gate_members(session_id: str) -> Operation[dict[str, list[bytes]]]:
    """The session's members of the gate's global sets (``"{session}\\n{job}"``)."""
    mark = f"{session_id}\n".encode()
    sets = (keys.gate_expiries(), keys.gate_finishing())
    # in-flight holds only: small
    members = yield Round(tuple(command("zrange", key, 0, -1) for key in sets), _FAILED)
    return {
        key: [m for m in found if isinstance(m, bytes) and m.startswith(mark)]
        for key, found in zip(sets, members, strict=True)
    }


def _entries(key: str, session_id: str, jobs: set[str]) -> Operation[int]:
    """Remove the entries of a capped list that name the session or one of its jobs."""
    needles = {session_id, *jobs}
    (raws,) = yield Round((command("lrange", key, 0, -1),), _FAILED)  # capped lists: bounded
    doomed = [raw for raw in raws if any(needle in (_text(raw) or "") for needle in needles)]
    if not doomed:
        return 0
    removed = yield Round(tuple(command("lrem", key, 0, raw) for raw in doomed), _FAILED)
    return sum(int(count) for count in removed)


def _doomed(session_id: str) -> Operation[tuple[set[str], set[str]]]:
    """``(keys to delete, job ids)``: everything Redis holds for the session, by key."""
    jobs, digests, shared = yield from _jobs(session_id)
    jobs |= yield from _compactions(session_id)
    results = yield from _results(session_id)
    result_prefix = (keys.result(""), keys.late_result(""), keys.compaction_result(""))
    for key in results:
        jobs.add(next(key[len(p) :] for p in result_prefix if key.startswith(p)))
    owned_payloads = keys.session_payloads(session_id)
    (members,) = yield Round((command("smembers", owned_payloads),), _FAILED)
    digests |= {_text(d) or "" for d in members}
    owned = yield from _owned(keys.spill("*"), session_id)
    owned |= yield from _owned(keys.output("*"), session_id)
    owned |= yield from _owned(keys.gateway_rewrite("*"), session_id)
    doomed = {*results, *owned, owned_payloads, keys.compaction_summary(session_id)}
    doomed.add(keys.gateway_session(session_id))
    doomed |= {keys.payload(d) for d in digests - shared}
    for job_id in jobs:
        doomed |= {keys.job_meta(job_id), keys.result(job_id), keys.late_result(job_id)}
        doomed |= {keys.logged(job_id), keys.compaction_result(job_id)}
        doomed |= {keys.compaction_job(job_id), keys.started(job_id)}
    gate = (keys.gate_holds, keys.gate_jobs, keys.gate_held, keys.gate_held_bytes)
    doomed |= {key(session_id) for key in gate}
    return doomed, jobs


def forget_session(session_id: str) -> Operation[Forgotten]:
    """Delete everything Redis holds for ``session_id``; the count of what went."""
    doomed, jobs = yield from _doomed(session_id)
    members = yield from _gate_members(session_id)
    deletes = tuple(command("delete", key) for key in sorted(doomed))
    removals = [command("zrem", key, *held) for key, held in members.items() if held]
    if jobs:
        removals.append(command("zrem", keys.RECENT_COMPLETIONS, *jobs))
    replies = yield Round((*deletes, *removals), _FAILED)
    entries = sum(int(r) for r in replies[len(deletes) :])
    for key in (keys.RECENT_FALLBACKS, keys.DEAD_LETTERS):
        entries += yield from _entries(key, session_id, jobs)
    deleted = sum(int(r) for r in replies[: len(deletes)])
    return Forgotten(
        session_id=session_id, jobs=len(jobs), redis_keys=deleted, list_entries=entries
    )

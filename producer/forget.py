"""Forgetting a session: every Redis key and list entry that holds its data, deleted on request.

Jobs are keyed by job id, not session, so the session's jobs are found by scanning the job
records (``tersify:job:*``, which name their session and payload) and the stored results
(``tersify:result:*``, ``tersify:late:*``, ``tersify:compaction:*``, which outlive them); spilled
full texts (``tersify:spill:*``) name their session too. A
stored output shared with another session's job (the same bytes, the same digest) is kept for
that job. Summaries in the summary cache are keyed by content, not session, and are left to
expire (``TERSIFY_CACHE_TTL_SECONDS``). A job still queued or running when the session is
forgotten may store its result afterwards: forget a session once its agent has stopped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import redis
from pydantic import BaseModel

from producer import keys

_BATCH = 500
_RESULT_PATTERNS = (
    f"{keys.PREFIX}result:*",
    f"{keys.PREFIX}late:*",
    f"{keys.PREFIX}compaction:*",
)


class Forgotten(BaseModel):
    """What forgetting a session deleted."""

    session_id: str
    jobs: int = 0
    redis_keys: int = 0
    list_entries: int = 0
    log_files: int = 0


def _pages(client: redis.Redis, pattern: str) -> Iterator[list[str]]:
    """The keys matching ``pattern``, a page at a time (one SCAN pass: bounded by the keyspace)."""
    page: list[str] = []
    for key in client.scan_iter(match=pattern, count=1000):
        page.append(key.decode() if isinstance(key, bytes) else str(key))
        if len(page) == _BATCH:
            yield page
            page = []
    if page:
        yield page


def _many(reply: object) -> list[Any]:
    """A reply that is a list or a set, as a list (redis-py types replies loosely)."""
    assert isinstance(reply, list | set)  # a blocking client answers at once
    return list(reply)


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


def _jobs(client: redis.Redis, session_id: str) -> tuple[set[str], set[str], set[str]]:
    """``(job ids, payload digests, digests other sessions' jobs still use)``."""
    jobs: set[str] = set()
    mine: set[str] = set()
    theirs: set[str] = set()
    prefix = len(keys.job_meta(""))
    for page in _pages(client, keys.job_meta("*")):
        with client.pipeline(transaction=False) as pipe:
            for key in page:
                pipe.hmget(key, ["session_id", "payload"])
            rows = pipe.execute()
        for key, (owner, digest) in zip(page, rows, strict=True):
            digests = {text} if (text := _text(digest)) else set()
            if _text(owner) == session_id:
                jobs.add(key[prefix:])
                mine |= digests
            else:
                theirs |= digests
    return jobs, mine, theirs


def _results(client: redis.Redis, session_id: str) -> set[str]:
    """The result keys (summaries, late ones, compactions) that belong to the session."""
    found: set[str] = set()
    for pattern in _RESULT_PATTERNS:
        for page in _pages(client, pattern):
            with client.pipeline(transaction=False) as pipe:
                for key in page:
                    pipe.lindex(key, 0)
                values = pipe.execute()
            pairs = zip(page, values, strict=True)
            found |= {key for key, raw in pairs if _session_of(raw) == session_id}
    return found


def _compactions(client: redis.Redis, session_id: str) -> set[str]:
    """The compaction jobs submitted for the session (their marker holds its id)."""
    found: set[str] = set()
    prefix = len(keys.compaction_job(""))
    for page in _pages(client, keys.compaction_job("*")):
        owners = _many(client.mget(page))
        pairs = zip(page, owners, strict=True)
        found |= {key[prefix:] for key, owner in pairs if _text(owner) == session_id}
    return found


def _owned(client: redis.Redis, pattern: str, session_id: str) -> set[str]:
    """The hashes matching ``pattern`` whose ``session_id`` field is the session's: the full
    texts the inline ``truncate`` spilled, the links to full outputs (``output_ref``)."""
    found: set[str] = set()
    for page in _pages(client, pattern):
        with client.pipeline(transaction=False) as pipe:
            for key in page:
                pipe.hget(key, "session_id")
            owners = pipe.execute()
        found |= {
            key for key, owner in zip(page, owners, strict=True) if _text(owner) == session_id
        }
    return found


def _gate_members(client: redis.Redis, session_id: str) -> dict[str, list[bytes]]:
    """The session's members of the gate's global sets (``"{session}\\n{job}"``)."""
    mark = f"{session_id}\n".encode()
    found: dict[str, list[bytes]] = {}
    for key in (keys.gate_expiries(), keys.gate_finishing()):
        members = _many(client.zrange(key, 0, -1))  # in-flight holds only: small
        found[key] = [m for m in members if isinstance(m, bytes) and m.startswith(mark)]
    return found


def _entries(client: redis.Redis, key: str, session_id: str, jobs: set[str]) -> int:
    """Remove the entries of a capped list that name the session or one of its jobs."""
    removed = 0
    needles = {session_id, *jobs}
    for raw in _many(client.lrange(key, 0, -1)):  # capped lists: bounded
        if any(needle in (_text(raw) or "") for needle in needles):
            removed += int(str(client.lrem(key, 0, raw)))
    return removed


def forget_session(client: redis.Redis, session_id: str) -> Forgotten:
    """Delete everything Redis holds for ``session_id``; the count of what went."""
    jobs, digests, shared = _jobs(client, session_id)
    jobs |= _compactions(client, session_id)
    results = _results(client, session_id)
    result_prefix = (keys.result(""), keys.late_result(""), keys.compaction_result(""))
    for key in results:
        job_id = next(key[len(p) :] for p in result_prefix if key.startswith(p))
        jobs.add(job_id)
    digests |= {_text(d) or "" for d in _many(client.smembers(keys.session_payloads(session_id)))}
    owned = _owned(client, keys.spill("*"), session_id) | _owned(
        client, keys.output("*"), session_id
    )
    doomed = {*results, *owned, keys.session_payloads(session_id)}
    doomed.add(keys.compaction_summary(session_id))
    doomed |= {keys.payload(d) for d in digests - shared}
    for job_id in jobs:
        doomed |= {keys.job_meta(job_id), keys.result(job_id), keys.late_result(job_id)}
        doomed |= {keys.logged(job_id), keys.compaction_result(job_id)}
        doomed |= {keys.compaction_job(job_id), keys.started(job_id)}
    gate = (keys.gate_holds, keys.gate_jobs, keys.gate_held, keys.gate_held_bytes)
    doomed |= {key(session_id) for key in gate}
    members = _gate_members(client, session_id)
    with client.pipeline(transaction=False) as pipe:
        for key in sorted(doomed):
            pipe.delete(key)
        for key, held in members.items():
            if held:
                pipe.zrem(key, *held)
        if jobs:
            pipe.zrem(keys.RECENT_COMPLETIONS, *jobs)
        replies = pipe.execute()
    entries = sum(int(r) for r in replies[len(doomed) :])
    for key in (keys.RECENT_FALLBACKS, keys.DEAD_LETTERS):
        entries += _entries(client, key, session_id, jobs)
    deleted = sum(int(r) for r in replies[: len(doomed)])
    return Forgotten(
        session_id=session_id, jobs=len(jobs), redis_keys=deleted, list_entries=entries
    )

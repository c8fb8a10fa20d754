"""Forgetting a session: every Redis key and list entry that holds its data, deleted on request.

What a session owns is read from its index (``tersify.store.sessions``: the session's hash, and
the sets of sessions indexed before it), written beside the data itself: its job ids (the keys
derived from them — record, progress, result, late result, markers, compaction — follow), the
other keys it owns (output links, spills, webhook deliveries, passthrough outputs waiting for
the session log, the gateway's replacements; its counts and its entry in the gateway's index
of sessions go too) and its payload digests (a payload another session still uses is kept,
``tersify.store.payloads``). No keyspace scan: the cost is the session's own size plus
one read of each capped list (dead letters, recent fallbacks), whose entries are matched by
their ``session_id`` and ``job_id`` fields exactly, never by a substring. Forgetting first
leaves a tombstone (``keys.forgotten``, kept ``TERSIFY_RESULT_TTL_SECONDS``): a webhook or a
passthrough output queued before it is dropped rather than sent or written afterwards. Summaries
in the summary cache are keyed by content, not session, and are left to expire.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel

from tersify.client.core import Operation, Round
from tersify.settings import Settings
from tersify.store import keys, payloads, sessions
from tersify.store.commands import command

_FAILED = "could not forget"
_MAX_DEPTH = 6


class Forgotten(BaseModel):
    """What forgetting a session deleted."""

    session_id: str
    jobs: int = 0
    redis_keys: int = 0
    list_entries: int = 0
    log_files: int = 0


def _text(value: object) -> str:
    """A reply value as text."""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def _names(value: object, session_id: str, jobs: set[str], depth: int = 0) -> bool:
    """Whether a parsed record names the session (``session_id``) or one of its jobs
    (``job_id``) in a field of that name, at any depth; a JSON string inside is read too."""
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    if isinstance(value, dict):
        if value.get("session_id") == session_id or value.get("job_id") in jobs:
            return True
        value = list(value.values())
    if isinstance(value, list):
        return any(_names(item, session_id, jobs, depth + 1) for item in value)
    return False


def _entries(key: str, session_id: str, jobs: set[str]) -> Operation[int]:
    """Remove the entries of a capped list that name the session or one of its jobs."""
    (raws,) = yield Round((command("lrange", key, 0, -1),), _FAILED)  # capped lists: bounded
    doomed = [raw for raw in raws if _names(_text(raw), session_id, jobs)]
    if not doomed:
        return 0
    removed = yield Round(tuple(command("lrem", key, 1, raw) for raw in doomed), _FAILED)
    return sum(int(count) for count in removed)


def _legacy_gate_members(session_id: str) -> Operation[dict[str, list[bytes]]]:
    """The session's members of the gate's global sets before its hash (``"{session}\\n{job}"``)."""
    mark = f"{session_id}\n".encode()
    sets = (keys.gate_expiries(), keys.gate_finishing())
    # in-flight holds only: small
    members = yield Round(tuple(command("zrange", key, 0, -1) for key in sets), _FAILED)
    return {
        key: [m for m in found if isinstance(m, bytes) and m.startswith(mark)]
        for key, found in zip(sets, members, strict=True)
    }


def _owned(session_id: str, ttl: int) -> Operation[sessions.Owned]:
    """Leave the tombstone, then read the index (the session's hash and the sets before it)."""
    stamp = command("set", keys.forgotten(session_id), int(time.time() * 1000), ex=ttl)
    hashed = command("hkeys", keys.session(session_id))
    legacy = tuple(command("smembers", key(session_id)) for key in sessions.LEGACY_INDEX)
    _, names, *sets = yield Round((stamp, hashed, *legacy), _FAILED)
    owned = sessions.Owned()
    for name in names:
        owned.add(_text(name))
    for into, members in zip((owned.jobs, owned.keys, owned.digests), sets, strict=True):
        into.update(_text(member) for member in members)
    return owned


def _doomed(session_id: str, owned: sessions.Owned) -> set[str]:
    """Every key to delete: the owned ones, those derived from the job ids, the session's own."""
    doomed = set(owned.keys)
    for job_id in owned.jobs:
        doomed |= {keys.job_meta(job_id), keys.result(job_id), keys.late_result(job_id)}
        doomed |= {keys.job_state(job_id), keys.logged(job_id), keys.compaction_result(job_id)}
        doomed |= {keys.compaction_job(job_id), keys.started(job_id)}
    session = (keys.session, keys.gate_held, keys.gate_held_bytes)
    legacy = (keys.gate_holds, keys.gate_jobs, *sessions.LEGACY_INDEX)
    runs = (keys.session_runs,)  # the latest runs that re-runs are told against
    gateway = (keys.gateway_session,)  # the gateway's counts for the session
    summary = (keys.compaction_summary,)
    return doomed | {key(session_id) for key in (*session, *legacy, *runs, *gateway, *summary)}


def forget_session(settings: Settings, session_id: str) -> Operation[Forgotten]:
    """Delete everything Redis holds for ``session_id``; the count of what went."""
    owned = yield from _owned(session_id, settings.result_ttl_seconds)
    jobs = owned.jobs
    members = yield from _legacy_gate_members(session_id)
    deletes = tuple(command("delete", key) for key in sorted(_doomed(session_id, owned)))
    releases = tuple(
        command("eval", payloads.RELEASE, 2, keys.payload(d), keys.payload_sessions(d), session_id)
        for d in sorted(owned.digests)
    )
    removals = [command("zrem", key, *held) for key, held in members.items() if held]
    removals.append(command("zrem", keys.gate_due(), session_id))  # the gate's index
    removals.append(command("zrem", keys.GATEWAY_SESSIONS, session_id))  # the gateway's index
    if jobs:
        removals.append(command("zrem", keys.RECENT_COMPLETIONS, *jobs))
    replies: list[Any] = yield Round((*deletes, *releases, *removals), _FAILED)
    keys_deleted = sum(int(r) for r in replies[: len(deletes) + len(releases)])
    entries = sum(int(r) for r in replies[len(deletes) + len(releases) :])
    for key in (keys.RECENT_FALLBACKS, keys.DEAD_LETTERS):
        entries += yield from _entries(key, session_id, jobs)
    return Forgotten(
        session_id=session_id, jobs=len(jobs), redis_keys=keys_deleted, list_entries=entries
    )

"""Whether any live worker serves a queue: read from the workers' heartbeats, in one call.

Each worker adds its hostname to ``keys.serving(queue)`` for every queue it consumes, scored by
when its heartbeat runs out (Redis server time, so host clocks never matter); a worker that
dies simply stops renewing its score. A producer asks before it waits, so a user learns at once
that nothing will take the job instead of waiting out the whole timeout in silence.
"""

from __future__ import annotations

from typing import Final

from tersify.client.core import Operation, Round
from tersify.contract import Queue
from tersify.store import keys, records
from tersify.store.commands import command

HEARTBEAT_TTL_SECONDS: Final = 30
"""A worker whose heartbeat is older than this counts as gone."""

# KEYS serving · returns how many members' expiry is still ahead of the server's clock.
COUNT_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%d', now), '+inf')
"""

# KEYS serving · ARGV hostname, ttl_ms: renew one worker's entry and drop the long-expired ones.
BEAT_SCRIPT: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], string.format('%d', now + ttl), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - 10 * ttl))
redis.call('PEXPIRE', KEYS[1], string.format('%d', 2 * ttl))
return 1
"""


def no_worker_warning(queue: Queue | str) -> str:
    """The one sentence every entry point shows when no live worker serves ``queue``."""
    name = queue.value if isinstance(queue, Queue) else queue
    return (
        f"no live worker serves the {name!r} queue "
        f"(no heartbeat in the last {HEARTBEAT_TTL_SECONDS}s)"
    )


def _record(job_id: str) -> Operation[dict[str, object] | None]:
    (raw,) = yield Round((records.read(job_id),), "could not read the job")
    return records.fields(raw)


def job_queue(job_id: str) -> Operation[Queue | None]:
    """The queue a submitted job was sent to, or None when the job is unknown or expired."""
    found = yield from _record(job_id)
    name = "" if found is None else str(found.get("queue"))
    return Queue(name) if name in Queue.__members__.values() else None


def job_session(job_id: str) -> Operation[str | None]:
    """The session a submitted job belongs to, or None when the job is unknown or expired."""
    found = yield from _record(job_id)
    return None if found is None or found.get("session_id") is None else str(found["session_id"])


def live_workers(queue: Queue | str) -> Operation[int]:
    """How many workers with a live heartbeat consume ``queue``."""
    name = queue.value if isinstance(queue, Queue) else queue
    count = (command("eval", COUNT_SCRIPT, 1, keys.serving(name)),)
    return int((yield Round(count, "could not read heartbeats"))[0])


def worker_alive(hostname: str) -> Operation[bool]:
    """Whether the worker ``hostname`` has a live heartbeat record."""
    read = (command("exists", keys.worker_alive(hostname)),)
    return bool((yield Round(read, "could not read heartbeats"))[0])


def job_started(job_id: str) -> Operation[bool]:
    """Whether a worker has taken the job (it runs, or ran); False while it waits in its queue."""
    read = (command("exists", keys.job_state(job_id), keys.started(job_id)),)
    return bool((yield Round(read, "could not read the job"))[0])

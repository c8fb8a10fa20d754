"""Every Redis key tersify uses, all under one prefix."""

from __future__ import annotations

PREFIX = "tersify:"


def result(job_id: str) -> str:
    """One-element list holding a job's SummaryResult JSON (a list so waiters can block on it)."""
    return f"{PREFIX}result:{job_id}"


def late_result(job_id: str) -> str:
    """A result written after the job's hold had already expired and been finished elsewhere."""
    return f"{PREFIX}late:{job_id}"


def payload(digest: str) -> str:
    """A stored tool output, addressed by its content hash (the claim check)."""
    return f"{PREFIX}payload:{digest}"


def job_meta(job_id: str) -> str:
    """Hash describing a submitted job (session, tool, sizes) for status and sweeping."""
    return f"{PREFIX}job:{job_id}"


def logged(job_id: str) -> str:
    """Marker: the job's full output is in the session log."""
    return f"{PREFIX}logged:{job_id}"


DEAD_LETTERS = f"{PREFIX}deadletter"
"""List of messages a worker refused (newest first, capped), each with its reason."""


def worker_alive(hostname: str) -> str:
    """Heartbeat key a worker refreshes while it runs (liveness checks, status, tests)."""
    return f"{PREFIX}worker:{hostname}"


def circuit(provider: str) -> str:
    """Hash holding a provider's circuit-breaker state, shared by every worker."""
    return f"{PREFIX}circuit:{provider}"


def rate_bucket(provider: str) -> str:
    """Hash holding a provider's token buckets (requests and tokens per minute)."""
    return f"{PREFIX}ratelimit:{provider}"


def summary_cache(digest: str) -> str:
    """A cached model summary, addressed by the hash of what produced it."""
    return f"{PREFIX}cache:{digest}"


def spill(ref: str) -> str:
    """A full text saved by the inline ``truncate`` so a model tool can read any range back."""
    return f"{PREFIX}spill:{ref}"


def compaction_job(job_id: str) -> str:
    """Marker: a compaction job with this id was submitted (so an unknown id reads 404)."""
    return f"{PREFIX}compaction-job:{job_id}"


def session_payloads(session_id: str) -> str:
    """Set of the digests of a session's stored conversations (compaction jobs): for forget."""
    return f"{PREFIX}session:{session_id}:payloads"


def compaction_result(job_id: str) -> str:
    """One-element list holding a compaction job's result JSON."""
    return f"{PREFIX}compaction:{job_id}"


def compaction_summary(session_id: str) -> str:
    """A session's last compaction summary, the ``previous`` of its next compaction."""
    return f"{PREFIX}compaction-summary:{session_id}"


# --- session gate (owned by producer/gate.py) ---

GATE_PREFIX = f"{PREFIX}gate:"


def gate_token() -> str:
    """Counter handing out the gate's fencing tokens (INCR; monotonic while the key lives)."""
    return f"{GATE_PREFIX}token"


def gate_expiries() -> str:
    """Global ZSET of every hold, member ``"{session_id}\\n{job_id}"``, score = expiry in ms."""
    return f"{GATE_PREFIX}expiries"


def gate_finishing() -> str:
    """Global ZSET of expired holds a sweeper claimed, score = the claim's expiry in ms."""
    return f"{GATE_PREFIX}finishing"


def gate_holds(session_id: str) -> str:
    """ZSET of a session's holds: member job_id, score = effective expiry in ms (server time)."""
    return f"{GATE_PREFIX}{session_id}:holds"


def gate_jobs(session_id: str) -> str:
    """Hash of a session's held jobs: job_id → JSON {token, cap_ms, lease_ms, tool_type, ...}."""
    return f"{GATE_PREFIX}{session_id}:jobs"


def gate_held(session_id: str) -> str:
    """List of user input that arrived while the session's gate was closed, oldest first."""
    return f"{GATE_PREFIX}{session_id}:held"


def gate_held_bytes(session_id: str) -> str:
    """Total bytes of the session's held input (kept beside the list, same TTL)."""
    return f"{GATE_PREFIX}{session_id}:held_bytes"


def gate_events(session_id: str) -> str:
    """Pub/sub channel (not a key) announcing that a session's gate opened."""
    return f"{GATE_PREFIX}{session_id}:events"


# --- metrics and status (owned by worker/metrics/jobs.py) ---

RECENT_FALLBACKS = f"{PREFIX}recent:fallbacks"
"""List of recent fallback results (newest first, capped): ``tersify status`` reads it."""

RECENT_COMPLETIONS = f"{PREFIX}recent:completions"
"""ZSET of recently finished job ids scored by finish time (s), trimmed: the fallback rate."""


def serving(queue: str) -> str:
    """ZSET of the workers consuming ``queue``: member hostname, score = beat expiry (server ms)."""
    return f"{PREFIX}serving:{queue}"


def output(ref: str) -> str:
    """Hash pointing an ``output_ref`` at its session and stored payload (the full output)."""
    return f"{PREFIX}output:{ref}"


def started(job_id: str) -> str:
    """Marker: a worker took the job (so cancelling it ends a running job, not a queued one)."""
    return f"{PREFIX}started:{job_id}"


WEBHOOKS = f"{PREFIX}webhooks"
"""ZSET of webhook deliveries: member the delivery's JSON, score = when it is due (server ms)."""


# --- tenants (owned by producer/tenants.py) ---


def tenant_jobs(tenant: str, minute: int) -> str:
    """Counter of a tenant's submits in one UTC minute (expires after two)."""
    return f"{PREFIX}tenant:{tenant}:jobs:{minute}"


def tenant_spend(tenant: str, day: str) -> str:
    """A tenant's estimated model spend (USD) on one UTC day, ``YYYY-MM-DD`` (expires after two)."""
    return f"{PREFIX}tenant:{tenant}:spend:{day}"


# --- passthrough outputs on their way to the session log (owned by producer/jobs.py) ---

PASSTHROUGH_LOG = f"{PREFIX}sessionlog:pending"
"""List of passthrough outputs with their results, waiting for a worker to log them."""

PASSTHROUGH_LOGGING = f"{PREFIX}sessionlog:inflight"
"""ZSET of entries a worker took from ``PASSTHROUGH_LOG`` and is writing, score = taken at (ms)."""

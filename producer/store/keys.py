"""Every Redis key tersify uses, all under one prefix, each declared once.

A ``Key`` is a family of keys: ``keys.result(job_id)`` names one of them, ``keys.result("*")``
is the SCAN pattern of the family and ``keys.result("")`` its common prefix. Constants name
the keys that exist once. Who writes each key is said beside it.
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "tersify:"


class Key:
    """A family of Redis keys: a template under ``PREFIX`` with ``{}`` for each part."""

    __slots__ = ("doc", "template")

    def __init__(self, template: str, doc: str) -> None:
        self.template = PREFIX + template
        self.doc = doc

    def __call__(self, *parts: object) -> str:
        """The key of these parts (``"*"`` for a pattern, ``""`` for the prefix)."""
        return self.template.format(*parts)

    def __repr__(self) -> str:
        return f"Key({self.template!r})"


# --- jobs and results (producers submit, workers complete) ---

result = Key("result:{}", "One-element list: a job's SummaryResult JSON (waiters block on it).")
late_result = Key("late:{}", "A result stored after the job's expired hold was finished elsewhere.")
payload = Key("payload:{}", "A tool output stored under its content hash (the claim check).")
job_meta = Key("job:{}", "JSON describing a submitted job: session, tool, sizes, payload.")
job_state = Key("state:{}", "A job's progress: T once a worker took it, D once it has a result.")
output = Key("output:{}", "JSON pointing an ``output_ref`` at its session, payload and job.")
spill = Key("spill:{}", "A full text the inline ``truncate`` saved, read back by range.")
summary_cache = Key("cache:{}", "A model summary, under the hash of what produced it.")
logged = Key("logged:{}", "Marker: a compaction job's messages are in the session log.")

# --- compaction jobs ---

compaction_job = Key("compaction-job:{}", "Marker: this compaction job was submitted.")
compaction_result = Key("compaction:{}", "One-element list: a compaction job's result JSON.")
compaction_summary = Key("compaction-summary:{}", "A session's last compaction summary.")

# --- the session gate (tersify.gate); each session's holds are in its hash (``session``) ---

gate_due = Key(
    "gate:due", "ZSET of sessions with holds, score = when the sweeper may next have work (ms)."
)
gate_held = Key("gate:{}:held", "List of input that came while the gate was closed.")
gate_held_bytes = Key("gate:{}:held_bytes", "Total bytes of the session's held input.")
gate_events = Key("gate:{}:events", "Pub/sub channel (not a key) announcing the gate opened.")

# --- workers, providers and status (tersify.worker) ---

worker_alive = Key("worker:{}", "Heartbeat a worker refreshes while it runs.")
serving = Key("serving:{}", "ZSET of a queue's workers, score = heartbeat expiry (ms).")
circuit = Key("circuit:{}", "Hash of a provider's circuit-breaker state.")
rate_bucket = Key("ratelimit:{}", "Hash of a provider's token buckets.")
tenant_jobs = Key("tenant:{}:jobs:{}", "Counter of a tenant's submits in a UTC minute.")
tenant_spend = Key("tenant:{}:spend:{}", "A tenant's model spend (USD) on a UTC day.")

# --- the model-API gateway (tersify.worker.gateway) ---

gateway_rewrite = Key(
    "gateway:rewrite:{}", "Hash: a tool result's replacement, by session and content."
)
gateway_claim = Key("gateway:claim:{}", "The job making a tool result's replacement (set once).")
gateway_session = Key("gateway:session:{}", "Hash of a session's gateway counts: tokens, savings.")

DEAD_LETTERS: Final = f"{PREFIX}deadletter"
"""List of messages a worker refused (newest first, capped), each with its reason."""

RECENT_FALLBACKS: Final = f"{PREFIX}recent:fallbacks"
"""List of recent fallback results (newest first, capped): ``tersify status`` reads it."""

RECENT_COMPLETIONS: Final = f"{PREFIX}recent:completions"
"""ZSET of recently finished job ids scored by finish time (s), trimmed: the fallback rate."""

WEBHOOKS: Final = f"{PREFIX}webhooks"
"""ZSET of webhook delivery ids, score = when it is due (server ms); ``webhook`` holds each."""

PASSTHROUGH_LOG: Final = f"{PREFIX}sessionlog:pending"
"""List of the ids of entries waiting for a worker to log them (oldest last): passthrough
outputs (by job id) and, when kept, lines read back from summarized outputs."""

PASSTHROUGH_LOGGING: Final = f"{PREFIX}sessionlog:inflight"
"""ZSET of entries a worker took from ``PASSTHROUGH_LOG`` and is writing, score = taken at (ms)."""

GATEWAY_TOTALS: Final = f"{PREFIX}gateway:totals"
"""Hash of the gateway's counts over every session: requests, rewrites, tokens, savings."""

GATEWAY_SESSIONS: Final = f"{PREFIX}gateway:sessions"
"""ZSET of the sessions the gateway saw, score = last request (s), trimmed: ``tersify status``."""

# --- webhook deliveries, forgetting, passthrough outputs waiting for the session log ---

webhook = Key("webhook:{}", "A webhook delivery's JSON, by delivery id (the schedule holds ids).")
WEBHOOKS_INFLIGHT: Final = f"{PREFIX}webhooks:inflight"
"""ZSET of delivery ids a sender claimed, score = when its claim lapses (server ms)."""

forgotten = Key("forgotten:{}", "Tombstone: when the session was forgotten (ms); older work drops.")
session = Key(
    "sess:{}", "Hash: what a session owns (its index: j:, k:, p: fields) and its gate's holds."
)
payload_sessions = Key(
    "payload-sessions:{}", "Set of the sessions using a payload once a second one stored it."
)
session_runs = Key(
    "session:{}:runs", "List of a session's latest summarized runs of commands, newest first."
)

passthrough_entry = Key("sessionlog:entry:{}", "A passthrough output and its result, by job id.")
PASSTHROUGH_SIZES: Final = f"{PREFIX}sessionlog:sizes"
"""Hash of the job ids in ``PASSTHROUGH_LOG`` and their entries' sizes in bytes."""
PASSTHROUGH_BYTES: Final = f"{PREFIX}sessionlog:bytes"
"""Counter: the bytes of every entry waiting in ``PASSTHROUGH_LOG`` (the sum of its sizes)."""

# --- re-reads of summarized outputs (tersify.client.rereads counts; worker.metrics reads) ---

reread_mark = Key("reread:{}", "Marker: some read of this job's full output was counted.")

REREADS: Final = f"{PREFIX}rereads"
"""Hash ``TOOL_TYPE|METHOD`` → reads of full outputs behind summaries of that kind (all reads)."""

REREAD_SUMMARIES: Final = f"{PREFIX}rereads:summaries"
"""Hash ``TOOL_TYPE|METHOD`` → summaries whose full output was read back at least once."""

REREADS_RECENT: Final = f"{PREFIX}rereads:recent"
"""ZSET of re-read job ids scored by their summary's finish time (s), trimmed: the share now."""

SUMMARIES: Final = f"{PREFIX}summaries"
"""Hash ``TOOL_TYPE|METHOD`` → summaries stored by workers (the share's denominator)."""

# --- written before the session hash and the job's progress; read and forgotten, never written ---

started = Key("started:{}", "Marker: a worker took the job (now ``job_state``).")
session_jobs = Key("session:{}:jobs", "Set of a session's job ids (now in ``session``).")
session_keys = Key("session:{}:keys", "Set of other keys a session owns (now in ``session``).")
session_payloads = Key("session:{}:payloads", "Set of a session's payloads (now in ``session``).")
gate_holds = Key("gate:{}:holds", "ZSET of a session's holds (now in ``session``).")
gate_jobs = Key("gate:{}:jobs", "Hash of a session's held jobs (now in ``session``).")
gate_expiries = Key("gate:expiries", "ZSET of every hold by expiry (now ``gate_due``).")
gate_finishing = Key("gate:finishing", "ZSET of expired holds a sweeper claimed.")

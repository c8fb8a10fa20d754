"""Re-reads as a quality signal: every read of a summarized output, counted against its job.

An agent that reads the full output behind a summary back is telling us the summary left out
something it needed. The one read operation (``client.outputs.read_output``, which ``Producer``,
``AsyncProducer``, the HTTP API, the MCP proxy and ``tersify output`` all run) ends with the
commands built here, in one round trip after the lines are read:

- every read adds one to ``tersify:rereads`` under the summary's ``TOOL_TYPE|METHOD``;
- the first counted read of a job (``SET NX`` on its marker) adds one to
  ``tersify:rereads:summaries`` too, and puts the job into ``tersify:rereads:recent`` scored by
  its summary's finish time, so the share of summaries re-read can be taken over any window;
- with ``TERSIFY_KEEP_READ_LINES`` the lines read back are queued for the session log, where a
  worker writes them beside the job's output (redacted as the log is) as ``kind: "reread"``.

Workers count the summaries they store under the same field in ``tersify:summaries``; the
worker's metrics collector exports all of them. A failure to count never fails the read.
"""

from __future__ import annotations

import json
import secrets
from datetime import datetime
from typing import Any, Final

from tersify.contract import utcnow
from tersify.settings import Settings
from tersify.store import keys, passthroughs
from tersify.store.commands import Command, command

UNKNOWN: Final = "unknown"
"""The label of a tool type or method that could not be read (an expired result)."""

RECENT_KEEP: Final = 50_000
"""Most re-read jobs kept in ``tersify:rereads:recent`` (as many as recent completions)."""

RECENT_SECONDS: Final = 3600
"""Re-read jobs whose summary finished this much before the newest one are trimmed."""

KEPT_CHARS: Final = 64 * 1024
"""Most characters of read-back lines kept per read (a read may return 10,000 lines)."""

# KEYS: reads, re-read summaries, the job's marker, recent re-read jobs.
# ARGV: field, marker TTL, the summary's finish time ('' when unknown), job id, keep seconds,
# keep count.
_COUNT = """
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if not redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[2]) then return 0 end
redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
if ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[4], ARGV[3], ARGV[4])
  redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[5]))
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -tonumber(ARGV[6]) - 1)
end
return 1
"""


def field(tool_type: str, method: str) -> str:
    """The hash field of a summary kind: ``TOOL_TYPE|METHOD``."""
    return f"{tool_type}|{method}"


def split_field(name: str) -> tuple[str, str]:
    """``(tool_type, method)`` of a hash field; unknown parts read as ``unknown``."""
    tool_type, _, method = name.partition("|")
    return tool_type or UNKNOWN, method or UNKNOWN


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def summary_kind(stored_type: object, result: object) -> tuple[str, str, float | None]:
    """The summary's tool type, method and finish time (epoch seconds) from what Redis holds.

    ``stored_type`` is the tool type the output link was staged with; ``result`` the raw
    result JSON (None once it expired: the method is then ``unknown``).
    """
    tool_type = _text(stored_type)
    method: str | None = None
    finished: float | None = None
    raw = _text(result)
    if raw is not None:
        try:
            parsed: Any = json.loads(raw)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            tool_type = tool_type or _text(parsed.get("tool_type"))
            method = _text(parsed.get("method"))
            finished = _epoch(parsed.get("finished_at"))
    return tool_type or UNKNOWN, method or UNKNOWN, finished


def _epoch(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def count(
    settings: Settings, job_id: str, kind: tuple[str, str, float | None]
) -> tuple[Command, ...]:
    """The commands that count one read of ``job_id``'s output (``kind``: ``summary_kind``)."""
    tool_type, method, finished = kind
    return (
        command(
            "eval",
            _COUNT,
            4,
            keys.REREADS,
            keys.REREAD_SUMMARIES,
            keys.reread_mark(job_id),
            keys.REREADS_RECENT,
            field(tool_type, method),
            settings.result_ttl_seconds,
            "" if finished is None else repr(finished),
            job_id,
            RECENT_SECONDS,
            RECENT_KEEP,
        ),
    )


def keep_lines(
    settings: Settings,
    job_id: str,
    session_id: str,
    found: Any,
    kind: tuple[str, str, float | None],
) -> tuple[Command, ...]:
    """The commands that queue the lines of one read (an ``OutputRange``) for the session log."""
    lines: list[list[Any]] = []
    room = KEPT_CHARS
    for line in found.lines:
        if len(line.text) > room:
            break
        lines.append([line.number, line.text])
        room -= len(line.text)
    record = {
        "reread": {
            "read_id": secrets.token_hex(8),
            "job_id": job_id,
            "session_id": session_id,
            "output_ref": found.ref,
            "tool_type": kind[0],
            "method": kind[1],
            "grep": found.grep,
            "total_lines": found.total_lines,
            "lines": lines,
            "cut": len(lines) < len(found.lines),
            "at": utcnow().isoformat(),
        }
    }
    entry = json.dumps(record, ensure_ascii=False).encode("utf-8", "surrogatepass")
    read_id = record["reread"]["read_id"]
    ttl, most = settings.payload_ttl_seconds, settings.session_log_pending_max_bytes
    # waits with the passthrough outputs: bounded in bytes, with a TTL, forgotten with its session
    return passthroughs.stage(session_id, f"reread-{read_id}", entry, ttl, most)

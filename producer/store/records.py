"""A submitted job's record: what ``get``, ``cancel``, status pages and the lease sweeper read.

One JSON string per job under ``keys.job_meta``, written once by the script that stores the
job (``SET … NX``, kept ``TERSIFY_RESULT_TTL_SECONDS``): the write is also the check that a job
id belongs to one session. Records stored before this layout are hashes of strings; ``READ``
answers either, and ``parse`` makes the same ``JobRecord`` of both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from tersify.contract import PendingSummary, SummaryHeader, ToolType
from tersify.store import keys
from tersify.store.commands import Command, command

READ: Final = """
local ok, value = pcall(redis.call, 'GET', KEYS[1])
if ok then return value end
return redis.call('HGETALL', KEYS[1])
"""
"""KEYS record → the record as stored: a JSON string, a hash's fields and values, or nil."""

OWNER: Final = """
local function record_owner(key)
  local ok, value = pcall(redis.call, 'GET', key)
  if not ok then return redis.call('HGET', key, 'session_id') end
  if not value then return nil end
  return cjson.decode(value).session_id
end
"""
"""Lua: the session a stored record names (a record of either form), or nil."""


@dataclass(frozen=True, slots=True)
class JobRecord:
    """What a job's record says about it."""

    session_id: str
    queue: str
    payload: str
    tool_type: str
    job: SummaryHeader

    @property
    def job_id(self) -> str:
        """The job's id."""
        return self.job.job_id


def encode(job: PendingSummary, digest: str, tool_type: ToolType) -> str:
    """The record of ``job``, whose output is stored under ``digest``."""
    return json.dumps(
        {
            "session_id": job.session_id,
            "tool_name": job.tool_name,
            "queue": job.queue.value,
            "payload": digest,
            "tool_type": tool_type.value,
            "job": job.header().model_dump(mode="json"),
            "chars": len(job.output),
            "queued_at": job.created_at.isoformat(),
            "deadline": job.deadline.isoformat(),
        },
        ensure_ascii=False,
    )


def read(job_id: str) -> Command:
    """The command that reads ``job_id``'s record (either form); ``parse`` its reply."""
    return command("eval", READ, 1, keys.job_meta(job_id))


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def fields(reply: Any) -> dict[str, Any] | None:
    """A ``READ`` reply as the record's fields (the job's header as an object or its JSON);
    None when there is no record or it is not one."""
    if reply is None or reply == [] or reply == {}:
        return None
    if isinstance(reply, bytes | str):
        try:
            found = json.loads(reply)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None
    if isinstance(reply, dict):
        return {_text(k): _text(v) for k, v in reply.items()}
    flat = [_text(part) for part in reply]
    return dict(zip(flat[::2], flat[1::2], strict=True))


def parse(reply: Any) -> JobRecord | None:
    """A ``READ`` reply as a ``JobRecord``; None when there is none or it cannot be read."""
    found = fields(reply)
    if found is None:
        return None
    try:
        raw = found["job"]
        header = (
            SummaryHeader.model_validate(raw)
            if isinstance(raw, dict)
            else SummaryHeader.model_validate_json(raw)
        )
        return JobRecord(
            session_id=str(found["session_id"]),
            queue=str(found["queue"]),
            payload=str(found["payload"]),
            tool_type=str(found["tool_type"]),
            job=header,
        )
    except (KeyError, ValueError, TypeError):
        return None

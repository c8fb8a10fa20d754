"""A session's latest runs in Redis: found in the job's first step, written in its last.

``keys.session_runs(session)`` is a list, newest first, of one entry per summarized output
that has a command, trimmed to ``TERSIFY_RERUN_WINDOW``: the window is the list. An entry is
``KEY\\nDIGEST\\nJSON``: the run key (``commands.run_key``), the payload digest of its output,
then the job, its ``output_ref``, its run number among the session's runs of that command, its
summary and the size of the last summary of that command written on its own.

Nothing here costs a round trip. The look-up is part of the script that takes the job
(``LOOKUP``: the newest entry with the job's run key, and the earlier output by its digest, in
Redis itself); the entry is pushed by the script that stores the result (``writes``), and
only when the result is the job's.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any, Final

from tersify.errors import InvalidJobError
from tersify.store import keys, payloads
from tersify.store.commands import Command, command

LOOKUP: Final = """
local head = ARGV[3] .. '\\n'
for _, entry in ipairs(redis.call('LRANGE', KEYS[runs], 0, tonumber(ARGV[4]) - 1)) do
  if string.sub(entry, 1, #head) == head then
    found[5] = entry
    local digest = string.match(entry, '^[^\\n]*\\n([^\\n]*)\\n')
    if digest then found[6] = redis.call('GET', ARGV[5] .. digest) or false end
    break
  end
end
"""
"""The take script's part that finds the earlier run: ``KEYS[runs]`` is the session's list,
ARGV 3–5 the run key, the window and the payload keys' prefix; ``found[5]`` is the entry and
``found[6]`` the earlier output's stored payload."""


@dataclass(frozen=True, slots=True)
class Run:
    """One summarized run of a command, as the session's list keeps it."""

    key: str
    digest: str
    job_id: str
    ref: str | None
    run: int
    summary: str
    standalone_chars: int

    def entry(self) -> str:
        """The list entry (see the module)."""
        record = {
            "job": self.job_id,
            "ref": self.ref,
            "run": self.run,
            "summary": self.summary,
            "standalone": self.standalone_chars,
        }
        return f"{self.key}\n{self.digest}\n{json.dumps(record, ensure_ascii=False)}"

    @classmethod
    def parse(cls, entry: object) -> Run | None:
        """An entry as the take script returned it; None when absent or not one of ours."""
        if not isinstance(entry, bytes | str):
            return None
        text = entry.decode("utf-8", "replace") if isinstance(entry, bytes) else entry
        key, _, rest = text.partition("\n")
        digest, _, body = rest.partition("\n")
        try:
            record: dict[str, Any] = json.loads(body)
            return cls(
                key=key,
                digest=digest,
                job_id=str(record["job"]),
                ref=record.get("ref") if isinstance(record.get("ref"), str) else None,
                run=int(record["run"]),
                summary=str(record["summary"]),
                standalone_chars=int(record["standalone"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class Earlier:
    """The earlier run of a job's command: its record and its whole output."""

    run: Run
    output: str


def earlier(entry: object, blob: object) -> Earlier | None:
    """The earlier run the take script found; None when there is none or its output expired."""
    run = Run.parse(entry)
    if run is None or not isinstance(blob, bytes):
        return None
    try:
        return Earlier(run, payloads.decode(blob))
    except (InvalidJobError, UnicodeDecodeError, zlib.error):
        return None  # a damaged payload: the run is summarized on its own


def writes(session_id: str, run: Run, window: int, ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that put ``run`` first in the session's list and trim it to ``window``."""
    name = keys.session_runs(session_id)
    return (
        command("lpush", name, run.entry()),
        command("ltrim", name, 0, window - 1),
        command("expire", name, ttl_seconds),
    )

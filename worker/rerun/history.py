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
from collections import deque
from dataclasses import dataclass
from typing import Any, Final, Protocol

from tersify.errors import InvalidJobError
from tersify.store import keys, payloads
from tersify.store.commands import Command, command

LOOKUP: Final = """
local head = ARGV[3] .. '\\n'
for _, entry in ipairs(redis.call('LRANGE', KEYS[runs], 0, tonumber(ARGV[4]) - 1)) do
  if string.sub(entry, 1, #head) == head then
    found[4] = entry
    local digest = string.match(entry, '^[^\\n]*\\n([^\\n]*)\\n')
    if digest then found[5] = redis.call('GET', ARGV[5] .. digest) or false end
    break
  end
end
"""
"""The take script's part that finds the earlier run: ``KEYS[runs]`` is the session's list,
ARGV 3–5 the run key, the window and the payload keys' prefix; ``found[4]`` is the entry and
``found[5]`` the earlier output's stored payload."""


class Done(Protocol):
    """What a finished run's record is made from: a ``SummaryResult`` has it all."""

    @property
    def job_id(self) -> str: ...
    @property
    def output_ref(self) -> str | None: ...
    @property
    def text(self) -> str: ...
    @property
    def rerun_of(self) -> str | None: ...


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
    def after(
        cls, last: Run | None, earlier: Earlier | None, *, key: str, digest: str, done: Done
    ) -> Run:
        """The record of the run ``done`` made: the run after ``last`` (the session's latest of
        its command, if any); when its summary says what changed since ``earlier``, the size
        of a summary on its own is carried from there."""
        standalone = len(done.text)
        if done.rerun_of is not None and earlier is not None:
            standalone = earlier.run.standalone_chars
        return cls(
            key=key,
            digest=digest,
            job_id=done.job_id,
            ref=done.output_ref,
            run=last.run + 1 if last is not None else 1,
            summary=done.text,
            standalone_chars=standalone,
        )

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


class SessionRuns:
    """One session's latest runs kept in memory, as the Redis list keeps them, for the tools
    that replay sessions offline (``tersify savings``, the re-run evaluation)."""

    def __init__(self, window: int) -> None:
        self._runs: deque[Earlier] = deque(maxlen=max(1, window))
        self._on = window > 0

    def find(self, key: str) -> tuple[Run | None, Earlier | None]:
        """The latest run of ``key`` within the window, and it with its output (both None
        when there is none)."""
        found = next((e for e in self._runs if e.run.key == key), None) if self._on else None
        return (found.run if found else None), found

    def add(self, run: Run, output: str) -> None:
        """Make ``run`` (whose output is ``output``) the session's latest."""
        if self._on:
            self._runs.appendleft(Earlier(run, output))


def writes(session_id: str, run: Run, window: int, ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that put ``run`` first in the session's list and trim it to ``window``."""
    name = keys.session_runs(session_id)
    return (
        command("lpush", name, run.entry()),
        command("ltrim", name, 0, window - 1),
        command("expire", name, ttl_seconds),
    )

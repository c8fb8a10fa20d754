"""The session log: one JSONL file per session holding every full tool output and every result,
and the full messages of every compaction.

Appends are single ``write`` calls on an ``O_APPEND`` descriptor under an exclusive ``flock``,
so several worker processes can append to one session's file. An output is written at most once
per job id: a Redis marker is set after the line is on disk, so a crash between the two can
repeat a line but never lose one; readers de-duplicate by ``(kind, job_id)``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from producer import keys
from producer.compaction import CompactionJob
from producer.contract import PendingSummary, SummaryResult
from worker.store.writebehind import WriteBehind

_KEPT = re.compile(r"[A-Za-z0-9_-]")
_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT
# An encoded name longer than this is cut and ends in "~" and a hash (names stay under 255 bytes)
_LONGEST_NAME = 160


def file_stem(session_id: str) -> str:
    """The session's file name without ``.jsonl``: one encoding for every id, so never shared.

    Letters, digits, ``_`` and ``-`` stay (a leading ``-`` is escaped); every other byte is
    ``%XX``. ``%`` is never kept, so two ids never encode alike; ``~`` (never produced by the
    encoding) marks a long name cut to ``_LONGEST_NAME`` and ended by a 128-bit hash of the id.
    """
    parts = []
    for index, char in enumerate(session_id):
        if _KEPT.fullmatch(char) and not (index == 0 and char == "-"):
            parts.append(char)
        else:
            parts.extend(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    stem = "".join(parts)
    if len(stem) > _LONGEST_NAME:
        digest = hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        stem = f"{stem[: _LONGEST_NAME - 33]}~{digest}"
    return stem


def session_file(directory: Path, session_id: str) -> Path:
    """The log file of a session, inside ``directory`` whatever the id (see ``file_stem``)."""
    return directory / f"{file_stem(session_id)}.jsonl"


class SessionLog:
    """Append-only per-session JSONL files under one directory."""

    def __init__(
        self,
        directory: Path,
        client: redis.Redis,
        *,
        marker_ttl: int,
        writes: WriteBehind | None = None,
    ) -> None:
        self.directory = directory
        self._redis = client
        self._marker_ttl = marker_ttl
        self._writes = writes

    def append_output(self, job: PendingSummary, *, logged: bool | None = None) -> bool:
        """Write the job's full output once; False when it was already logged.

        ``logged`` is whether the job's marker exists, when the caller read it already (the
        worker reads it with the job's payload, in one round trip). The marker is set after the
        write, behind the job when a ``WriteBehind`` is given: a crash before it lands means a
        redelivered job writes its output twice, never zero times.
        """
        marker = keys.logged(job.job_id)
        if logged is None:
            logged = bool(self._redis.exists(marker))
        if logged:
            return False
        entry = {"kind": "output", **job.model_dump(mode="json")}
        self._append(job.session_id, entry)
        if self._writes is None:
            self._redis.set(marker, b"1", ex=self._marker_ttl)
        else:
            ttl = self._marker_ttl
            self._writes.submit(lambda pipe: pipe.set(marker, b"1", ex=ttl))
        return True

    def append_compaction(self, job: CompactionJob) -> bool:
        """Write a compaction job's full messages once; False when they were already logged."""
        marker = keys.logged(job.job_id)
        if self._redis.exists(marker):
            return False
        self._append(job.session_id, {"kind": "compaction", **job.model_dump(mode="json")})
        self._redis.set(marker, b"1", ex=self._marker_ttl)
        return True

    def append_result(self, result: SummaryResult) -> None:
        """Write a job's result beside its output."""
        self._append(result.session_id, {"kind": "result", **result.model_dump(mode="json")})

    def _append(self, session_id: str, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        path = session_file(self.directory, session_id)
        try:
            fd = os.open(path, _APPEND, 0o640)
        except FileNotFoundError:  # the first write, or the directory was removed: make it
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, _APPEND, 0o640)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            view = memoryview(line)
            while view:  # a short write on a full disk must not leave half a line unnoticed
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # closing releases the lock


def read_entries(path: Path) -> Iterator[dict[str, Any]]:
    """Yield a log file's entries, de-duplicated by ``(kind, job_id)``, skipping broken lines."""
    seen: set[tuple[str, str]] = set()
    with path.open("rb") as handle:
        for raw in handle:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            ident = (str(entry.get("kind")), str(entry.get("job_id")))
            if ident in seen:
                continue
            seen.add(ident)
            yield entry

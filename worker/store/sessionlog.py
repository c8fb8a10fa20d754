"""The session log: one JSONL file per session holding every full tool output and every result,
the full messages of every compaction and, when kept, the lines agents read back.

A file that would grow past ``max_bytes`` is renamed to ``NAME~MILLISECONDS-NNN.jsonl`` and a
new one started (the names: ``lognames``); files untouched for ``retention_days`` are deleted by
``prune``; ``forget_files`` deletes a session's files at once.

Appends are single ``write`` calls on an ``O_APPEND`` descriptor under an exclusive ``flock``,
so several worker processes can append to one session's file. A job's output is written by the
worker that runs it, and again by whoever runs it again (a redelivery, the sweeper): a line may
repeat, never go missing, and readers de-duplicate by ``(kind, job_id)``. A compaction's
messages are written once: a Redis marker is set after the line is on disk.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import redis

from tersify.chat.compaction import CompactionJob
from tersify.contract import PendingSummary, SummaryResult
from tersify.store import keys
from tersify.worker.redact import Redactor, Scope
from tersify.worker.store.lognames import (
    file_stem,
    forget_files,
    rotated_name,
    session_file,
    session_files,
)

__all__ = [
    "SessionLog",
    "file_stem",
    "forget_files",
    "read_entries",
    "session_file",
    "session_files",
]

_APPEND = os.O_WRONLY | os.O_APPEND | os.O_CREAT


class SessionLog:
    """Append-only per-session JSONL files under one directory."""

    def __init__(
        self,
        directory: Path,
        client: redis.Redis,
        *,
        marker_ttl: int,
        redact: frozenset[Scope] = frozenset(),
        max_bytes: int = 64 * 1024 * 1024,
        retention_days: float = 0.0,
    ) -> None:
        self.directory = directory
        self._redis = client
        self._marker_ttl = marker_ttl
        self._redact = redact
        self._max_bytes = max_bytes
        self._retention_seconds = retention_days * 86_400

    def append_output(self, job: PendingSummary, *, redactor: Redactor | None = None) -> None:
        """Write the job's full output.

        Under ``TERSIFY_REDACT=...,log`` its secrets are written as the job's placeholders
        (``redactor``, else a fresh one). A job is written once by the worker that runs it; one
        that runs again (redelivered after its worker died, or finished by the sweeper after
        its lease ran out) is written again, never zero times, and readers de-duplicate by
        ``(kind, job_id)``.
        """
        job = (redactor or Redactor(self._redact)).job(job, Scope.LOG)
        entry = {"kind": "output", **job.model_dump(mode="json")}
        self._append(job.session_id, entry)

    def append_compaction(self, job: CompactionJob, redactor: Redactor | None = None) -> bool:
        """Write a compaction job's full messages once; False when they were already logged.

        Under ``Scope.LOG`` every string in the messages is redacted, as an output is.
        """
        marker = keys.logged(job.job_id)
        if self._redis.exists(marker):
            return False
        entry: Any = {"kind": "compaction", **job.model_dump(mode="json")}
        if Scope.LOG in self._redact:
            entry = _redacted(entry, redactor or Redactor(self._redact))
        self._append(job.session_id, entry)
        self._redis.set(marker, b"1", ex=self._marker_ttl)
        return True

    def append_result(self, result: SummaryResult, redactor: Redactor | None = None) -> None:
        """Write a job's result beside its output (redacted as ``append_output`` is)."""
        if Scope.LOG in self._redact:
            result = (redactor or Redactor(self._redact)).result(result, Scope.LOG)
        self._append(result.session_id, {"kind": "result", **result.model_dump(mode="json")})

    def append_reread(self, entry: dict[str, Any], redactor: Redactor | None = None) -> None:
        """Write the lines one read took back from a job's full output, beside that job.

        ``entry`` is what ``tersify.client.rereads.keep_lines`` queued (``session_id``,
        ``job_id``, ``read_id``, ``lines`` as ``[number, text]`` pairs, ...); under
        ``Scope.LOG`` its text is redacted as an output is.
        """
        if Scope.LOG in self._redact:
            entry = _redacted(entry, redactor or Redactor(self._redact))
        self._append(str(entry["session_id"]), {"kind": "reread", **entry})

    def prune(self, now: float | None = None) -> int:
        """Delete the log files untouched for ``retention_days`` (0: keep all); how many went."""
        if self._retention_seconds <= 0 or not self.directory.is_dir():
            return 0
        oldest = (time.time() if now is None else now) - self._retention_seconds
        removed = 0
        for path in self.directory.glob("*.jsonl"):  # one pass over the directory: bounded
            try:
                if path.stat().st_mtime < oldest:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue  # another worker pruned it first
        return removed

    def _append(self, session_id: str, entry: dict[str, Any]) -> None:
        line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "surrogatepass")
        path = session_file(self.directory, session_id)
        fd = self._open(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            if os.fstat(fd).st_size and os.fstat(fd).st_size + len(line) > self._max_bytes:
                fd = self._rotate(path, fd)
            view = memoryview(line)
            while view:  # a short write on a full disk must not leave half a line unnoticed
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # closing releases the lock

    @staticmethod
    def _open(path: Path) -> int:
        try:
            return os.open(path, _APPEND, 0o640)
        except FileNotFoundError:  # the first write, or the directory was removed: make it
            path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(path, _APPEND, 0o640)

    def _rotate(self, path: Path, fd: int) -> int:
        """Rename the full file (still locked) aside; the new file, locked, in its place."""
        if os.path.samestat(os.fstat(fd), path.stat()):  # nobody rotated it meanwhile
            path.rename(rotated_name(path))
        os.close(fd)
        fd = self._open(path)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd


def read_entries(path: Path) -> Iterator[dict[str, Any]]:
    """Yield a log file's entries, de-duplicated by ``(kind, job_id)`` (and ``read_id`` for the
    many reads of one job), skipping broken lines."""
    seen: set[tuple[str, str, str]] = set()
    with path.open("rb") as handle:
        for raw in handle:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            ident = (str(entry.get("kind")), str(entry.get("job_id")), str(entry.get("read_id")))
            if ident in seen:
                continue
            seen.add(ident)
            yield entry


def _redacted(value: Any, redactor: Redactor) -> Any:
    """``value`` (JSON data) with every string in it redacted."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redacted(item, redactor) for item in value]
    if isinstance(value, dict):
        return {key: _redacted(item, redactor) for key, item in value.items()}
    return value

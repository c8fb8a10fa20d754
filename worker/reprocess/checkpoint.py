"""The output JSONL and its checkpoint: what a rerun skips after a Ctrl-C or a kill.

Each new result is one line of the output (with the old job id and the old result); the
checkpoint beside it (``OUTPUT.checkpoint``) lists the old job ids that are done. Both are
fsync'd every ``sync_every`` results, so a kill loses at most the jobs in flight and the unsynced
tail. On resume the output is the authority: a truncated last line is cut off and every old job
id in it counts as done even when its checkpoint line was lost, so no job appears twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

from tersify.contract import SummaryResult
from tersify.worker.reprocess.reader import ArchivedJob


def checkpoint_path(output: Path) -> Path:
    """The checkpoint file that belongs to ``output``."""
    return output.with_name(output.name + ".checkpoint")


def read_output(output: Path) -> list[dict[str, Any]]:
    """The output file's complete lines as objects (a torn last line is left out)."""
    if not output.exists():
        return []
    lines: list[dict[str, Any]] = []
    for raw in output.read_bytes().split(b"\n"):
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("old_job_id"), str):
            lines.append(entry)
    return lines


def _cut_torn_tail(path: Path) -> None:
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


def _sync(handle: IO[str]) -> None:
    handle.flush()
    os.fsync(handle.fileno())


class Checkpoint:
    """Appends new results to the output and their old job ids to the checkpoint."""

    def __init__(self, output: Path, *, sync_every: int = 16) -> None:
        self.output = output
        self.path = checkpoint_path(output)
        self._sync_every = sync_every
        self._unsynced = 0
        self.done: set[str] = set()
        if self.path.exists():
            for raw in self.path.read_bytes().split(b"\n"):
                try:
                    self.done.add(str(json.loads(raw)["old_job_id"]))
                except (ValueError, KeyError, TypeError):
                    continue  # the torn last line of a killed run
        for path in (output, self.path):
            if path.exists():
                _cut_torn_tail(path)
        recovered = {line["old_job_id"] for line in read_output(output)} - self.done
        output.parent.mkdir(parents=True, exist_ok=True)
        self._out = output.open("a", encoding="utf-8")
        self._marks = self.path.open("a", encoding="utf-8")
        for job_id in sorted(recovered):
            self._mark(job_id)
        self.done |= recovered

    def record(self, item: ArchivedJob, result: SummaryResult) -> None:
        """Write a finished job's new result and mark its old job done."""
        old = item.old.model_dump(mode="json", exclude={"text"}) if item.old else None
        line = {
            "old_job_id": item.job.job_id,
            "source": str(item.source),
            "old": old,
            "new": result.model_dump(mode="json"),
        }
        self._out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._out.flush()
        self._mark(item.job.job_id)
        self.done.add(item.job.job_id)
        self._unsynced += 1
        if self._unsynced >= self._sync_every:
            self.sync()

    def _mark(self, job_id: str) -> None:
        self._marks.write(json.dumps({"old_job_id": job_id}) + "\n")

    def sync(self) -> None:
        """Make everything written so far durable: the output first, then the checkpoint."""
        _sync(self._out)
        _sync(self._marks)
        self._unsynced = 0

    def close(self) -> None:
        """Sync and close both files."""
        self.sync()
        self._out.close()
        self._marks.close()

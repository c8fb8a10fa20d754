"""Reading archived session logs into jobs to redo, counting every line that cannot be used."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tersify.contract import PendingSummary, SummaryResult
from tersify.worker.store.logfiles import Skip, log_files


@dataclass(frozen=True)
class ArchivedJob:
    """One logged tool output and, when it was logged too, the result it got then."""

    job: PendingSummary
    old: SummaryResult | None
    source: Path


@dataclass
class LogRead:
    """Everything read from a set of logs: the jobs, in log order, and the skipped lines."""

    jobs: list[ArchivedJob] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    files: int = 0
    lines: int = 0


def read_logs(paths: Iterable[Path]) -> LogRead:
    """Read logs; a broken, truncated or invalid line becomes a counted ``Skip``, never an error."""
    read = LogRead()
    for path in log_files(paths, (".jsonl",), recursive=False):
        read.files += 1
        _read_file(path, read)
    return read


def _read_file(path: Path, read: LogRead) -> None:
    outputs: dict[str, PendingSummary] = {}
    results: dict[str, SummaryResult] = {}
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            read.lines += 1
            if not raw.strip():
                continue
            reason = _take(raw, outputs, results)
            if reason is not None:
                read.skips.append(Skip(path, number, reason))
    for job_id, job in outputs.items():
        read.jobs.append(ArchivedJob(job, results.get(job_id), path))


def _take(
    raw: bytes, outputs: dict[str, PendingSummary], results: dict[str, SummaryResult]
) -> str | None:
    try:
        entry = json.loads(raw)
    except ValueError:
        return "not JSON (corrupt or truncated)"
    if not isinstance(entry, dict):
        return "not a JSON object"
    kind = entry.pop("kind", None)
    try:
        if kind == "output":
            job = PendingSummary.model_validate(entry)
            outputs.setdefault(job.job_id, job)  # a crash can repeat a line; the first one wins
        elif kind == "result":
            result = SummaryResult.model_validate(entry)
            results.setdefault(result.job_id, result)
        elif kind not in ("compaction", "reread"):  # messages, lines read back: not outputs
            return f"unknown kind {kind!r}"
    except ValidationError as exc:
        return f"invalid {kind}: {exc.error_count()} field error(s)"
    return None

"""Reading results back: a job's stored result, a late one, or waiting until one is stored.

Each function is an operation of ``client.core``: written once, run by both producers.
"""

from __future__ import annotations

from tersify.chat.compaction import CompactionResult
from tersify.client.core import Operation, Round, WaitHead
from tersify.contract import SummaryResult
from tersify.errors import JobNotFoundError, ResultTimeoutError
from tersify.store import keys
from tersify.store.commands import command

_READ_FAILED = "could not read the result"


def parse_result(raw: bytes | str, *, late: bool = False) -> SummaryResult:
    """Parse a stored result (a late one is flagged as such)."""
    result = SummaryResult.model_validate_json(raw)
    return result.model_copy(update={"late": True}) if late else result


def get(job_id: str) -> Operation[SummaryResult | None]:
    """The stored result, or None while the job runs; ``JobNotFoundError`` if unknown."""
    reads = (command("lindex", keys.result(job_id), 0), command("exists", keys.job_meta(job_id)))
    raw, known = yield Round(reads, _READ_FAILED)
    if raw is not None:
        return parse_result(raw)
    if not known:
        raise JobNotFoundError(f"no job {job_id!r} (never submitted, or its result expired)")
    return None


def get_late(job_id: str) -> Operation[SummaryResult | None]:
    """A result that arrived after the job had been finished by the sweeper, if any."""
    (raw,) = yield Round((command("lindex", keys.late_result(job_id), 0),), _READ_FAILED)
    return parse_result(raw, late=True) if raw is not None else None


def wait(job_id: str, timeout: float) -> Operation[SummaryResult]:
    """The job's result once it is stored; ``ResultTimeoutError`` after ``timeout`` seconds."""
    return parse_result((yield from _head(keys.result(job_id), job_id, timeout)))


def wait_compaction(job_id: str, timeout: float) -> Operation[CompactionResult]:
    """A compaction's result once it is stored; ``ResultTimeoutError`` after ``timeout``."""
    raw = yield from _head(keys.compaction_result(job_id), job_id, timeout)
    return CompactionResult.model_validate_json(raw)


def _head(key: str, job_id: str, timeout: float) -> Operation[bytes]:
    raw = yield WaitHead(key, timeout)
    if raw is None:
        raise ResultTimeoutError(f"no result for job {job_id!r} within {timeout:g}s")
    return raw  # type: ignore[no-any-return]

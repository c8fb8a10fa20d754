"""The job contract between producers and workers: versioned pydantic models, JSON only.

- ``kinds``    tool types, methods, queues, fallback and dead-letter reasons
- ``jobs``     ids, per-job options and ``PendingSummary``, what a producer enqueues (its
               ``SummaryHeader``: the job without its output, as the broker carries it)
- ``results``  ``SummaryResult``, what a job produced

The ground floor: imports nothing of tersify.
"""

from tersify.contract.jobs import (
    JOB_ID_PATTERN,
    SCHEMA_VERSION,
    Job,
    JobId,
    JobOptions,
    LineRange,
    OutputCut,
    PendingSummary,
    SessionId,
    SummaryHeader,
    Versioned,
    new_job_id,
    utcnow,
)
from tersify.contract.kinds import DeadLetterReason, FallbackReason, Method, Queue, ToolType
from tersify.contract.results import SummaryResult, WindowRead

__all__ = [
    "JOB_ID_PATTERN",
    "SCHEMA_VERSION",
    "DeadLetterReason",
    "FallbackReason",
    "Job",
    "JobId",
    "JobOptions",
    "LineRange",
    "Method",
    "OutputCut",
    "PendingSummary",
    "Queue",
    "SessionId",
    "SummaryHeader",
    "SummaryResult",
    "ToolType",
    "Versioned",
    "WindowRead",
    "new_job_id",
    "utcnow",
]

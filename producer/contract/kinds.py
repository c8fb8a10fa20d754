"""The kinds a job and its result are described by: tool type, method, queue, reasons."""

from __future__ import annotations

from enum import StrEnum


class ToolType(StrEnum):
    """What kind of tool produced an output; chooses the prompt, the ratio and the extractor."""

    FILE_CONTENT = "FileContent"
    SEARCH_RESULTS = "SearchResults"
    DIRECTORY_LISTING = "DirectoryListing"
    COMMAND_OUTPUT = "CommandOutput"
    STRUCTURED_DATA = "StructuredData"
    WEB_CONTENT = "WebContent"


class Method(StrEnum):
    """How a result's text was made."""

    LLM = "llm"
    EXTRACTIVE = "extractive"
    FALLBACK = "fallback"
    PASSTHROUGH = "passthrough"
    CACHE = "cache"


class Queue(StrEnum):
    """Celery queues: interactive jobs gate a session, batch jobs never do."""

    INTERACTIVE = "interactive"
    BATCH = "batch"


class FallbackReason(StrEnum):
    """Why a job ended with the fallback truncation instead of a model summary."""

    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    CLIENT_ERROR = "client_error"
    CONNECTION_ERROR = "connection_error"
    MALFORMED = "malformed"
    EMPTY = "empty"
    OVERSIZED = "oversized"
    DEADLINE = "deadline"
    LEASE_EXPIRED = "lease_expired"
    QUEUED_TOO_LONG = "queued_too_long"  # no worker took the job before its unrenewed hold ran out
    UNGROUNDED = "ungrounded"
    CIRCUIT_OPEN = "circuit_open"
    INTERNAL_ERROR = "internal_error"
    CANCELLED = "cancelled"
    CONTEXT_EXCEEDED = "context_exceeded"  # the request is over the model's context window
    FORMAT_REFUSED = "format_refused"  # the server takes no response format the answer fits


class DeadLetterReason(StrEnum):
    """Why a worker refused a queue entry: the dead-letter record's ``reason`` and metric label."""

    OVERSIZED = "oversized"  # the raw entry is over TERSIFY_MAX_QUEUE_ENTRY_BYTES (unparsed)
    NOT_JSON = "not_json"  # the raw entry is not JSON text
    BAD_ENVELOPE = "bad_envelope"  # not a complete kombu message (a field missing, null, mistyped)
    BAD_BODY = "bad_body"  # the body is not Celery's [args, kwargs, embed], or links tasks
    UNDECODABLE_BODY = "undecodable_body"  # Celery could not decode the body
    UNKNOWN_TASK = "unknown_task"  # no worker task has the message's name
    REJECTED = "rejected"  # Celery refused the message as invalid
    DELIVERY_FAILED = "delivery_failed"  # anything else raised between the queue and the task
    BAD_ARGUMENTS = "bad_arguments"  # the task was called with the wrong arguments
    INVALID_JOB = "invalid_job"  # the job message breaks the contract (schema, fields)
    PAYLOAD_MISSING = "payload_missing"  # the job's stored output expired before a worker took it
    TASK_FAILED = "task_failed"  # the task raised past its own handling (a bug, Redis lost)

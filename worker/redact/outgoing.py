"""The one way out of a result: redacted as ``TERSIFY_REDACT`` says, whatever path made it.

A result is made by a worker (a summary, a fallback, a cached summary), by a producer (a
passthrough, an excerpt passed through, a cancelled job's fallback) or by the sweeper; it
leaves the host through a worker storing it, the HTTP API answering, the gateway forwarding and
keeping its replacement, the MCP proxy answering, and the webhook sender posting. Every one of
those exits calls ``leaving`` and none builds its own redaction, so a result made on a path
that never met a redactor (the producer has none: its base install lacks the rules) is still
redacted on its way out. Redacting an already redacted result changes nothing.
"""

from __future__ import annotations

from tersify.contract import SummaryResult
from tersify.settings import Scope
from tersify.worker.redact.redactor import Redactor


def leaving(result: SummaryResult, redactor: Redactor) -> SummaryResult:
    """``result`` as it may leave the host: its text redacted under ``result`` redaction, its
    failure detail under any (see ``Redactor.result``)."""
    return redactor.result(result, Scope.RESULT)


def leaving_with(result: SummaryResult, scopes: frozenset[Scope]) -> SummaryResult:
    """``leaving`` with a fresh redactor for the ``TERSIFY_REDACT`` scopes."""
    return leaving(result, Redactor(scopes))

"""Redaction: secrets in a text found and replaced by typed placeholders before it leaves the host.

The bottom layer: imports nothing of ``worker``, so the session log, the model requests and the
results can all use it. ``outgoing`` is the one way out of every result.
"""

from tersify.settings import Scope
from tersify.worker.redact.outgoing import leaving, leaving_with
from tersify.worker.redact.redactor import Redactor, find_secrets
from tersify.worker.redact.rules import KINDS

__all__ = ["KINDS", "Redactor", "Scope", "find_secrets", "leaving", "leaving_with"]

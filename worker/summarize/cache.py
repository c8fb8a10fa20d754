"""Reuse model summaries of identical outputs: agents re-run the same commands constantly.

A summary is reused when the output (its content hash), what the job says about it (tool name,
command, query, relevant lines), the prompt version and the model are all the same; the reused
result says ``method="cache"``. Only model answers are cached: the local methods are cheaper to
run again than to look up.

The key is computed from the broker message alone, before the output is read, so the worker
reads a cached answer in the same round trip as the job's payload (``worker.jobs.summary``). The
answer is written behind the job (``WriteBehind``): it becomes reusable within about 20 ms of
its result, and a write lost to a crash costs one model call later, nothing more.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tersify.contract import Method
from tersify.store import keys
from tersify.worker.store.writebehind import WriteBehind
from tersify.worker.summarize.summarizer import Outcome

# Bump when a prompt changes in a way that should not reuse older answers.
PROMPT_VERSION = "4"

# The message header fields that shape the model's request besides the output itself (the tool
# type follows from the tool name, the command and the output).
KEY_FIELDS = ("tool_name", "command", "query", "relevant_lines", "options")


def cache_key(digest: str, header: Mapping[str, Any], model: str) -> str:
    """The cache key of one output as one job describes it, for one prompt version and model."""
    described = [header.get(name) for name in KEY_FIELDS]
    parts = json.dumps([digest, described, PROMPT_VERSION, model], sort_keys=True, default=str)
    return keys.summary_cache(hashlib.sha256(parts.encode()).hexdigest())


class ResultCache:
    """Model summaries by content, in Redis with a TTL (0 turns the cache off)."""

    def __init__(self, ttl_seconds: int, writes: WriteBehind) -> None:
        self._ttl = ttl_seconds
        self._writes = writes

    @property
    def enabled(self) -> bool:
        """Whether answers are cached at all."""
        return self._ttl > 0

    @staticmethod
    def parse(raw: object) -> Outcome | None:
        """A stored entry as read from Redis, as a ``cache`` hit; None if absent or unreadable."""
        if not isinstance(raw, bytes | str):
            return None
        try:
            stored = json.loads(raw)
            return Outcome(
                text=str(stored["text"]),
                method=Method.CACHE,
                provider=stored.get("provider"),
                model=stored.get("model"),
            )
        except (ValueError, KeyError, TypeError):
            return None  # a foreign or damaged entry: ask the model again

    def put(self, key: str, outcome: Outcome) -> None:
        """Remember a model's answer, written behind the job."""
        if not self.enabled or outcome.method is not Method.LLM:
            return
        record = json.dumps(
            {"text": outcome.text, "provider": outcome.provider, "model": outcome.model}
        )
        ttl = self._ttl
        self._writes.submit(lambda pipe: pipe.set(key, record, ex=ttl))

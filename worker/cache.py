"""Reuse model summaries of identical outputs: agents re-run the same commands constantly.

A summary is reused when the output (its content hash), the tool type, the query, the prompt
version and the model are all the same; the reused result says ``method="cache"``. Only model
answers are cached: the local methods are cheaper to run again than to look up.
"""

from __future__ import annotations

import hashlib
import json

import redis
import structlog

from producer import keys
from producer.contract import Method, ToolType
from worker.summarize import Outcome

log = structlog.get_logger("tersify.cache")

# Bump when a prompt changes in a way that should not reuse older answers.
PROMPT_VERSION = "1"


def cache_key(digest: str, tool_type: ToolType, query: str | None, model: str) -> str:
    """The cache key of one (output, type, query, prompt version, model) combination."""
    parts = json.dumps([digest, tool_type.value, query or "", PROMPT_VERSION, model])
    return keys.summary_cache(hashlib.sha256(parts.encode()).hexdigest())


class ResultCache:
    """Model summaries by content, in Redis with a TTL (0 turns the cache off)."""

    def __init__(self, client: redis.Redis, ttl_seconds: int) -> None:
        self._redis = client
        self._ttl = ttl_seconds

    def get(self, key: str) -> Outcome | None:
        """The cached outcome as a ``cache`` hit, or None."""
        if self._ttl <= 0:
            return None
        try:
            raw = self._redis.get(key)
        except redis.RedisError:
            return None
        if not isinstance(raw, bytes):
            return None
        stored = json.loads(raw)
        return Outcome(
            text=stored["text"],
            method=Method.CACHE,
            provider=stored.get("provider"),
            model=stored.get("model"),
        )

    def put(self, key: str, outcome: Outcome) -> None:
        """Remember a model's answer."""
        if self._ttl <= 0 or outcome.method is not Method.LLM:
            return
        record = {"text": outcome.text, "provider": outcome.provider, "model": outcome.model}
        try:
            self._redis.set(key, json.dumps(record), ex=self._ttl)
        except redis.RedisError as exc:
            log.warning("cache_write_failed", error=type(exc).__name__)

"""Replacements kept in Redis by session and content, and the gateway's counts.

A tool result's replacement is stored under the hash of its session and its exact text, so the
same result gets the same replacement on every later turn and the conversation's prefix stays
byte-identical (the provider's prompt cache keeps hitting). Each use renews it, and renews the
link and the stored output its ``tersify output`` command reads; when those expired, the full
text — which the agent sends again every turn — is stored anew under the same ref.

One job makes each replacement: the first request to need it claims the content key with its
job id (``SET NX``); a request on another gateway process that needs it meanwhile waits for
that job instead of submitting its own.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import redis.asyncio

from tersify.client.outputs import stage_output
from tersify.errors import RedisUnavailableError
from tersify.settings import Settings
from tersify.store import keys, payloads, sessions
from tersify.store.commands import Command, command, load

# The most sessions ``tersify status`` can list; older ones drop off the index (not their counts).
SESSIONS_KEPT: Final = 1000
COUNTS: Final = (
    "requests", "rewritten", "reused", "fallbacks", "reruns", "tokens_before", "tokens_after"
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Rewrite:
    """A stored replacement: its text, the full output it names (ref and payload digest), and
    the job that summarized it (so reads of a link stored again are still counted against it)."""

    text: str
    ref: str | None
    digest: str | None
    job_id: str = ""
    tool_type: str = ""

    def fields(self, session_id: str) -> dict[str, str]:
        """The hash fields it is stored as (``session_id`` lets ``forget`` find it)."""
        return {
            "session_id": session_id,
            "text": self.text,
            "ref": self.ref or "",
            "digest": self.digest or "",
            "job_id": self.job_id,
            "tool_type": self.tool_type,
        }


_FIELDS = ("text", "ref", "digest", "job_id", "tool_type")


@dataclass(frozen=True, slots=True)
class Counts:
    """What one request did, added to its session's counts and the totals."""

    rewritten: int = 0
    reused: int = 0
    fallbacks: int = 0
    reruns: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    saved_usd: float = 0.0


def content_key(session_id: str, text: str) -> str:
    """The key of a tool result: its session and its exact text."""
    raw = f"{session_id}\0{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


def digest_of(text: str) -> str:
    """The payload digest the producer stores this output under."""
    clean, _ = payloads.clean_output(text)
    return hashlib.sha256(clean.encode("utf-8")).hexdigest()


class RewriteStore:
    """The gateway's Redis state (see the module); a Redis error is ``RedisUnavailableError``."""

    def __init__(self, client: redis.asyncio.Redis, settings: Settings) -> None:
        self._redis = client
        self._settings = settings

    async def _round(self, commands: Iterable[Command], failure: str) -> list[Any]:
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                return list(await load(pipe, commands).execute())
        except redis.RedisError as exc:
            raise RedisUnavailableError(f"{failure}: {type(exc).__name__}") from None

    async def lookup(self, content_keys: list[str]) -> dict[str, Rewrite]:
        """The stored replacements among ``content_keys``: one round trip."""
        reads = [command("hmget", keys.gateway_rewrite(k), list(_FIELDS)) for k in content_keys]
        replies = await self._round(reads, "could not read replacements")
        found: dict[str, Rewrite] = {}
        for key, (text, ref, digest, job, tool) in zip(content_keys, replies, strict=True):
            if text is not None:
                link = (_str(ref) or None, _str(digest) or None)
                found[key] = Rewrite(_str(text), *link, _str(job), _str(tool))
        return found

    async def put(self, content_key: str, session_id: str, rewrite: Rewrite) -> None:
        """Keep a replacement for later turns."""
        key = keys.gateway_rewrite(content_key)
        ttl = self._settings.gateway_rewrite_ttl_seconds
        writes = (
            command("hset", key, mapping=rewrite.fields(session_id)),
            command("expire", key, ttl),
            *sessions.index_keys(session_id, (key,), ttl),  # forget finds it by the index
        )
        await self._round(writes, "could not store the replacement")

    async def claim(self, content_key: str, job_id: str, seconds: float) -> str:
        """The job that makes this replacement: ``job_id`` if it is the first, else the other's."""
        key = keys.gateway_claim(content_key)
        ttl = max(1, int(seconds) + 1)
        replies = await self._round(
            (command("set", key, job_id, nx=True, ex=ttl), command("get", key)),
            "could not claim the tool result",
        )
        return _str(replies[1]) or job_id

    async def renew(self, session_id: str, used: dict[str, tuple[Rewrite, str]]) -> None:
        """Renew used replacements, their links and outputs; store again the outputs that expired.

        ``used`` maps a content key to its replacement and the full text it stands for.
        """
        ttl, payload_ttl = (
            self._settings.gateway_rewrite_ttl_seconds,
            self._settings.payload_ttl_seconds,
        )
        renewals: list[Command] = []
        for key, (rewrite, _) in used.items():
            renewals.append(command("expire", keys.gateway_rewrite(key), ttl))
            renewals.append(command("expire", keys.output(rewrite.ref or "-"), payload_ttl))
            renewals.append(command("expire", keys.payload(rewrite.digest or "-"), payload_ttl))
        replies = await self._round(renewals, "could not renew replacements")
        restores: list[Command] = []
        for n, (rewrite, full) in enumerate(used.values()):
            link, stored = replies[3 * n + 1], replies[3 * n + 2]
            if rewrite.ref is None or (link and stored):
                continue
            clean, _ = payloads.clean_output(full)
            digest, blob = payloads.encode(clean, session_id)
            restores.append(payloads.stage(session_id, digest, blob, payload_ttl))
            link = stage_output(
                rewrite.ref,
                session_id,
                digest,
                payload_ttl,
                job_id=rewrite.job_id or None,
                tool_type=rewrite.tool_type or None,
            )
            restores.append(link)
            owned = (keys.output(rewrite.ref),)
            restores += sessions.index(session_id, ttl, owned=owned, digests=(digest,))
        if restores:
            await self._round(restores, "could not store outputs again")

    async def count(self, session_id: str, counts: Counts) -> None:
        """Add one request's counts to its session's and to the totals."""
        session = keys.gateway_session(session_id)
        values = {
            "requests": 1,
            "rewritten": counts.rewritten,
            "reused": counts.reused,
            "fallbacks": counts.fallbacks,
            "reruns": counts.reruns,
            "tokens_before": counts.tokens_before,
            "tokens_after": counts.tokens_after,
        }
        writes: list[Command] = []
        for key in (session, keys.GATEWAY_TOTALS):
            writes += [command("hincrby", key, name, value) for name, value in values.items()]
            writes.append(command("hincrbyfloat", key, "saved_usd", counts.saved_usd))
        writes += [
            command("expire", session, self._settings.gateway_rewrite_ttl_seconds),
            command("zadd", keys.GATEWAY_SESSIONS, {session_id: time.time()}),
            command("zremrangebyrank", keys.GATEWAY_SESSIONS, 0, -SESSIONS_KEPT - 1),
        ]
        await self._round(writes, "could not count the request")


def _str(value: object) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)

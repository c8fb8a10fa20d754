"""What a session owns, indexed as it is written, and the tombstone forgetting leaves.

Every writer of a session's data names it in the session's index: its job ids in
``keys.session_jobs`` (the keys derived from a job id — result, late result, markers — follow),
other keys it owns in ``keys.session_keys`` (output links, spills, webhook deliveries, passthrough
outputs waiting for the session log), its payload digests in ``keys.session_payloads`` (each
digest's sessions in ``keys.payload_sessions``, so a payload another session still uses is
kept). Forgetting reads the index instead of scanning the keyspace: its cost is the session's
size. The tombstone ``keys.forgotten(session)`` holds when the session was forgotten (ms); work
queued before that (a passthrough output, a webhook) is dropped rather than written.
"""

from __future__ import annotations

from tersify.store import keys
from tersify.store.commands import Command, command


def _kept(key: str, ttl_seconds: int) -> tuple[Command, Command]:
    """Extend ``key``'s TTL to ``ttl_seconds`` unless it already lives longer."""
    return (
        command("expire", key, ttl_seconds, gt=True),
        command("expire", key, ttl_seconds, nx=True),
    )


def index_job(session_id: str, job_id: str, ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that name ``job_id`` as the session's."""
    index = keys.session_jobs(session_id)
    return (command("sadd", index, job_id), *_kept(index, ttl_seconds))


def index_keys(session_id: str, owned: tuple[str, ...], ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that name the keys ``owned`` as the session's."""
    index = keys.session_keys(session_id)
    return (command("sadd", index, *owned), *_kept(index, ttl_seconds))


def index_payload(session_id: str, digest: str, ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that name payload ``digest`` as used by the session (and the session as one
    of the payload's users)."""
    mine, users = keys.session_payloads(session_id), keys.payload_sessions(digest)
    return (
        command("sadd", mine, digest),
        *_kept(mine, ttl_seconds),
        command("sadd", users, session_id),
        *_kept(users, ttl_seconds),
    )


def dropped(tombstone: object, since_ms: int) -> bool:
    """Whether work queued at ``since_ms`` belongs to a session forgotten since (``tombstone`` is
    the value of ``keys.forgotten``, or None)."""
    if tombstone is None:
        return False
    text = tombstone.decode() if isinstance(tombstone, bytes) else str(tombstone)
    return not text.isdigit() or int(text) >= since_ms

"""What a session owns, indexed as it is written, and the tombstone forgetting leaves.

A session's hash (``keys.session``) names everything Redis holds for it, one field each: its job
ids (``j:JOB``; the keys derived from a job id — record, progress, result, late result —
follow), the other keys it owns (``k:KEY``: output links, spills, webhook deliveries,
passthrough outputs waiting for the session log, the gateway's replacements) and the payloads
it used (``p:DIGEST``; ``tersify.store.payloads`` says when another session still uses one).
The same hash holds the session's gate (``gate``, ``tersify.gate``) and when the hash expires
(``exp``), so the script that stores a job writes all of it in one command and extends the TTL
only when it runs low. Forgetting reads the hash instead of scanning the keyspace: its cost is
the session's size. Sessions indexed before this layout kept three sets (``LEGACY_INDEX``);
forgetting reads those too. The tombstone ``keys.forgotten(session)`` holds when the session
was forgotten (ms); work queued before that (a passthrough output, a webhook) is dropped rather
than written.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from tersify.store import keys
from tersify.store.commands import Command, command

JOB: Final = "j:"
KEY: Final = "k:"
PAYLOAD: Final = "p:"
GATE: Final = "gate"
EXPIRES: Final = "exp"

LEGACY_INDEX: Final = (keys.session_jobs, keys.session_keys, keys.session_payloads)
"""The sets a session's index was before its hash: job ids, owned keys, payload digests."""


def fields(
    jobs: Iterable[str] = (), owned: Iterable[str] = (), digests: Iterable[str] = ()
) -> list[str]:
    """The index fields naming ``jobs``, ``owned`` keys and payload ``digests``."""
    return [
        *(JOB + j for j in jobs),
        *(KEY + k for k in owned),
        *(PAYLOAD + d for d in digests),
    ]


def index(
    session_id: str,
    ttl_seconds: int,
    *,
    jobs: Iterable[str] = (),
    owned: Iterable[str] = (),
    digests: Iterable[str] = (),
) -> tuple[Command, ...]:
    """The commands that name ``jobs``, ``owned`` keys and payload ``digests`` as the session's
    and keep its hash at least ``ttl_seconds`` (the writers outside the job scripts)."""
    key = keys.session(session_id)
    names = fields(jobs, owned, digests)
    return (
        command("hset", key, mapping=dict.fromkeys(names, "")),
        command("expire", key, ttl_seconds, gt=True),
        command("expire", key, ttl_seconds, nx=True),
    )


def index_keys(session_id: str, owned: tuple[str, ...], ttl_seconds: int) -> tuple[Command, ...]:
    """The commands that name the keys ``owned`` as the session's."""
    return index(session_id, ttl_seconds, owned=owned)


@dataclass
class Owned:
    """What a session's index names (its hash and the sets before it), as forgetting reads it."""

    jobs: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    digests: set[str] = field(default_factory=set)

    def add(self, name: str) -> None:
        """Take one field of the session's hash."""
        for prefix, into in ((JOB, self.jobs), (KEY, self.keys), (PAYLOAD, self.digests)):
            if name.startswith(prefix):
                into.add(name[len(prefix) :])


def dropped(tombstone: object, since_ms: int) -> bool:
    """Whether work queued at ``since_ms`` belongs to a session forgotten since (``tombstone`` is
    the value of ``keys.forgotten``, or None)."""
    if tombstone is None:
        return False
    text = tombstone.decode() if isinstance(tombstone, bytes) else str(tombstone)
    return not text.isdigit() or int(text) >= since_ms

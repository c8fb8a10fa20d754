"""The re-read signal as Redis holds it: summaries stored, re-read, and reads of their outputs.

Producers count reads (``tersify.client.rereads``) and workers count stored summaries, both
under ``TOOL_TYPE|METHOD``; this module reads them back for the scrape-time collector and for
``tersify status``. Every value is cluster-wide: all workers export the same numbers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import redis

from tersify.client.rereads import split_field
from tersify.store import keys
from tersify.worker.metrics.snapshot import text


@dataclass(frozen=True, slots=True)
class Kind:
    """Counts for one tool type and method since Redis started keeping them."""

    tool_type: str
    method: str
    summaries: int
    reread: int
    reads: int

    @property
    def share(self) -> float:
        """Summaries re-read over summaries stored (0 with none stored)."""
        return self.reread / self.summaries if self.summaries else 0.0


def kinds(client: redis.Redis) -> list[Kind]:
    """Every tool type and method with a count, sorted; one round trip."""
    with client.pipeline(transaction=False) as pipe:
        for key in (keys.SUMMARIES, keys.REREAD_SUMMARIES, keys.REREADS):
            pipe.hgetall(key)
        stored, reread, reads = (
            {text(k): int(v) for k, v in reply.items()} for reply in pipe.execute()
        )
    found = []
    for name in sorted(set(stored) | set(reread) | set(reads)):
        tool_type, method = split_field(name)
        found.append(
            Kind(tool_type, method, stored.get(name, 0), reread.get(name, 0), reads.get(name, 0))
        )
    return found


def share(client: redis.Redis, now: float, window: float) -> dict[str, Any]:
    """Of the summaries finished in the last ``window`` seconds, how many were read back so far,
    and every kind's counts since counting began."""
    with client.pipeline(transaction=False) as pipe:
        pipe.zcount(keys.RECENT_COMPLETIONS, now - window, "+inf")
        pipe.zcount(keys.REREADS_RECENT, now - window, "+inf")
        finished, reread = (int(n) for n in pipe.execute())
    found = kinds(client)
    summaries = sum(k.summaries for k in found)
    reread_total = sum(k.reread for k in found)
    return {
        "window_seconds": window,
        "summaries": finished,
        "reread": reread,
        "share": round(reread / finished, 4) if finished else 0.0,
        "total": {
            "summaries": summaries,
            "reread": reread_total,
            "reads": sum(k.reads for k in found),
            "share": round(reread_total / summaries, 4) if summaries else 0.0,
        },
        "by_kind": [{**asdict(k), "share": round(k.share, 4)} for k in found],
    }

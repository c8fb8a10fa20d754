"""The ``Warning`` header of a job accepted while no live worker serves its queue."""

from __future__ import annotations

from tersify.client import AsyncProducer
from tersify.client.liveness import no_worker_warning
from tersify.contract import Queue

WARNING_DOC = {
    "Warning": {
        "description": 'Set when no live worker serves the job\'s queue: `199 tersify "…"`.',
        "schema": {"type": "string"},
    }
}


async def unserved(producer: AsyncProducer, queue: Queue) -> str | None:
    """The ``Warning`` header's value when no live worker takes jobs from ``queue``, else None."""
    if await producer.live_workers(queue) > 0:
        return None
    # warn-code 199 is the HTTP "miscellaneous warning"; the agent is tersify
    return f'199 tersify "{no_worker_warning(queue)}"'

"""Redeliver the jobs of workers that died: unacknowledged messages past the visibility timeout.

Kombu's Redis transport keeps a delivered, unacknowledged message in its ``unacked`` hash until
it is acknowledged; a scan puts messages older than the visibility timeout back on their queue.
Kombu runs that scan only about every 100 seconds, whatever the timeout, so tersify's workers
also run it a quarter of the timeout apart: a killed worker's job comes back within about
1.25 × ``TERSIFY_VISIBILITY_TIMEOUT_SECONDS``. Kombu's own mutex keeps concurrent scans apart.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from tersify.settings import Settings

RESTORE_BATCH = 100


def restore_abandoned(app: Celery) -> None:
    """Put unacknowledged messages older than the visibility timeout back on their queues."""
    with app.connection_for_read() as conn:
        conn.ensure_connection(max_retries=0)  # no retries here: they would stall lease renewals
        channel: Any = conn.default_channel  # kombu's Redis channel; its QoS owns the scan
        channel.qos.restore_visible(num=RESTORE_BATCH, interval=1)


def restore_interval(settings: Settings) -> float:
    """How often to scan: a quarter of the visibility timeout, at least every second."""
    return max(1.0, settings.visibility_timeout_seconds / 4)

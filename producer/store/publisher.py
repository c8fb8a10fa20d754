"""Queue entries for the broker, by task name, with no Celery or kombu on the producer side.

A job is one entry pushed (``LPUSH``, by either producer face on its own client) onto the Redis
list named after its queue, in the format the workers'
Celery (kombu's Redis transport, Celery's message protocol 2) reads: a JSON envelope whose
``body`` is the base64 of ``[args, kwargs, embed]``. Writing it directly keeps Celery out of
every backend that only enqueues; the workers check each entry whole before kombu sees it
(``worker/broker/envelope.py``), and the integration tests run these entries through real
workers.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import uuid
from typing import Any

from tersify.contract import Queue
from tersify.settings import Settings
from tersify.store import redis_url
from tersify.store.commands import Command, command

# No linked tasks, ever: the worker refuses entries that carry any.
_EMBED = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def broker_options(settings: Settings) -> dict[str, Any]:
    """Redis transport options shared by producers and workers (they must agree)."""
    return {
        "visibility_timeout": settings.visibility_timeout_seconds,
        "socket_timeout": 15.0,
        "socket_connect_timeout": 5.0,
        **redis_url.broker_sentinel_options(settings),
    }


def entry(
    task: str,
    message: dict[str, Any],
    queue: Queue,
    task_id: str,
    extra_headers: dict[str, str] | None = None,
) -> bytes:
    """The queue entry that asks a worker to run ``task`` on ``message`` (protocol 2);
    ``extra_headers`` (a trace context) join the message's headers."""
    body = json.dumps([[message], {}, _EMBED]).encode()
    # argsrepr (what `celery inspect`, events and Flower show) names the job only: a job's
    # command and query may hold secrets.
    shown = f"(<job {task_id}>,)"
    headers = {
        "lang": "py",
        "task": task,
        "id": task_id,
        "shadow": None,
        "eta": None,
        "expires": None,
        "group": None,
        "group_index": None,
        "retries": 0,
        "timelimit": [None, None],
        "root_id": task_id,
        "parent_id": None,
        "argsrepr": shown,
        "kwargsrepr": "{}",
        "origin": f"{os.getpid()}@{socket.gethostname()}",
        "ignore_result": False,
        **(extra_headers or {}),
    }
    envelope = {
        "body": base64.b64encode(body).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": headers,
        "properties": {
            "correlation_id": task_id,
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue.value},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    return json.dumps(envelope).encode()


def push(
    task: str,
    message: dict[str, Any],
    queue: Queue,
    task_id: str,
    extra_headers: dict[str, str] | None = None,
) -> Command:
    """The command that publishes ``message`` to ``task`` on ``queue`` (see ``entry``)."""
    return command("lpush", queue.value, entry(task, message, queue, task_id, extra_headers))

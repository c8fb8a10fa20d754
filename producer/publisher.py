"""Publishing jobs to the broker by task name: the producer never imports worker code."""

from __future__ import annotations

from typing import Any

from celery import Celery
from kombu.exceptions import OperationalError

from producer import redis_url
from producer.contract import Queue
from producer.errors import RedisUnavailableError
from producer.settings import Settings


def broker_options(settings: Settings) -> dict[str, Any]:
    """Redis transport options shared by producers and workers (they must agree)."""
    return {
        "visibility_timeout": settings.visibility_timeout_seconds,
        "socket_timeout": 15.0,
        "socket_connect_timeout": 5.0,
        **redis_url.broker_sentinel_options(settings),
    }


class Publisher:
    """A Celery client app that only sends messages: JSON, no result backend."""

    def __init__(self, settings: Settings) -> None:
        self._app = Celery(
            "tersify-producer", broker=redis_url.broker_url(settings), set_as_current=False
        )
        # Under Sentinel a publish waits out a fail-over, as every other command does.
        sentinel = redis_url.sentinel_target(settings.redis_url) is not None
        self._app.conf.update(
            task_serializer="json",
            accept_content=["json"],
            task_ignore_result=True,
            broker_transport_options=broker_options(settings),
            broker_connection_retry_on_startup=True,
            task_publish_retry_policy={
                "max_retries": redis_url.failover_retries(settings) if sentinel else 2,
                "interval_start": 0.05,
                "interval_step": 0.2,
                "interval_max": 0.5,
            },
        )

    def publish(
        self,
        task: str,
        message: dict[str, Any],
        queue: Queue,
        task_id: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Send one message; raise ``RedisUnavailableError`` when the broker cannot take it.

        The message's ``argsrepr`` (what ``celery inspect``, events and Flower show) names the
        job only: the command and query a job carries may hold secrets, and Celery's default,
        a ``saferepr`` of the arguments, was also a fifth of the producer's CPU per job.
        ``headers`` (the trace context) travel in the message's headers.
        """
        try:
            self._app.send_task(
                task,
                args=[message],
                queue=queue.value,
                task_id=task_id,
                argsrepr=f"(<job {task_id}>,)",
                kwargsrepr="{}",
                headers=headers or None,
            )
        except (OperationalError, ConnectionError, OSError) as exc:
            raise RedisUnavailableError(f"could not publish {task}: {type(exc).__name__}") from None

    def close(self) -> None:
        """Release the broker connection pool."""
        self._app.close()

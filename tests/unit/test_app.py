"""The worker app's Celery configuration, as the pool threads see it."""

from __future__ import annotations

import threading

from celery.backends.base import DisabledBackend

from tersify.settings import Settings
from tersify.worker.broker.app import create_app


def test_every_pool_thread_shares_one_disabled_result_backend() -> None:
    app = create_app(Settings())
    seen: list[object] = []

    def look() -> None:
        seen.append(app.backend)

    for _ in range(4):  # one after another: the first builds it, the others must reuse it
        thread = threading.Thread(target=look)
        thread.start()
        thread.join(10)
    seen.append(app.backend)
    assert len(seen) == 5
    assert isinstance(seen[0], DisabledBackend)
    assert all(backend is seen[0] for backend in seen)

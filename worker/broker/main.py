"""The app Celery's own command line loads: ``celery -A worker.broker.main ...``.

``tersify worker`` builds its app itself; this module exists for the tools that need a
module-level app (the gevent launcher, ``celery inspect``, Flower) and is imported by nothing.
"""

from __future__ import annotations

from tersify.settings import Settings
from tersify.worker.broker.app import create_app

app = create_app(Settings())

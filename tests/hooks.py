"""A loopback webhook receiver for tests: what it answers depends on the last path segment.

``…/ok`` answers 200; ``…/fail`` 500; ``…/hold`` holds the request until ``release()`` (then
200); ``…/drip`` answers 200 and drips its body a byte every 0.2 s for up to ``DRIP_SECONDS``;
``…/huge`` answers 200 with a 200 MB body, sent as fast as the client takes it, and counts the
bytes it got out before the client hung up. Every request is recorded with its raw target.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DRIP_SECONDS = 40.0
HUGE_BYTES = 200 * 1024 * 1024


@dataclass
class Hit:
    """One request the receiver got."""

    target: str
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)
    answered: int | None = None
    ended: float | None = None

    @property
    def job_id(self) -> str | None:
        """The ``job_id`` of the posted result, if the body is one."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return None
        return value.get("job_id") if isinstance(value, dict) else None


class HookReceiver:
    """A threaded HTTP server on 127.0.0.1 answering by path (see the module)."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.huge_sent = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        """The full URL of ``path`` on this receiver."""
        return self.base + path

    def release(self) -> None:
        """Answer every held request (and every later one) at once."""
        self._released.set()

    def close(self) -> None:
        """Stop serving."""
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def of(self, mode: str) -> list[Hit]:
        """The requests whose last path segment was ``mode``."""
        return [hit for hit in self.hits if hit.target.split("?")[0].endswith("/" + mode)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hit = Hit(self.path, dict(self.headers), body)
                with receiver._lock:
                    receiver.hits.append(hit)
                mode = self.path.split("?")[0].rsplit("/", 1)[-1]
                with suppress(OSError):  # the client hung up: what a sender does with a bad answer
                    receiver._answer(self, mode, hit)
                hit.ended = time.monotonic()

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def _answer(self, handler: BaseHTTPRequestHandler, mode: str, hit: Hit) -> None:
        if mode == "hold":
            self._released.wait(60)
        status = 500 if mode == "fail" else 200
        length = {"drip": int(DRIP_SECONDS * 5), "huge": HUGE_BYTES}.get(mode, 0)
        handler.send_response(status)
        handler.send_header("Content-Length", str(length))
        handler.end_headers()
        hit.answered = status
        if mode == "drip":
            for _ in range(length):
                handler.wfile.write(b".")
                handler.wfile.flush()
                time.sleep(0.2)
        elif mode == "huge":
            chunk = b"\0" * (1024 * 1024)
            for _ in range(HUGE_BYTES // len(chunk)):
                handler.wfile.write(chunk)
                self.huge_sent += len(chunk)

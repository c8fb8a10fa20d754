"""What start-up checks find, and the probes a provider's own checks share.

``tersify doctor`` and the start-up checks (``tersify.worker.preflight``) print ``Finding``s;
each provider contributes its own (a missing key, an unreachable base URL) from here, below
the preflight, so a provider's module says everything about it.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from tersify.errors import os_reason

PROBE_SECONDS = 3.0
"""Longest wait for a model API's host to accept a connection at start."""


class Level(StrEnum):
    """How much a finding matters."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Finding:
    """One check's verdict: what was checked, how it went, and what to do about it."""

    check: str
    level: Level
    detail: str


def unreachable(url: str, timeout: float) -> str | None:
    """Why no TCP connection to ``url``'s host and port can be made; None when one can.

    No request is sent, so nothing is billed, counted or recorded.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an http(s) URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return None
    except TimeoutError:
        return "timed out"
    except (OSError, ValueError) as exc:
        return os_reason(exc) or str(exc) or type(exc).__name__


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (``is_loopback_host``)."""
    return is_loopback_host(urlsplit(url).hostname or "")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is this machine: ``localhost``, 127.0.0.0/8 or ``::1``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False

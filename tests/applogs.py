"""Generated application logs: time-stamped lines in the formats services write, with Python
tracebacks among them (the tests' own data, made by seed)."""

from __future__ import annotations

import random
from collections.abc import Callable

Stamp = Callable[[int], str]

STAMPS: dict[str, Stamp] = {
    "python logging": lambda ms: f"2026-03-{1 + ms // 86_400_000:02d} {_clock(ms)},{ms % 1000:03d}",
    "iso 8601": lambda ms: f"2026-03-{1 + ms // 86_400_000:02d}T{_clock(ms)}.{ms % 1000:03d}Z",
    "bracketed": lambda ms: f"[2026-03-{1 + ms // 86_400_000:02d} {_clock(ms)}]",
    "syslog": lambda ms: f"Mar {1 + ms // 86_400_000:2d} {_clock(ms)} web-1 billing[4242]:",
    "go log": lambda ms: f"2026/03/{1 + ms // 86_400_000:02d} {_clock(ms)}",
    "glog": lambda ms: f"I03{1 + ms // 86_400_000:02d} {_clock(ms)}.{ms % 1000:03d}000",
}

EXCEPTION = "ZeroDivisionError: division by zero"


def _clock(ms: int) -> str:
    return f"{ms // 3_600_000 % 24:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}"


def app_log(lines: int, stamp: Stamp, *, seed: int = 0, tracebacks: int = 3) -> str:
    """A service's log of about ``lines`` lines: requests, and ``tracebacks`` failures spread
    through it, each an ERROR line, a traceback and its exception line."""
    rnd = random.Random(seed)
    failures = {lines * (k + 1) // (tracebacks + 1) for k in range(tracebacks)}
    out: list[str] = []
    ms = 0
    while len(out) < lines:
        ms += rnd.randint(1, 900)
        if len(out) in failures:
            failures.discard(len(out))
            out += [
                f"{stamp(ms)} ERROR billing.worker: invoice {rnd.randint(1, 99_999)} failed",
                "Traceback (most recent call last):",
                f'  File "/srv/billing/worker.py", line {rnd.randint(10, 400)}, in run',
                "    total = compute_total(items)",
                f'  File "/srv/billing/totals.py", line {rnd.randint(10, 99)}, in compute_total',
                "    return sum(i.price for i in items) / len(items)",
                EXCEPTION,
            ]
            continue
        level = rnd.choice(("INFO",) * 8 + ("DEBUG", "WARNING"))
        out.append(
            f"{stamp(ms)} {level} http.server: GET /api/v1/items/{rnd.randint(1, 9999)} "
            f"200 {rnd.randint(1, 900)}ms"
        )
    return "\n".join(out) + "\n"

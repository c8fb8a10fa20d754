"""Calls made side by side on threads: the windows of one job, each through the call path.

A job's windows are asked at once from the job's own thread of the worker; each call keeps
the caller's logging context (its job id), and a ``ProviderError`` is that call's answer, not
the end of the others.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from tersify.errors import ProviderError

T = TypeVar("T")

MAX_PARALLEL = 16
"""Calls of one job in flight at once (the shared rate limit paces them too)."""
WINDOW_SHARE = 2 / 3
"""Of the time a job has left, what its windows may take; what reads their answers (a
summary's merge, a compaction's summary) has the rest."""


def fan_out(
    calls: Sequence[Callable[[], T]], parallel: int = MAX_PARALLEL
) -> list[T | ProviderError]:
    """Every call's answer (or its ``ProviderError``), in order, ``parallel`` at a time."""
    if not calls:
        return []
    found: list[T | ProviderError] = []
    with ThreadPoolExecutor(min(parallel, len(calls)), "tersify-window") as pool:
        futures = [pool.submit(contextvars.copy_context().run, call) for call in calls]
        for future in futures:
            try:
                found.append(future.result())
            except ProviderError as error:
                found.append(error)
    return found

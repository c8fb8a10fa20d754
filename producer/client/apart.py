"""Large compute steps run in a process of their own, for the asyncio face.

A thread keeps the event loop free only between Python bytecodes: one C call on a 20 MB text
(``json.loads`` of the request, a regex over the output, ``model_dump_json`` of a passthrough)
keeps the GIL for tens of milliseconds, and every other client of the process waits behind it.
A ``Compute`` step marked ``apart`` is a function with no effect but its answer, on arguments
that pickle; when its text is at least ``APART_CHARS`` long, ``Apart`` runs it in a child
process, so the server's own interpreter only copies the arguments out and the answer back.

The child is a fresh interpreter (``spawn``: nothing of the server's threads, sockets or
connections is copied into it), started at the first large step and kept. One that died is
replaced and the step run on a thread instead; an exception that cannot cross the process
boundary intact is raised again by running the step on a thread, so a caller always sees the
exception the step itself raises.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import structlog

APART_CHARS = 2 * 1024 * 1024
"""Steps on at least this much text run in the child process (about 10 ms of one C call)."""

_log = structlog.get_logger("tersify.producer")


class Apart:
    """One child process for large compute steps, started when first needed."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        """Whether the child process has been started."""
        return self._pool is not None

    async def run(self, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """``function(*args)``, in the child process (on a thread when it cannot be there)."""
        loop = asyncio.get_running_loop()
        try:
            done, answer = await loop.run_in_executor(self._executor(), _call, function, args)
        except BrokenProcessPool:
            _log.warning("compute_process_replaced", reason="it died", function=_name(function))
            self.close()
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _log.warning("compute_not_apart", function=_name(function), error=type(exc).__name__)
        else:
            if done:
                return answer
            if isinstance(answer, BaseException):
                raise answer
        return await asyncio.to_thread(function, *args)

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=context)
        return self._pool

    def close(self) -> None:
        """Stop the child process, if one was started."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _call(function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[bool, Any]:
    """In the child: ``(True, answer)``, or ``(False, exception)`` when it pickles back intact,
    else ``(False, None)``: the caller runs the step again on a thread to raise it."""
    try:
        return True, function(*args)
    except Exception as exc:  # handed to the caller, or raised again there
        try:
            again = pickle.loads(pickle.dumps(exc))  # noqa: S301  # our own bytes
        except Exception:  # not picklable: the caller raises it itself
            return False, None
        same = type(again) is type(exc) and str(again) == str(exc)
        return False, exc if same else None


def _name(function: Callable[..., Any]) -> str:
    return getattr(function, "__qualname__", type(function).__name__)
